import { LedgerError } from '../errors.js';
import type { CliIO } from './common.js';

export interface ProcessIO extends CliIO {
  /** True when nothing written to stdout or stderr is still waiting to be flushed. */
  drained(): boolean;
}

/** The real process's I/O for the CLI. */
export function processIO(): ProcessIO {
  let wroteErr = false;
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => {
      wroteErr = true;
      process.stderr.write(t);
    },
    // stdout is asked directly (cac prints --help and --version there itself); stderr only when
    // written, since asking creates its stream.
    drained: () => process.stdout.writableLength === 0 && (!wroteErr || process.stderr.writableLength === 0),
    env: process.env,
    cwd: process.cwd(),
    // A getter: touching process.stderr creates its stream, and for a pipe that loads the whole
    // net module (about 1.5 ms of every start). Only a long audit asks.
    get isTTY() {
      return process.stderr.isTTY === true;
    },
    readStdin: async () => {
      if (process.stdin.isTTY) return '';
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      // Policy: stdin is refused, not repaired: an invalid UTF-8 byte would otherwise become
      // U+FFFD inside a signed record.
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        throw new LedgerError('INPUT_JSON', 'stdin is not valid UTF-8; payloads must be UTF-8 JSON, one object per line');
      }
    },
  };
}
