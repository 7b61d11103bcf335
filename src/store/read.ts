// Reading published records: only the bytes HEAD covers are ever shown (SPEC 5: bytes past
// `size` are not part of the ledger).
import { canonicalLine, recordId } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import type { Head, LedgerRecord } from '../record.js';
import { realFileOps, type FileOps } from './fsops.js';
import type { LedgerPaths } from './paths.js';

export interface RecordAt {
  seq: number;
  /** Byte offset where the record's line starts. */
  offset: number;
  id: string;
  record: LedgerRecord;
}

/** Whether `text` is the canonical line of `value`; a value with no canonical form is not. */
export function isCanonical(value: unknown, text: string): boolean {
  try {
    return canonicalLine(value) === text;
  } catch {
    return false; // a fraction, 1e30 or a lone surrogate: stored bytes no writer of ours made
  }
}

/** Parses one stored line (without its newline); the line must be canonical (SPEC 4). */
export function parseRecordLine(line: string, where: string): LedgerRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new LedgerError('OP_CORRUPT', `${where} is not JSON; run \`ledger audit\``);
  }
  if (value === null || typeof value !== 'object' || !isCanonical(value, line + '\n')) {
    throw new LedgerError('OP_CORRUPT', `${where} is not a canonical record line; run \`ledger audit\``);
  }
  return value as LedgerRecord;
}

// The last tail line this process parsed, by its exact bytes (see parseHead's cache).
let lastTail: { line: Buffer; at: RecordAt } | null = null;

/**
 * The last record line, the one ending at `head.size`, read backwards in chunks. The writer uses
 * it to check that HEAD's tail really is the last line before it links a new record to it.
 */
export function readTailLine(ops: FileOps, paths: LedgerPaths, head: Head): RecordAt {
  const fd = ops.open(paths.records, 'r');
  try {
    const chunks: Buffer[] = [];
    let start = head.size - 1; // skip the final newline
    for (;;) {
      const from = Math.max(0, start - 65536);
      const buf = Buffer.alloc(start - from);
      const n = ops.read(fd, buf, from);
      if (n !== buf.length) throw new LedgerError('OP_CORRUPT', `${paths.records} is shorter than HEAD's size ${head.size}; run \`ledger audit\``);
      chunks.unshift(buf);
      const nl = buf.lastIndexOf(0x0a);
      if (nl >= 0 || from === 0) {
        const all = Buffer.concat(chunks);
        const lineStart = nl >= 0 ? from + nl + 1 : 0;
        const lineBytes = all.subarray(lineStart - from);
        if (lastTail && lastTail.at.offset === lineStart && lastTail.line.equals(lineBytes)) return { ...lastTail.at };
        const record = parseRecordLine(lineBytes.toString('utf8'), `the last record of ${paths.records}`);
        const at = { seq: record.seq, offset: lineStart, id: recordId(record), record };
        lastTail = { line: Buffer.from(lineBytes), at };
        return { ...at };
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
        const line = data.toString('utf8', i, nl);
        const record = parseRecordLine(line, `${paths.records} line at byte ${lineStart}`);
        if (record.seq !== seq) throw new LedgerError('OP_CORRUPT', `${paths.records} line at byte ${lineStart} has seq ${String(record.seq)}, expected ${seq}; run \`ledger audit\``);
        yield { seq, offset: lineStart, id: recordId(record), record };
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
