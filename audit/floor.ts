// The trust floor (SPEC 8): {"v":1,"genesis","seq","id","offset"}, a small file the consumer
// keeps outside the ledger. Reading it strictly and placing it against HEAD (does record `seq`
// still have that id?). The auditor only reads: an advanced floor is reported, and the caller
// writes it with the one durable recipe (src/ledger.ts keepFloor, over src/fs/durable.ts).
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { relative, resolve, isAbsolute } from 'node:path';
import { isCanonicalText, parseJsonStrict, recordId } from '../src/canonical.js';
import { LedgerError, ioError } from '../src/errors.js';
import { MAX_LINE_BYTES, floorProblems, recordProblems, type Head, type LedgerRecord, type TrustFloor } from '../src/record.js';
import { shortId } from './findings.js';
import { decodeLine, readAt } from './lines.js';

/** Reads a floor file; null when it does not exist (SPEC 8: then the audit starts at genesis). */
export function readFloor(path: string): TrustFloor | null {
  let text: string;
  let fd: number;
  try {
    // Policy: opened without blocking and read only if it is a regular file: a FIFO or device
    // given as the floor is refused at once (exit 3), never waited on.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'read floor file', path);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new LedgerError('OP_NOT_REGULAR', `floor file ${path} is not a regular file (a directory, FIFO, socket or device)`, { path });
    text = readFileSync(fd, 'utf8');
  } catch (e) {
    throw ioError(e, 'read floor file', path);
  } finally {
    closeSync(fd);
  }
  // The consumer's own file, but strict all the same: a floor that means two things is no floor.
  const value = parseJsonStrict(text, `floor file ${path}`);
  const problems = floorProblems(value);
  if (problems.length) {
    throw new LedgerError('INPUT_SCHEMA', `floor file ${path} is not a floor: ${problems[0]}`, { path, problems });
  }
  return value as TrustFloor;
}

/** True when `path` lies inside `dir` (the floor must live outside the ledger it vouches for). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The bytes at the floor's offset up to (not including) the next newline, or null if none. */
export function readFloorLine(fd: number, floor: TrustFloor, fileSize: number): Buffer | null {
  if (floor.offset >= fileSize) return null;
  // Most lines are short: try 64 KiB first, then the whole 1 MiB a line may take.
  for (const max of [65536, MAX_LINE_BYTES]) {
    const bytes = readAt(fd, floor.offset, Math.min(max, fileSize - floor.offset));
    const nl = bytes.indexOf(0x0a);
    if (nl >= 0) return Buffer.from(bytes.subarray(0, nl));
    if (bytes.length < max) return null;
  }
  return null;
}

export interface FloorRecord {
  seq: number;
  id: string;
  ts: string;
  /** Byte offset just past the floor record's newline: where the audit resumes. */
  next: number;
}

/** Where a floor stands against HEAD and the file. */
export type FloorPlacement =
  | { kind: 'none' }
  | { kind: 'unknown' } // HEAD is unusable; no floor can be placed
  | { kind: 'other-ledger'; genesis: string }
  | { kind: 'rollback' }
  | { kind: 'fork'; actual: string; reason: string }
  | { kind: 'ok'; record: FloorRecord };

/**
 * Places the floor (SPEC 8): the ledger must be the floor's (same genesis), HEAD must not be
 * below it (else a rollback), and the published line at its offset must be record `seq` with the
 * floor's id (else a fork). Pure: `line` was read by the caller.
 */
export function placeFloor(floor: TrustFloor | null, head: Head | null, line: Buffer | null): FloorPlacement {
  if (floor === null) return { kind: 'none' };
  if (head === null) return { kind: 'unknown' };
  if (head.genesis !== floor.genesis) return { kind: 'other-ledger', genesis: head.genesis };
  if (head.seq < floor.seq) return { kind: 'rollback' };
  const fork = (actual: string, reason: string): FloorPlacement => ({ kind: 'fork', actual, reason });
  if (line === null) return fork('no line', `there is no line at the floor's offset ${floor.offset}`);
  const next = floor.offset + line.length + 1;
  if (next > head.size) return fork('an unpublished line', `the line at the floor's offset ${floor.offset} ends past HEAD's size ${head.size}`);
  // Attacker-controlled bytes: the record at the floor must be exactly a canonical record line.
  const text = decodeLine(line);
  let value: unknown;
  try {
    value = text === null ? undefined : JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (text === null || value === undefined || !isCanonicalText(value, text) || recordProblems(value).length > 0) {
    return fork('not a record', `the line at the floor's offset ${floor.offset} is not a valid record line`);
  }
  const record = value as LedgerRecord;
  const id = recordId(record);
  if (record.seq !== floor.seq || id !== floor.id) {
    return fork(`seq ${record.seq} ${id}`, `the record at the floor's offset is seq ${record.seq} ${shortId(id)}, not the floor's seq ${floor.seq} ${shortId(floor.id)}`);
  }
  return { kind: 'ok', record: { seq: record.seq, id, ts: record.ts, next } };
}
