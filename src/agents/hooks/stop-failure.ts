// Why a Claude Code session stopped (issue 24.4): an API error (a usage or rate limit) ended its
// turn. Claude Code fires StopFailure and does not wait for it (in `claude -p` the session's end
// kills the hook within a moment: seen with the real client 2.1.328), so two ways lead to the
// signed "interrupted" note, whichever comes first: the StopFailure hook marks the session here
// (in the per-user state directory) and hands the note to a detached copy of itself; the
// session's SessionEnd hook, which Claude Code waits for, takes that mark, or else reads the API
// error from the session's own transcript. Used by cli/commands/agents-run.ts only.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { sha256Hex } from '../../canonical.js';
import { currentBoundary } from '../../fs/boundary.js';
import { mkdirDurable, replaceFileUnsynced } from '../../fs/durable.js';
import { realFileOps } from '../../fs/ops.js';
import { stateDirFrom } from '../../store/state-dir.js';
import type { Payload } from './events.js';

const parse = (text: string): Payload | null => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : null;
  } catch {
    return null;
  }
};

/** Where a StopFailure is marked for its session's SessionEnd (the per-user state directory). */
function stopFailureMark(env: Record<string, string | undefined>, session: unknown): string | null {
  if (typeof session !== 'string' || session === '' || session.length > 200) return null;
  return join(stateDirFrom(env), 'hooks', `stop-failure-${sha256Hex(session).slice(0, 32)}.json`);
}

export function markStopFailure(env: Record<string, string | undefined>, payload: Payload): void {
  const path = stopFailureMark(env, payload.session_id);
  if (!path) return;
  try {
    // Through the seam (fs/confine.ts): no link followed in the state directory (issue 23).
    mkdirDurable(realFileOps, dirname(path), 0o700);
    replaceFileUnsynced(realFileOps, dirname(path), basename(path), Buffer.from(JSON.stringify({ error: payload.error ?? null, error_details: payload.error_details ?? null, last_assistant_message: typeof payload.last_assistant_message === 'string' ? payload.last_assistant_message.slice(0, 1000) : null, at: new Date().toISOString() })), 0o600);
  } catch {
    /* best effort: the detached copy still writes the note */
  }
}

/** The StopFailure mark of this session, taken (read and removed); null when there is none, or it is older than 10 minutes. */
export function takeStopFailure(env: Record<string, string | undefined>, session: unknown): Payload | null {
  const path = stopFailureMark(env, session);
  if (!path) return null;
  try {
    const mark = parse(realFileOps.readFile(path).toString('utf8'));
    realFileOps.unlink(path);
    return mark && typeof mark.at === 'string' && Date.now() - Date.parse(mark.at) < 600_000 ? mark : null;
  } catch {
    return null;
  }
}

/**
 * Why a Claude Code session ended, from its own transcript: an API error (a usage or rate limit)
 * on its last assistant entry (`isApiErrorMessage`, `error`). Claude Code 2.1 kills a StopFailure
 * hook at once when `claude -p` exits, before it can write anything (seen with the real client),
 * so its SessionEnd, which it waits for, reads this. Policy: read only, bounded (the last 64 KiB),
 * a regular `.jsonl` file, never through a link; anything unexpected is "not interrupted".
 */
export function interruptedFromTranscript(path: unknown): Payload | null {
  if (typeof path !== 'string' || !isAbsolute(path) || !path.endsWith('.jsonl')) return null;
  try {
    // Never through a link, never blocking; and, for a ledger run for another user, only a file
    // of that user's (issue 23: a caller names this path; the key owner reads nothing else for it).
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    let text: string;
    try {
      const st = fstatSync(fd);
      const caller = currentBoundary().caller;
      if (!st.isFile() || (caller !== null && st.uid !== caller.uid)) return null;
      const n = Math.min(st.size, 64 * 1024);
      const buf = Buffer.alloc(n);
      readSync(fd, buf, 0, n, st.size - n);
      text = buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
    for (const line of text.split('\n').reverse()) {
      const e = parse(line);
      if (!e || e.type !== 'assistant') continue;
      if (e.isApiErrorMessage !== true) return null;
      const content = (e.message as { content?: { type?: string; text?: string }[] } | undefined)?.content;
      const said = Array.isArray(content) ? content.find((c) => c?.type === 'text' && typeof c.text === 'string')?.text : undefined;
      return { hook_event_name: 'StopFailure', error: typeof e.error === 'string' ? e.error : 'unknown', ...(said ? { last_assistant_message: said.slice(0, 1000) } : {}) };
    }
  } catch {
    /* not interrupted, as far as can be told */
  }
  return null;
}

