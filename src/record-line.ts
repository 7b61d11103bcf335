// The one decoder of a stored record line (SPEC 4): bytes to a checked record. Every reader in
// src/ decodes a line here: the store's chain check, forward and backward readers and id
// resolver, the writer's mark check, the derived index, the records a decision relies on, the
// fold of the work log, and the remote's records before the local copy takes them. The auditor
// keeps its own reader on purpose (audit/lines.ts, audit/schema.ts): it is the independent second
// reader, and must not share this one's mistakes.
//
// What a line must be, in the order it is checked (each a problem of its own, with one wording):
//   utf8       its bytes are UTF-8 (a bad byte would decode to U+FFFD, and the text compared
//              below would no longer be the bytes stored)
//   json       they parse as JSON
//   canonical  the JSON is an object with a string `kind`, and the text is its JCS form (SPEC 4)
//   schema     (when asked) the record's schema, record.ts recordProblems
//   seq        (when given) it is the record at that seq
//   link       (when given) its prev_tail_hash is that id (null: the genesis links to nothing)
//   id         (when given) its id, recomputed from its bytes, is that id
// A problem is returned, not thrown: some readers take a bad line for "no match" (a segment or a
// kept fold that no longer fits), others throw it with where it was (lineError: the file and
// byte offset; the remote's readers name the commit and seq).
//
// Speed: a reader that has checked the chain through HEAD on the same open file already knows
// every line there is a canonical record linked to the one before it; it passes `chained` and
// the line is only parsed (and its seq, link and id compared as asked), not checked for UTF-8
// or canonical form again. The id (a SHA-256 of the line) is computed only when it is used.
// Pure: no I/O. Attacker-controlled input.
import { isUtf8 } from 'node:buffer';
import { idFromLine, isCanonicalText } from './canonical.js';
import { LedgerError, RUN_AUDIT, type ErrorCode } from './errors.js';
import { recordProblems, type LedgerRecord } from './record.js';

export type LineProblemKind = 'utf8' | 'json' | 'canonical' | 'schema' | 'seq' | 'link' | 'id';

/** What is wrong with a line: its kind, and the one wording for it ("is not UTF-8"). */
export class LineProblem {
  constructor(readonly kind: LineProblemKind, readonly why: string) {}
}

/** What the caller already knows the line must be, and what it may skip. */
export interface LineExpect {
  /** The seq it must have. */
  seq?: number;
  /** What its prev_tail_hash must be (null: it is the genesis). */
  prev?: string | null;
  /** The id it must have. */
  id?: string;
  /** Check the record's schema too (the remote's records, the records a decision relies on). */
  schema?: boolean;
  /**
   * The line lies within a chain checked through HEAD on the same open file (store/chain.ts):
   * only parsed, not checked for UTF-8 or canonical form again.
   */
  chained?: boolean;
  /** Compute the id (default true; false: `id` is '' unless `expect.id` asked for it). */
  needId?: boolean;
}

export interface DecodedLine {
  record: LedgerRecord;
  /** The record's id, recomputed from the bytes (SPEC 4); '' when needId was false. */
  id: string;
}

const NOT_UTF8 = new LineProblem('utf8', 'is not UTF-8');
const NOT_JSON = new LineProblem('json', 'is not JSON');
const NOT_CANONICAL = new LineProblem('canonical', 'is not a canonical record line');

/**
 * A value's canonical JSON from its bytes (without the newline): UTF-8, JSON, and the text is
 * its JCS form; what HEAD's readers share with the record line's (a HEAD is canonical JSON too,
 * SPEC 5). Not checked for being a record.
 */
export function canonicalValue(bytes: Uint8Array): { value: unknown; text: string } | LineProblem {
  if (!isUtf8(bytes)) return NOT_UTF8;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  return isCanonicalText(value, text) ? { value, text } : NOT_CANONICAL;
}

/** Decodes one stored line (its bytes without the newline) as `expect` says; a LineProblem when it is not that. */
export function decodeRecordLine(bytes: Uint8Array, expect: LineExpect = {}): DecodedLine | LineProblem {
  let text: string;
  let record: LedgerRecord;
  if (expect.chained) {
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    try {
      record = JSON.parse(text) as LedgerRecord;
    } catch {
      return NOT_JSON;
    }
    if (!isRecordObject(record)) return NOT_CANONICAL;
  } else {
    const c = canonicalValue(bytes);
    if (c instanceof LineProblem) return c;
    if (!isRecordObject(c.value)) return NOT_CANONICAL;
    text = c.text;
    record = c.value;
  }
  if (expect.schema) {
    const problems = recordProblems(record);
    if (problems.length) return new LineProblem('schema', `is not a valid record (${problems[0]})`);
  }
  if (expect.seq !== undefined && record.seq !== expect.seq) return new LineProblem('seq', `has seq ${String(record.seq)}, expected ${expect.seq}`);
  if (expect.prev !== undefined && record.prev_tail_hash !== expect.prev) {
    return new LineProblem('link', `does not link to the record before it (its prev_tail_hash is not ${expect.prev ?? 'null'})`);
  }
  // idFromLine's precondition (a canonical line) holds: checked above, or by the chain check.
  const id = expect.needId === false && expect.id === undefined ? '' : idFromLine(text, record);
  if (expect.id !== undefined && id !== expect.id) return idMismatch(id, expect.id);
  return { record, id };
}

/** The problem of a line whose id is not the one the chain (a link, HEAD's tail, a segment) names there. */
export function idMismatch(id: string, expected: string): LineProblem {
  return new LineProblem('id', `is not the record the chain names there (its id is ${id || 'none'}, not ${expected})`);
}

function isRecordObject(v: unknown): v is LedgerRecord {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { kind?: unknown }).kind === 'string';
}

/**
 * The error for a problem of a line of a ledger's records file: OP_CORRUPT (exit 3), the file,
 * the byte offset and (when known) the seq where it is, then the problem's wording.
 */
export function lineError(problem: LineProblem, path: string, offset: number, seq?: number, code: ErrorCode = 'OP_CORRUPT'): LedgerError {
  const at = seq === undefined ? '' : ` (seq ${seq})`;
  return new LedgerError(code, `${path}: the line at byte ${offset}${at} ${problem.why}`, { path, offset, ...(seq === undefined ? {} : { seq }), problem: problem.kind }, RUN_AUDIT);
}

/** decodeRecordLine, or throws lineError at `path` and `offset`. */
export function readRecordLine(bytes: Uint8Array, path: string, offset: number, expect: LineExpect = {}): DecodedLine {
  const got = decodeRecordLine(bytes, expect);
  if (got instanceof LineProblem) throw lineError(got, path, offset, expect.seq);
  return got;
}
