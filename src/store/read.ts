// Reading published records: only the bytes HEAD covers are ever shown (SPEC 5: bytes past
// `size` are not part of the ledger).
import { isUtf8 } from 'node:buffer';
import { canonicalLineId } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import { MAX_LINE_BYTES, type Head, type LedgerRecord } from '../record.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

export interface RecordAt {
  seq: number;
  /** Byte offset where the record's line starts. */
  offset: number;
  id: string;
  record: LedgerRecord;
}

/**
 * Why a stored line (without its newline) cannot be a record before it is even parsed, or null.
 * SPEC 4 compares bytes: a line that is not UTF-8 would decode with replacement characters into
 * a string that may well be canonical and signed, so it is refused as bytes.
 */
function lineBytesProblem(bytes: Uint8Array): string | null {
  if (bytes.length + 1 > MAX_LINE_BYTES) return `is over 1 MiB (${bytes.length + 1} bytes)`;
  if (!isUtf8(bytes)) return 'is not UTF-8';
  return null;
}

/** Parses one stored line (without its newline), which must be canonical (SPEC 4), and its id. */
export function parseRecordLine(line: string, where: string): { record: LedgerRecord; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new LedgerError('OP_CORRUPT', `${where} is not JSON; run \`ledger audit\``);
  }
  const id = value !== null && typeof value === 'object' ? canonicalLineId(value, line + '\n') : null;
  if (id === null) throw new LedgerError('OP_CORRUPT', `${where} is not a canonical record line; run \`ledger audit\``);
  return { record: value as LedgerRecord, id };
}

// The last tail line this process parsed or wrote, by its exact bytes and offset (see parseHead's
// cache): identical bytes parse identically, so a writer appending in a loop re-reads its own
// last line without parsing, canonicalising and hashing it again.
// Only the bytes and what was derived from them are kept: a hit parses the same bytes afresh, so
// a caller that changes a record object it was given cannot change what the cache returns.
let lastTail: { line: Buffer; seq: number; offset: number; id: string } | null = null;

/** Remembers the line this process just published as the tail (`line` without its newline). */
export function rememberTail(line: Buffer, at: { seq: number; offset: number; id: string }): void {
  lastTail = { line, seq: at.seq, offset: at.offset, id: at.id };
}

// Most record lines are well under this; a longer one is read in further, larger chunks.
const FIRST_TAIL_CHUNK = 4096;

/**
 * The last record line, the one ending at `head.size`, read backwards in chunks. The writer uses
 * it to check that HEAD's tail really is the last line before it links a new record to it.
 */
export function readTailLine(ops: FileOps, paths: LedgerPaths, head: Head): RecordAt {
  const fd = ops.open(paths.records, 'r');
  try {
    const chunks: Buffer[] = [];
    let start = head.size - 1; // skip the final newline
    for (let chunk = FIRST_TAIL_CHUNK; ; chunk = 65536) {
      const from = Math.max(0, start - chunk);
      const buf = Buffer.allocUnsafe(start - from);
      const n = ops.read(fd, buf, from);
      if (n !== buf.length) throw new LedgerError('OP_CORRUPT', `${paths.records} is shorter than HEAD's size ${head.size}; run \`ledger audit\``);
      chunks.unshift(buf);
      const nl = buf.lastIndexOf(0x0a);
      if (nl >= 0 || from === 0) {
        const all = chunks.length === 1 ? buf : Buffer.concat(chunks);
        const lineStart = nl >= 0 ? from + nl + 1 : 0;
        const lineBytes = all.subarray(lineStart - from);
        if (lastTail && lastTail.offset === lineStart && lastTail.line.equals(lineBytes)) {
          return { seq: lastTail.seq, offset: lineStart, id: lastTail.id, record: JSON.parse(lineBytes.toString('utf8')) as LedgerRecord };
        }
        const problem = lineBytesProblem(lineBytes);
        if (problem) throw new LedgerError('OP_CORRUPT', `the last record of ${paths.records} ${problem}; run \`ledger audit\``);
        const { record, id } = parseRecordLine(lineBytes.toString('utf8'), `the last record of ${paths.records}`);
        const at = { seq: record.seq, offset: lineStart, id, record };
        rememberTail(Buffer.from(lineBytes), at);
        return at;
      }
      start = from;
      if (head.size - start > 1024 * 1024 + 1) throw new LedgerError('OP_CORRUPT', `the last line of ${paths.records} is over 1 MiB`);
    }
  } finally {
    ops.close(fd);
  }
}

/**
 * Every published record in order, streaming. `fromOffset`/`fromSeq` start the scan at a known
 * line (an index or a floor); ids are recomputed from the bytes, never taken from a cache.
 */
export function* readRecords(paths: LedgerPaths, head: Head, fromOffset = 0, fromSeq = 0, ops: FileOps = realFileOps): Generator<RecordAt> {
  let fd: number;
  try {
    fd = ops.open(paths.records, 'r');
  } catch (e) {
    throw ioError(e, 'open', paths.records);
  }
  try {
    // Fail closed before showing anything: a HEAD that publishes more than the file holds, or
    // whose tail is not the line ending at its size, is not a state of this ledger, even if the
    // first records are intact. (The writer checks the same before it appends.)
    const size = ops.size(paths.records);
    if (size < head.size) throw new LedgerError('OP_CORRUPT', `${paths.records} has ${size} bytes but HEAD publishes ${head.size}; run \`ledger audit\``);
    const tail = readTailLine(ops, paths, head);
    if (tail.id !== head.tail || tail.seq !== head.seq) {
      throw new LedgerError('OP_CORRUPT', `HEAD says the tail is seq ${head.seq} ${head.tail}, but the last published line is seq ${String(tail.seq)} ${tail.id}; run \`ledger audit\``);
    }
    const buf = Buffer.alloc(1 << 20);
    let carry: Buffer = Buffer.alloc(0);
    let pos = fromOffset;
    let lineStart = fromOffset;
    let seq = fromSeq;
    while (pos < head.size) {
      const n = ops.read(fd, buf.subarray(0, Math.min(buf.length, head.size - pos)), pos);
      if (n === 0) throw new LedgerError('OP_CORRUPT', `${paths.records} is shorter than HEAD's size ${head.size}; run \`ledger audit\``);
      pos += n;
      let data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let i = 0;
      for (;;) {
        const nl = data.indexOf(0x0a, i);
        if (nl < 0) break;
        const problem = lineBytesProblem(data.subarray(i, nl));
        if (problem) throw new LedgerError('OP_CORRUPT', `${paths.records} line at byte ${lineStart} ${problem}; run \`ledger audit\``);
        const line = data.toString('utf8', i, nl);
        const { record, id } = parseRecordLine(line, `${paths.records} line at byte ${lineStart}`);
        if (record.seq !== seq) throw new LedgerError('OP_CORRUPT', `${paths.records} line at byte ${lineStart} has seq ${String(record.seq)}, expected ${seq}; run \`ledger audit\``);
        yield { seq, offset: lineStart, id, record };
        lineStart += nl + 1 - i;
        i = nl + 1;
        seq++;
      }
      carry = Buffer.from(data.subarray(i));
      if (carry.length > 1024 * 1024) throw new LedgerError('OP_CORRUPT', `${paths.records} has a line over 1 MiB at byte ${lineStart}`);
    }
    if (carry.length) throw new LedgerError('OP_CORRUPT', `${paths.records} does not end with a newline at HEAD's size ${head.size}`);
  } finally {
    ops.close(fd);
  }
}
