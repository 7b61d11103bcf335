// Speed, paying for one stated target (issue 12: a durable in-process append >= 0.5x the raw
// limit). `Ledger.append` checks retry identity, so every append opens the index, and each open
// scanned the records past the last segment again: up to DELTA_MAX_RECORDS lines parsed and
// hashed, about 0.3 ms of a 1.0 ms append in a loop. This memo keeps the last such scan of this
// process, so the next open scans only the lines appended since.
//
// Policy: the memo is believed exactly as far as a segment file is (segments.ts loadChain): for
// the same ledger directory and genesis, from the same first line, and only while the line that
// ended the scanned range is still there with the same id (recomputed from records.jsonl on every
// use). Like a segment, it only locates records: every record a decision relies on is read again
// and verified from its bytes (../verified.ts). A range that does not match is scanned afresh.
import { idFromLine } from '../../canonical.js';
import type { FileOps } from '../../fs/ops.js';
import type { LedgerPaths } from '../../store/paths.js';
import { lineIdAt, scanRows, type ScannedRows } from './rows.js';

interface Memo {
  dir: string;
  genesis: string;
  rows: ScannedRows;
  /** The id of the last line scanned (rows.lastOffset .. rows.endOffset). */
  lastId: string;
}

let memo: Memo | null = null;

/**
 * The tail rows of [fromOffset, endOffset) (records fromSeq onwards), as scanRows without ids
 * gives them, reusing this process's last scan of the same range's beginning when it still holds.
 */
export function tailRows(ops: FileOps, paths: LedgerPaths, genesis: string, fromSeq: number, fromOffset: number, endOffset: number): ScannedRows {
  const m = memo;
  let rows: ScannedRows;
  if (
    m !== null && m.dir === paths.dir && m.genesis === genesis && m.rows.fromSeq === fromSeq && m.rows.fromOffset === fromOffset &&
    m.rows.endOffset <= endOffset && m.rows.lastOffset >= 0 && lineIdAt(ops, paths, m.rows.toSeq, m.rows.lastOffset, m.rows.endOffset) === m.lastId
  ) {
    rows = m.rows.endOffset === endOffset ? m.rows : join(m.rows, scanRows(ops, paths, m.rows.toSeq + 1, m.rows.endOffset, endOffset, false));
  } else {
    rows = scanRows(ops, paths, fromSeq, fromOffset, endOffset, false);
  }
  // The last line was just read from records.jsonl, as a check would read it: its id is that line's.
  const last = rows.lines[rows.lines.length - 1];
  memo = last === undefined ? null : { dir: paths.dir, genesis, rows, lastId: idFromLine(last.line) };
  return rows;
}

/** Forgets the memo (tests: a fresh process). */
export function forgetTailRows(): void {
  memo = null;
}

/** Rows of two adjacent ranges as one; neither input is changed (a caller may hold either). */
function join(a: ScannedRows, b: ScannedRows): ScannedRows {
  return {
    h1: a.h1.concat(b.h1),
    h2: a.h2.concat(b.h2),
    seq: a.seq.concat(b.seq),
    offset: a.offset.concat(b.offset),
    fromSeq: a.fromSeq,
    toSeq: b.toSeq,
    fromOffset: a.fromOffset,
    endOffset: b.endOffset,
    lastOffset: b.lastOffset,
    lastId: '',
    lines: a.lines.concat(b.lines),
  };
}
