// Speed, paying for one stated target (issue 12: a durable in-process append >= 0.5x the raw
// limit). `Ledger.append` checks retry identity, so every append opens the index, and each open
// scanned the records past the last segment again: up to DELTA_MAX_RECORDS lines parsed and
// hashed, about 0.3 ms of a 1.0 ms append in a loop. This memo keeps the last such scan of this
// Ledger (../../cache/), so the next open scans only the lines appended since.
//
// Policy: the memo is believed exactly as far as a segment file is (segments.ts loadChain): for
// the same ledger directory and genesis, from the same first line and link, and only while the
// line that ended the scanned range is still there with the same id (recomputed from
// records.jsonl on every use); what is new past it is scanned and linked to it. Like a segment, it only locates records: every record a decision relies on is read again
// and verified from its bytes (../verified.ts). A range that does not match is scanned afresh.
import type { FileOps } from '../../fs/ops.js';
import type { LedgerPaths } from '../../store/paths.js';
import { lineIdAt, scanRows, type ScanRange } from './rows.js';
import type { Rows } from './segment-format.js';

interface Memo {
  dir: string;
  genesis: string;
  rows: Rows;
}

/**
 * The rows of `range` (records fromSeq onwards, linked to range.prevId, the last one range.endId),
 * as scanRows gives them, reusing this Ledger's last scan of the same range's beginning when it
 * still holds: the same start and link, and its last line still there with the id it had (which
 * commits, through the links checked when it was scanned, to every line before it).
 */
export function tailRows(ops: FileOps, paths: LedgerPaths, genesis: string, range: ScanRange & { endId: string }): Rows {
  // This Ledger's last scan (../../cache/ 'index-tail').
  const cache = paths.cache?.inMemory<Memo>('index-tail');
  const m = cache?.get() ?? null;
  let rows: Rows;
  if (
    m !== null && m.dir === paths.dir && m.genesis === genesis && m.rows.fromSeq === range.fromSeq && m.rows.fromOffset === range.fromOffset &&
    m.rows.prevId === range.prevId && m.rows.endOffset <= range.endOffset && m.rows.lastOffset >= 0 &&
    lineIdAt(ops, paths, m.rows.toSeq, m.rows.lastOffset, m.rows.endOffset) === m.rows.lastId
  ) {
    rows = m.rows.endOffset === range.endOffset
      ? (m.rows.lastId === range.endId ? m.rows : scanRows(ops, paths, range))
      : join(m.rows, scanRows(ops, paths, { fromSeq: m.rows.toSeq + 1, fromOffset: m.rows.endOffset, endOffset: range.endOffset, prevId: m.rows.lastId, endId: range.endId }));
  } else {
    rows = scanRows(ops, paths, range);
  }
  if (rows.lastOffset >= 0) cache?.set({ dir: paths.dir, genesis, rows });
  return rows;
}

/** Rows of two adjacent ranges as one; neither input is changed (a caller may hold either). */
function join(a: Rows, b: Rows): Rows {
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
    lastId: b.lastId,
    prevId: a.prevId,
  };
}
