// What the index reads from records.jsonl: the rows (key hashes, seq, offset) of a byte range of
// lines, linked and hashed as they are read, and the id of one line (a segment's last record, to
// check the segment still matches).
//
// Attacker-controlled input: every byte read here comes from records.jsonl.
//
// Policy (issue 13 finding 8): a scan proves what it indexes. Each line must be UTF-8, canonical
// JSON (SPEC 4) of an object with the seq expected there, and its prev_tail_hash must be the id
// (recomputed here) of the line before it; the range's first line links to the id the caller
// names (a segment's last record, or null at the genesis) and its last line, when the caller
// names one, has that id (HEAD's tail, or the segment it replaces). So a scan that succeeds
// indexed exactly the records that the signed HEAD's hash chain commits to: a line overwritten
// with junk, a re-encoding or a lossy UTF-8 twin below a trust floor cannot drop a revocation
// from the index. Anything else is OP_CORRUPT, and the gate holds on it.
import { LineProblem, decodeRecordLine, idMismatch, lineError } from '../../record-line.js';
import { linesForward, openToRead } from '../../fs/lines.js';
import { PROGRESS_EVERY, reportProgress } from '../../progress.js';
import type { FileOps } from '../../fs/ops.js';
import { MAX_LINE_BYTES } from '../../record.js';
import type { LedgerPaths } from '../../store/paths.js';
import { hash64 } from './hash.js';
import { keysOf } from './keys.js';
import type { Rows } from './segment-format.js';

/** Where a scan starts and what it must link to. */
export interface ScanRange {
  fromSeq: number;
  fromOffset: number;
  endOffset: number;
  /** The id of record fromSeq - 1 (null when fromSeq is 0: the genesis links to nothing). */
  prevId: string | null;
  /** When given, the id the last line of the range must have. */
  endId?: string;
}

/**
 * The rows of the lines in [fromOffset, endOffset), which must be records fromSeq, fromSeq + 1,
 * ..., each linked to the one before it (see the Policy above). Throws OP_CORRUPT otherwise.
 */
export function scanRows(ops: FileOps, paths: LedgerPaths, range: ScanRange): Rows {
  const { fromSeq, fromOffset, endOffset } = range;
  const rows: Rows = { h1: [], h2: [], seq: [], offset: [], fromSeq, toSeq: fromSeq - 1, fromOffset, endOffset, lastOffset: -1, lastId: '', prevId: range.prevId };
  let expect = fromSeq;
  let prev = range.prevId;
  const fd = openToRead(ops, paths.records);
  try {
    for (const { bytes, offset } of linesForward(ops, fd, paths.records, fromOffset, endOffset)) {
      const got = decodeRecordLine(bytes, { seq: expect, prev });
      if (got instanceof LineProblem) throw lineError(got, paths.records, offset, expect);
      const { record: rec, id } = got;
      for (const key of keysOf(rec, id)) {
        const [a, b] = hash64(key);
        rows.h1.push(a);
        rows.h2.push(b);
        rows.seq.push(expect);
        rows.offset.push(offset);
      }
      rows.toSeq = expect;
      rows.lastOffset = offset;
      rows.lastId = id;
      prev = id;
      expect++;
      if ((expect - fromSeq) % PROGRESS_EVERY === 0) reportProgress('indexing records.jsonl', offset - fromOffset, endOffset - fromOffset, 'bytes');
    }
  } finally {
    ops.close(fd);
  }
  if (range.endId !== undefined && rows.lastId !== range.endId) {
    throw lineError(idMismatch(rows.lastId, range.endId), paths.records, rows.lastOffset, rows.toSeq);
  }
  return rows;
}

/** The id of the line in [offset, end), recomputed from records.jsonl, if it is record `seq`; else ''. */
export function lineIdAt(ops: FileOps, paths: LedgerPaths, seq: number, offset: number, end: number): string {
  if (end <= offset || end - offset > MAX_LINE_BYTES) return '';
  let fd: number;
  try {
    fd = ops.open(paths.records, 'r');
  } catch {
    return '';
  }
  try {
    const lines = linesForward(ops, fd, paths.records, offset, end, end - offset);
    const first = lines.next();
    if (first.done || first.value.offset + first.value.bytes.length + 1 !== end) return '';
    const got = decodeRecordLine(first.value.bytes, { seq });
    return got instanceof LineProblem ? '' : got.id;
  } catch {
    return ''; // not a line, not JSON, not a record: the segment does not match
  } finally {
    ops.close(fd);
  }
}
