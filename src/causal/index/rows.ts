// What the index reads from records.jsonl: the rows (key hashes, seq, offset) of a byte range of
// lines, and the id of one line (a segment's last record, to check the segment still matches).
import { idFromLine } from '../../canonical.js';
import { LedgerError, RUN_AUDIT } from '../../errors.js';
import { linesForward, openToRead } from '../../fs/lines.js';
import type { FileOps } from '../../fs/ops.js';
import { MAX_LINE_BYTES, type LedgerRecord } from '../../record.js';
import type { LedgerPaths } from '../../store/paths.js';
import { hash64 } from './hash.js';
import { keysOf } from './keys.js';
import type { Rows } from './segment-format.js';

/** A line kept whole, for its id keys when first asked (the in-memory tail). */
export interface TailLine { line: string; seq: number; offset: number }

/** Rows, and without ids the lines themselves (else empty). */
export interface ScannedRows extends Rows {
  lines: TailLine[];
}

// Policy: the index does not check that a line is canonical before idFromLine (its precondition):
// for a line that is not, the digest filed is only a wrong locator. The index is trusted to
// locate records, never for what they say; every record located is verified from its bytes,
// canonical check included, by verified.ts before a decision uses it.

/**
 * The rows of the lines in [fromOffset, endOffset), which must be records fromSeq, fromSeq + 1,
 * ... With `ids` false (the in-memory tail) no record id is computed and no id key is made:
 * hashing every line is most of the scan's cost, and most callers (a retry check of a new append)
 * never look a record up by id. The lines are kept instead.
 */
export function scanRows(ops: FileOps, paths: LedgerPaths, fromSeq: number, fromOffset: number, endOffset: number, ids = true): ScannedRows {
  const rows: ScannedRows = { h1: [], h2: [], seq: [], offset: [], fromSeq, toSeq: fromSeq - 1, fromOffset, endOffset, lastOffset: -1, lastId: '', lines: [] };
  let expect = fromSeq;
  const fd = openToRead(ops, paths.records);
  try {
    for (const { bytes, offset } of linesForward(ops, fd, paths.records, fromOffset, endOffset)) {
      const line = bytes.toString('utf8');
      let rec: LedgerRecord;
      try {
        rec = JSON.parse(line) as LedgerRecord;
      } catch {
        throw new LedgerError('OP_CORRUPT', `${paths.records}: the line at byte ${offset} is not JSON`, {}, RUN_AUDIT);
      }
      if (rec === null || typeof rec !== 'object' || rec.seq !== expect || typeof rec.kind !== 'string') {
        throw new LedgerError('OP_CORRUPT', `${paths.records}: the line at byte ${offset} is not record seq ${expect}`, {}, RUN_AUDIT);
      }
      const id = ids ? idFromLine(line, rec) : null;
      if (!ids) rows.lines.push({ line, seq: expect, offset });
      for (const key of keysOf(rec, id)) {
        const [a, b] = hash64(key);
        rows.h1.push(a);
        rows.h2.push(b);
        rows.seq.push(expect);
        rows.offset.push(offset);
      }
      rows.toSeq = expect;
      rows.lastOffset = offset;
      rows.lastId = id ?? '';
      expect++;
    }
  } finally {
    ops.close(fd);
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
    const line = first.value.bytes.toString('utf8');
    const rec = JSON.parse(line) as LedgerRecord;
    if (rec?.seq !== seq) return '';
    return idFromLine(line, rec);
  } catch {
    return ''; // not a line, not JSON, not a record: the segment does not match
  } finally {
    ops.close(fd);
  }
}
