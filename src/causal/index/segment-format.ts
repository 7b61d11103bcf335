// The binary layout of one index segment, encoded and decoded. Pure: bytes in, bytes out; the
// lookup reads through a function its caller gives it (segments.ts reads the file).
//
// Segment format v3 (little-endian):
//   header (HEADER_BYTES): magic "HLCIX003", then f64 fromSeq, toSeq, fromOffset, endOffset,
//     lastOffset, bucketCount, entryCount, postingCount; lastId (32 raw bytes); genesis (32)
//   buckets:  (bucketCount + 1) x u32, the first entry of each bucket
//   entries:  entryCount x { u32 h1, u32 h2, u32 first posting, u32 posting count }
//   postings: postingCount x { u32 seq - fromSeq, f64 offset }
// Rows are bucketed by h2 and grouped by (h1, h2) inside a bucket; each group's postings are in
// seq order, so a lookup returns them as the causal layer wants them.

/** Where a record filed under a key is: its seq and the offset of its line in records.jsonl. */
export interface Posting { seq: number; offset: number }

/** The seq and byte range a segment covers, and its last record (to check it against the ledger). */
export interface SegmentRange {
  fromSeq: number;
  toSeq: number;
  fromOffset: number;
  endOffset: number;
  /** Where the line of record toSeq starts, and its id. */
  lastOffset: number;
  lastId: string;
}

/** The rows (key hash, seq, offset) of the records in a range: what a segment is made from. */
export interface Rows extends SegmentRange {
  h1: number[];
  h2: number[];
  seq: number[];
  offset: number[];
}

/** What a segment's header says: its range, its ledger's genesis, and its table sizes. */
export interface SegmentHeader extends SegmentRange {
  genesis: string;
  bucketCount: number;
  entryCount: number;
  postingCount: number;
}

/** The index disagrees with itself or the ledger; the caller drops it and rebuilds. */
export class IndexDamaged extends Error {}

// v3: identity keys, no kind keys. A segment of another version does not match and is rebuilt.
const MAGIC = Buffer.from('HLCIX003');
export const HEADER_BYTES = 136;
const ENTRY_BYTES = 16;
const POSTING_BYTES = 12;

function rawDigest(id: string): Buffer {
  return Buffer.from(id.slice(7), 'hex');
}

export function encodeSegment(rows: Rows, genesis: string): Buffer {
  const n = rows.seq.length;
  let bucketCount = 1;
  while (bucketCount * 4 < n) bucketCount *= 2;
  const mask = bucketCount - 1;
  // Counting sort by bucket keeps rows of one bucket in seq order (they were produced in order).
  const counts = new Uint32Array(bucketCount + 1);
  for (let i = 0; i < n; i++) counts[(rows.h2[i] & mask) + 1]++;
  for (let b = 0; b < bucketCount; b++) counts[b + 1] += counts[b];
  const order = new Uint32Array(n);
  const fill = counts.slice(0, bucketCount);
  for (let i = 0; i < n; i++) order[fill[rows.h2[i] & mask]++] = i;
  // Within a bucket, group rows by full hash (stable, so each group stays in seq order).
  const entries: number[] = []; // h1, h2, first, count
  const bucketStart = new Uint32Array(bucketCount + 1);
  const postings = new Uint32Array(n);
  let p = 0;
  for (let b = 0; b < bucketCount; b++) {
    bucketStart[b] = entries.length / 4;
    const idx = Array.from(order.subarray(counts[b], counts[b + 1]));
    idx.sort((x, y) => rows.h1[x] - rows.h1[y] || rows.h2[x] - rows.h2[y] || x - y);
    for (let k = 0; k < idx.length; ) {
      const first = p;
      const [a, c] = [rows.h1[idx[k]], rows.h2[idx[k]]];
      while (k < idx.length && rows.h1[idx[k]] === a && rows.h2[idx[k]] === c) postings[p++] = idx[k++];
      entries.push(a, c, first, p - first);
    }
  }
  const entryCount = entries.length / 4;
  bucketStart[bucketCount] = entryCount;
  const size = HEADER_BYTES + (bucketCount + 1) * 4 + entryCount * ENTRY_BYTES + n * POSTING_BYTES;
  const out = Buffer.alloc(size);
  MAGIC.copy(out, 0);
  [rows.fromSeq, rows.toSeq, rows.fromOffset, rows.endOffset, rows.lastOffset, bucketCount, entryCount, n].forEach((v, i) => out.writeDoubleLE(v, 8 + i * 8));
  rawDigest(rows.lastId).copy(out, 72);
  rawDigest(genesis).copy(out, 104);
  let at = HEADER_BYTES;
  for (let b = 0; b <= bucketCount; b++, at += 4) out.writeUInt32LE(bucketStart[b], at);
  for (let e = 0; e < entries.length; e++, at += 4) out.writeUInt32LE(entries[e], at);
  for (let k = 0; k < n; k++, at += POSTING_BYTES) {
    const i = postings[k];
    out.writeUInt32LE(rows.seq[i] - rows.fromSeq, at);
    out.writeDoubleLE(rows.offset[i], at + 4);
  }
  return out;
}

/** Decodes and sanity-checks a header; throws IndexDamaged for one that cannot be right. */
export function decodeHeader(header: Buffer): SegmentHeader {
  if (header.length < HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC)) throw new IndexDamaged('bad magic');
  const [fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => header.readDoubleLE(8 + i * 8));
  const h: SegmentHeader = {
    fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount,
    lastId: 'sha256:' + header.toString('hex', 72, 104),
    genesis: 'sha256:' + header.toString('hex', 104, 136),
  };
  const ok = [fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount].every((v) => Number.isSafeInteger(v) && v >= 0);
  if (!ok || toSeq < fromSeq || endOffset <= lastOffset || lastOffset < fromOffset || (bucketCount & (bucketCount - 1)) !== 0 || bucketCount === 0) {
    throw new IndexDamaged('bad header');
  }
  return h;
}

/**
 * Appends to `out` the postings filed under the key hash (h1, h2), in seq order. `read(at, len)`
 * returns `len` bytes of the segment at `at`, or throws. A layout that points outside itself
 * throws IndexDamaged (`name` names the segment).
 */
export function lookupPostings(h: SegmentHeader, read: (at: number, len: number) => Buffer, name: string, h1: number, h2: number, out: Posting[]): void {
  const b = h2 & (h.bucketCount - 1);
  const bk = read(HEADER_BYTES + b * 4, 8);
  const [start, end] = [bk.readUInt32LE(0), bk.readUInt32LE(4)];
  if (end < start || end > h.entryCount) throw new IndexDamaged(`segment ${name} has a bad bucket`);
  if (end === start) return;
  const entriesAt = HEADER_BYTES + (h.bucketCount + 1) * 4;
  const es = read(entriesAt + start * ENTRY_BYTES, (end - start) * ENTRY_BYTES);
  for (let e = 0; e < end - start; e++) {
    if (es.readUInt32LE(e * ENTRY_BYTES) !== h1 || es.readUInt32LE(e * ENTRY_BYTES + 4) !== h2) continue;
    const first = es.readUInt32LE(e * ENTRY_BYTES + 8);
    const count = es.readUInt32LE(e * ENTRY_BYTES + 12);
    if (first + count > h.postingCount) throw new IndexDamaged(`segment ${name} has a bad entry`);
    const ps = read(entriesAt + h.entryCount * ENTRY_BYTES + first * POSTING_BYTES, count * POSTING_BYTES);
    for (let k = 0; k < count; k++) out.push({ seq: h.fromSeq + ps.readUInt32LE(k * POSTING_BYTES), offset: ps.readDoubleLE(k * POSTING_BYTES + 4) });
  }
}
