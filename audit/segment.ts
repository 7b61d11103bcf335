// One stretch of records.jsonl through the layers, line by line: the whole file in a
// single-threaded audit, or one of several byte ranges in a parallel one (audit/parallel.ts).
// A layer runs on a line only while it can still decide the verdict (no lower layer has failed)
// and only if the layers before it passed that line.
import type { AuditContext, Layer, LineView } from './context.js';
import type { FindingCollector } from './findings.js';
import { readLines, type ReadEnd } from './lines.js';

/** The first line of a segment as the stitching of segments needs it (see parallel.ts). */
export interface SegmentFirst {
  pos: number;
  id: string | null;
  seq: number;
  prev_tail_hash: string | null;
  ts: string;
  /** How many layers passed this line (5: all). */
  passed: number;
}

export interface SegmentRun {
  lines: number;
  first: SegmentFirst | null;
  /** Offset of the last line read (-1: none). */
  lastOffset: number;
  readEnd: ReadEnd;
}

/**
 * Streams the lines of [start, end) through `layers`. Leaves the last line in `ctx.tail`; calls
 * `tick(lines)` every 4,096 lines.
 */
export function runSegment(
  ctx: AuditContext,
  layers: readonly Layer[],
  sink: FindingCollector,
  fd: number,
  range: { start: number; end: number; firstPos: number },
  tick?: (lines: number) => void,
): SegmentRun {
  const readEnd: ReadEnd = { consumed: 0, trailing: 0, short: false };
  let lines = 0;
  let first: SegmentFirst | null = null;
  let lastOffset = -1;
  for (const raw of readLines(fd, range.start, range.end, range.firstPos, readEnd)) {
    const line: LineView = Object.assign(raw, { record: null, id: null });
    let passed = 0;
    while (passed < layers.length && sink.active(passed) && layers[passed].checkRecord(line, sink)) passed++;
    const record = line.record as LineView['record'];
    if (lines === 0 && record !== null) {
      first = { pos: line.pos, id: line.id, seq: record.seq, prev_tail_hash: record.prev_tail_hash, ts: record.ts, passed };
    }
    ctx.tail = { seq: record?.seq ?? line.pos, id: line.id, ts: record?.ts ?? null };
    lastOffset = line.offset;
    lines++;
    if ((lines & 0xfff) === 0) tick?.(lines);
  }
  return { lines, first, lastOffset, readEnd };
}
