// A witness's memory of each log: the latest checkpoint it cosigned, as the signed note it
// answered with (the log's signatures it verified and its own cosignature), one file per log,
// `logs/<hex SHA-256 of the origin>` in its state folder. Written with the durable recipe
// (../fs/durable.ts) before the witness answers, so that a crash never makes it forget a size it
// cosigned (tlog-witness: "The witness MUST persist the new checkpoint before responding").
import { join } from 'node:path';
import { LedgerError } from '../errors.js';
import { mkdirDurable, replaceFileDurable } from '../fs/durable.js';
import { readRegularFileUpTo, realFileOps } from '../fs/ops.js';
import { parseCheckpoint } from '../tlog/checkpoint.js';
import { MAX_NOTE_BYTES, parseNote } from '../tlog/note.js';
import type { LogState } from '../tlog/witness-protocol.js';

export const KEY_FILE = 'witness.key';
export const CONFIG_FILE = 'witness.conf';
const LOGS = 'logs';

/** tlog-witness: a log's monitoring path and state name is the lowercase hex SHA-256 of its origin. */
export function originHash(origin: string): string {
  return process.getBuiltinModule('node:crypto').hash('sha256', origin, 'hex');
}

export interface StoredLog { state: LogState; note: string }

/**
 * The latest cosigned checkpoint of `origin`, or null when this witness never cosigned one.
 * Policy: a state file that does not parse, or names another origin, is corrupt: the witness
 * refuses that log (OP_CORRUPT, answered 500) rather than start over from size 0, which would
 * let it cosign a rewound tree.
 */
export function readLogState(dir: string, origin: string): StoredLog | null {
  const path = join(dir, LOGS, originHash(origin));
  let bytes: Buffer | null;
  try {
    bytes = readRegularFileUpTo(path, MAX_NOTE_BYTES);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    if (bytes === null) throw new Error('it is too large');
    const note = parseNote(bytes);
    const cp = parseCheckpoint(note.text);
    if (cp.origin !== origin) throw new Error(`it names ${cp.origin}`);
    return { state: { origin, size: cp.size, root: cp.root }, note: bytes.toString('utf8') };
  } catch (e) {
    throw new LedgerError('OP_CORRUPT', `witness state ${path} is not a cosigned checkpoint of ${origin}: ${(e as Error).message}`, { path }, 'restore it from a backup; the witness will not cosign this log until then');
  }
}

/** Makes the logs folder durably (once, when the witness starts). */
export function ensureLogsDir(dir: string): void {
  mkdirDurable(realFileOps, join(dir, LOGS), 0o700);
}

/** Replaces the state of `origin` with `note` durably (steps 1-5 of the recipe). */
export function writeLogState(dir: string, origin: string, note: string): void {
  replaceFileDurable(realFileOps, join(dir, LOGS), originHash(origin), Buffer.from(note, 'utf8'), 0o644);
}
