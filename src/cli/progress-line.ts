// The progress line of a long scan on a terminal (../progress.ts): redrawn in place on stderr,
// only once the command has run a second, at most four times a second, and erased before the
// command's own output. Policy: only on a terminal (io.isTTY): a script's stderr gets no
// carriage returns. Human text only: the line names the operation and counts, never record text.
import { setProgressSink } from '../progress.js';
import type { CliIO } from './commands/common.js';

/** When the line first shows and how often it is redrawn (tests pass zeros). */
export interface ProgressTiming { afterMs: number; everyMs: number }

export function withProgressLine<T>(io: CliIO, run: () => Promise<T>, timing: ProgressTiming = { afterMs: 1000, everyMs: 250 }): Promise<T> {
  if (!io.isTTY) return run();
  const started = Date.now();
  let last = -Infinity;
  let shown = false;
  const { stdout, stderr } = io;
  const was = setProgressSink((what, done, total, unit) => {
    const t = Date.now();
    if (t - started < timing.afterMs || t - last < timing.everyMs) return;
    last = t;
    const pct = total > 0 ? ` (${Math.min(100, Math.floor((100 * done) / total))}%)` : '';
    shown = true;
    stderr.call(io, `\r\x1b[K${what}: ${done} of ${total} ${unit}${pct}`);
  });
  // The command's own output erases the line first, wherever it comes from, so no output ever
  // starts behind a half-drawn progress line (issue 26).
  const erase = () => {
    if (shown) stderr.call(io, '\r\x1b[K');
    shown = false;
  };
  const own = Object.getOwnPropertyDescriptors(io);
  io.stdout = (text) => {
    erase();
    stdout.call(io, text);
  };
  io.stderr = (text) => {
    erase();
    stderr.call(io, text);
  };
  const clear = () => {
    setProgressSink(was);
    erase();
    for (const k of ['stdout', 'stderr'] as const) {
      if (own[k]) Object.defineProperty(io, k, own[k]);
      else delete (io as Partial<CliIO>)[k];
    }
  };
  return run().then(
    (v) => {
      clear();
      return v;
    },
    (e: unknown) => {
      clear();
      throw e;
    },
  );
}
