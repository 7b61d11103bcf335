// The binary layout of one index segment, encoded and decoded. Pure: bytes in, bytes out; the
// lookup reads through a function its caller gives it (segments.ts reads the file).
//
// Segment format v4 (little-endian):
//   header (HEADER_BYTES): magic "HLCIX004", then f64 fromSeq, toSeq, fromOffset, endOffset,
//     lastOffset, bucketCount, entryCount, postingCount; lastId (32 raw bytes); genesis (32);
//     prevId (32: the id of record fromSeq - 1, zeros at seq 0); root (32)
//   pages:    pageCount x 32-byte SHA-256, one per PAGE_BUCKETS buckets (see pageDigest)
//   buckets:  (bucketCount + 1) x u32, the first entry of each bucket
//   entries:  entryCount x { u32 h1, u32 h2, u32 first posting, u32 posting count }
//   postings: postingCount x { u32 seq - fromSeq, f64 offset }
// Rows are bucketed by h2 and grouped by (h1, h2) inside a bucket; each group's postings are in
// seq order, so a lookup returns them as the causal layer wants them. Entries and postings are
// laid out in bucket order, so a page's entries and postings are each one contiguous run.
//
// Policy (issue 13 finding 8): a segment is believed only as far as it verifies. `root` is the
// SHA-256 of the header before it and the page table, checked when the segment is opened; a page
// (its bucket slots, entries and postings) is hashed and compared with its entry in the table the
// first time a lookup reads it, and the lookup then uses those very bytes. So one patched value
// anywhere (a bucket start, an entry's hash or count, a posting) is IndexDamaged, and the index
// is rebuilt from records.jsonl. What this cannot catch is a segment rewritten consistently (the
// digests recomputed): they are not keyed, and whoever may write .ledger/index/ can do that
// (docs/guarantees.md). Cost: one hash of the header and table per open, and of one page (at most
// PAGE_BUCKETS buckets, about 4 rows each) per lookup.
import { nodeCrypto } from '../../node-crypto.js';

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
  /** The id of record fromSeq - 1, which the first record links to (null at seq 0). */
  prevId: string | null;
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
  pageCount: number;
  root: Buffer;
}

/** The index disagrees with itself or the ledger; the caller drops it and rebuilds. */
export class IndexDamaged extends Error {}

// v4: a prevId and digests (v3: none). A segment of another version does not match and is rebuilt.
const MAGIC = Buffer.from('HLCIX004');
const ROOT_AT = 168;
export const HEADER_BYTES = 200;
const ENTRY_BYTES = 16;
const POSTING_BYTES = 12;
const DIGEST_BYTES = 32;
/** Buckets per page: a lookup hashes one page (about 4 rows a bucket, 28 bytes a row). */
export const PAGE_BUCKETS = 64;
const NO_ID = Buffer.alloc(32);

function rawDigest(id: string | null): Buffer {
  return id === null ? NO_ID : Buffer.from(id.slice(7), 'hex');
}

const sha256 = (...parts: Buffer[]) => {
  const h = nodeCrypto().createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

const pagesOf = (bucketCount: number) => Math.ceil(bucketCount / PAGE_BUCKETS);

/** Where the tables start, from the header's counts. */
function layout(h: { bucketCount: number; entryCount: number; pageCount: number }) {
  const pagesAt = HEADER_BYTES;
  const bucketsAt = pagesAt + h.pageCount * DIGEST_BYTES;
  const entriesAt = bucketsAt + (h.bucketCount + 1) * 4;
  const postingsAt = entriesAt + h.entryCount * ENTRY_BYTES;
  return { pagesAt, bucketsAt, entriesAt, postingsAt };
}

/** One page as read: the bucket slots it spans, its entries and its postings (the bytes hashed). */
export interface Page {
  /** The first bucket of the page. */
  b0: number;
  /** (b1 - b0 + 1) u32 slots: the first entry of each bucket and the end of the last. */
  slots: Buffer;
  /** Its entries, from slot b0 on. */
  entries: Buffer;
  firstEntry: number;
  /** Its postings, from posting `firstPosting` on. */
  postings: Buffer;
  firstPosting: number;
}

/** The digest of page `g` (SPEC-free, ours): SHA-256(u32 g, slots, entries, postings). */
function pageDigest(g: number, slots: Buffer, entries: Buffer, postings: Buffer): Buffer {
  const n = Buffer.alloc(4);
  n.writeUInt32LE(g, 0);
  return sha256(n, slots, entries, postings);
}

/** The posting run of a page's entries: [first, end), as the encoder lays them out. */
function postingRun(entries: Buffer): [number, number] {
  if (entries.length === 0) return [0, 0];
  const first = entries.readUInt32LE(8);
  const last = entries.length - ENTRY_BYTES;
  return [first, entries.readUInt32LE(last + 8) + entries.readUInt32LE(last + 12)];
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
  const pageCount = pagesOf(bucketCount);
  const at = layout({ bucketCount, entryCount, pageCount });
  const size = at.postingsAt + n * POSTING_BYTES;
  const out = Buffer.alloc(size);
  MAGIC.copy(out, 0);
  [rows.fromSeq, rows.toSeq, rows.fromOffset, rows.endOffset, rows.lastOffset, bucketCount, entryCount, n].forEach((v, i) => out.writeDoubleLE(v, 8 + i * 8));
  rawDigest(rows.lastId).copy(out, 72);
  rawDigest(genesis).copy(out, 104);
  rawDigest(rows.prevId).copy(out, 136);
  let w = at.bucketsAt;
  for (let b = 0; b <= bucketCount; b++, w += 4) out.writeUInt32LE(bucketStart[b], w);
  for (let e = 0; e < entries.length; e++, w += 4) out.writeUInt32LE(entries[e], w);
  for (let k = 0; k < n; k++, w += POSTING_BYTES) {
    const i = postings[k];
    out.writeUInt32LE(rows.seq[i] - rows.fromSeq, w);
    out.writeDoubleLE(rows.offset[i], w + 4);
  }
  // The digests: every page, then the root over the header and the page table.
  const h = { bucketCount, entryCount, pageCount };
  for (let g = 0; g < pageCount; g++) {
    const page = readPage(h, at, (from, len) => out.subarray(from, from + len), g, 'new segment');
    pageDigest(g, page.slots, page.entries, page.postings).copy(out, at.pagesAt + g * DIGEST_BYTES);
  }
  sha256(out.subarray(0, ROOT_AT), out.subarray(at.pagesAt, at.bucketsAt)).copy(out, ROOT_AT);
  return out;
}

/** Decodes and sanity-checks a header; throws IndexDamaged for one that cannot be right. */
export function decodeHeader(header: Buffer): SegmentHeader {
  if (header.length < HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC)) throw new IndexDamaged('bad magic');
  const [fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => header.readDoubleLE(8 + i * 8));
  const prev = header.subarray(136, 168);
  const h: SegmentHeader = {
    fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount,
    lastId: 'sha256:' + header.toString('hex', 72, 104),
    genesis: 'sha256:' + header.toString('hex', 104, 136),
    prevId: prev.equals(NO_ID) ? null : 'sha256:' + prev.toString('hex'),
    pageCount: 0,
    root: Buffer.from(header.subarray(ROOT_AT, HEADER_BYTES)),
  };
  const ok = [fromSeq, toSeq, fromOffset, endOffset, lastOffset, bucketCount, entryCount, postingCount].every((v) => Number.isSafeInteger(v) && v >= 0);
  if (!ok || toSeq < fromSeq || endOffset <= lastOffset || lastOffset < fromOffset || (bucketCount & (bucketCount - 1)) !== 0 || bucketCount === 0 || bucketCount > 2 ** 31) {
    throw new IndexDamaged('bad header');
  }
  if ((fromSeq === 0) !== (h.prevId === null)) throw new IndexDamaged('bad header (previous id)');
  h.pageCount = pagesOf(bucketCount);
  return h;
}

/** How many bytes of a segment the header and page table take (what `checkRoot` reads). */
export function tableBytes(h: SegmentHeader): number {
  return layout(h).bucketsAt;
}

/** Checks the root over the header and page table (`bytes`: the first tableBytes(h) bytes). */
export function checkRoot(h: SegmentHeader, bytes: Buffer, name: string): Buffer {
  const end = layout(h).bucketsAt;
  if (bytes.length < end || !sha256(bytes.subarray(0, ROOT_AT), bytes.subarray(HEADER_BYTES, end)).equals(h.root)) {
    throw new IndexDamaged(`segment ${name} does not verify (its header or page table was changed)`);
  }
  return Buffer.from(bytes.subarray(HEADER_BYTES, end));
}

type Read = (at: number, len: number) => Buffer;

function readPage(h: { bucketCount: number; entryCount: number; pageCount: number; postingCount?: number }, at: ReturnType<typeof layout>, read: Read, g: number, name: string): Page {
  const b0 = g * PAGE_BUCKETS;
  const b1 = Math.min(b0 + PAGE_BUCKETS, h.bucketCount);
  const slots = read(at.bucketsAt + b0 * 4, (b1 - b0 + 1) * 4);
  const [e0, e1] = [slots.readUInt32LE(0), slots.readUInt32LE(slots.length - 4)];
  if (e1 < e0 || e1 > h.entryCount) throw new IndexDamaged(`segment ${name} has a bad bucket`);
  const entries = read(at.entriesAt + e0 * ENTRY_BYTES, (e1 - e0) * ENTRY_BYTES);
  const [p0, p1] = postingRun(entries);
  const postingCount = h.postingCount ?? Infinity;
  if (p1 < p0 || p1 > postingCount) throw new IndexDamaged(`segment ${name} has a bad entry`);
  const postings = read(at.postingsAt + p0 * POSTING_BYTES, (p1 - p0) * POSTING_BYTES);
  return { b0, slots, entries, firstEntry: e0, postings, firstPosting: p0 };
}

/**
 * Page `g` of a segment, read through `read` and checked against `pages` (the verified page
 * table); throws IndexDamaged when it does not match. The caller keeps the page it returns.
 */
export function verifiedPage(h: SegmentHeader, pages: Buffer, read: Read, g: number, name: string): Page {
  const page = readPage(h, layout(h), read, g, name);
  const want = pages.subarray(g * DIGEST_BYTES, (g + 1) * DIGEST_BYTES);
  if (!pageDigest(g, page.slots, page.entries, page.postings).equals(want)) throw new IndexDamaged(`segment ${name} does not verify (page ${g} was changed)`);
  return page;
}

/** The page that holds the bucket of h2. */
export const pageOf = (h: SegmentHeader, h2: number) => Math.floor((h2 & (h.bucketCount - 1)) / PAGE_BUCKETS);

/**
 * Appends to `out` the postings filed under the key hash (h1, h2), in seq order, from its
 * verified page. A page whose layout points outside itself throws IndexDamaged.
 */
export function lookupPostings(h: SegmentHeader, page: Page, name: string, h1: number, h2: number, out: Posting[]): void {
  const b = (h2 & (h.bucketCount - 1)) - page.b0;
  if (b < 0 || (b + 1) * 4 >= page.slots.length) throw new IndexDamaged(`segment ${name}: bucket outside its page`);
  const [start, end] = [page.slots.readUInt32LE(b * 4) - page.firstEntry, page.slots.readUInt32LE(b * 4 + 4) - page.firstEntry];
  if (end < start || start < 0 || end * ENTRY_BYTES > page.entries.length) throw new IndexDamaged(`segment ${name} has a bad bucket`);
  for (let e = start; e < end; e++) {
    const at = e * ENTRY_BYTES;
    if (page.entries.readUInt32LE(at) !== h1 || page.entries.readUInt32LE(at + 4) !== h2) continue;
    const first = page.entries.readUInt32LE(at + 8) - page.firstPosting;
    const count = page.entries.readUInt32LE(at + 12);
    if (first < 0 || (first + count) * POSTING_BYTES > page.postings.length) throw new IndexDamaged(`segment ${name} has a bad entry`);
    for (let k = first; k < first + count; k++) {
      out.push({ seq: h.fromSeq + page.postings.readUInt32LE(k * POSTING_BYTES), offset: page.postings.readDoubleLE(k * POSTING_BYTES + 4) });
    }
  }
}
