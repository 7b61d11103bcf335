// The derived index of the causal layer: which records mention an operation, a revoked target,
// a consumed handoff, or have a given id, so that `gate` and an idempotent `append` read a
// handful of lines instead of the whole of records.jsonl (issue 4, scale).
//
// What it is trusted for, and what not (SPEC 3: derivable, never trusted by the auditor):
// - It only *locates* records: it answers "which seqs/offsets mention key K". Every record the
//   caller relies on is then read from records.jsonl and verified from its bytes (see
//   verified.ts). A wrong offset or seq is caught there, never believed.
// - Policy: it is trusted for *completeness* (that no record mentioning K is missing) only as far
//   as it matches the ledger it was built from: each segment names the genesis, the byte range
//   and the id of its last record, and is dropped and rebuilt when any of them disagree with
//   HEAD and records.jsonl. It lives beside records.jsonl with the same file protection; someone
//   who can rewrite files under the ledger directory can hide a record from it (README).
//
// Layout: `<ledger>/index/<from>-<to>.seg`, immutable segment files each covering a contiguous
// seq range, written to a temp file, fsynced and renamed into place, so a reader sees a whole
// segment or none. Records past the last segment (at most DELTA_MAX_RECORDS of them in steady
// state) are scanned from records.jsonl on each open. Segments are merged like a binary counter
// (two neighbours of similar size become one), so a ledger of n records has O(log n) segments.
//
// Segment format v3 (little-endian):
//   header (HEADER_BYTES): magic "HLCIX003", then f64 fromSeq, toSeq, fromOffset, endOffset,
//     lastOffset, bucketCount, entryCount, postingCount; lastId (32 raw bytes); genesis (32)
//   buckets:  (bucketCount + 1) x u32, the first entry of each bucket
//   entries:  entryCount x { u32 h1, u32 h2, u32 first posting, u32 posting count }
//   postings: postingCount x { u32 seq - fromSeq, f64 offset }
import { randomBytes } from 'node:crypto';
import {
  closeSync, fsyncSync, mkdirSync, openSync, readSync, readdirSync, renameSync, statSync, unlinkSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { digestOf, recordId } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import type { Head, LedgerRecord } from '../record.js';
import type { LedgerPaths } from '../store/paths.js';

export interface Posting { seq: number; offset: number }

// Keys. A NUL separates the namespace from the value: neither op ids nor digests contain one.
export const opKey = (op: string) => `o\0${op}`;
export const idKey = (id: string) => `i\0${id}`;
export const revokeKey = (target: string) => `r\0${target}`;
export const consumeKey = (handoff: string) => `c\0${handoff}`;
/** Retry identity (retry.ts): one operation's one execution's records of one kind. */
export const identityKey = (kind: string, op: string, exec: string) => `x\0${kind}\0${op}\0${exec}`;

/**
 * The keys under which a record is found. Checkpoints are found only by id: nothing here needs
 * them by op. With `id` null, all but the id key (see RecordIndex's unhashed tail).
 */
export function keysOf(record: LedgerRecord, id: string | null): string[] {
  const keys = id === null ? [] : [idKey(id)];
  const r = record as LedgerRecord & Record<string, unknown>;
  switch (record.kind) {
    case 'start':
    case 'intent':
      keys.push(opKey(String(r.logical_operation_id)));
      if (record.kind === 'intent') keys.push(identityKey(record.kind, String(r.logical_operation_id), String(r.execution_id)));
      break;
    case 'handoff':
    case 'finish':
      keys.push(opKey(String(r.logical_operation_id)));
      if (record.kind === 'handoff') keys.push(identityKey(record.kind, String(r.logical_operation_id), String(r.execution_id)));
      break;
    case 'revoke':
      keys.push(revokeKey(String(r.target)));
      break;
    case 'consume':
      keys.push(consumeKey(String(r.handoff)));
      break;
    default:
      break;
  }
  return keys;
}

/** 64 bits of a fast non-cryptographic hash (cyrb53's two lanes). Collisions only cost reads. */
export function hash64(s: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

const SIG_RE = /^,"sig":\{"alg":"ed25519","key":"[A-Za-z0-9_-]{43}","value":"[A-Za-z0-9_-]{86}"\}/;
const SIG_MARK = ',"sig":{"alg":"ed25519","key":"';

/**
 * A record's id from its canonical line without re-canonicalising: JCS(r without sig) is the
 * line with its `,"sig":{...}` member cut out (`agent` always sorts before `sig`, and no nested
 * object of any kind has an `alg` member, so the first match is the top-level one). Falls back to
 * the full computation when the line does not have that shape. Only the index uses this; records
 * that decisions rely on get their id recomputed by verified.ts.
 */
export function lineId(line: string, parsed?: object): string {
  return lineIdFast(line) ?? recordId(parsed ?? (JSON.parse(line) as object));
}

// The sig member is exactly this long: 31 + 43 (key) + 11 + 86 (value) + 2.
const SIG_MEMBER_CHARS = ',"sig":{"alg":"ed25519","key":"'.length + 43 + '","value":"'.length + 86 + '"}'.length;

/** The fast path of lineId alone: null when the line does not have the expected sig shape. */
export function lineIdFast(line: string): string | null {
  const at = line.indexOf(SIG_MARK);
  if (at <= 0) return null;
  const m = SIG_RE.exec(line.slice(at, at + SIG_MEMBER_CHARS));
  if (!m) return null;
  return digestOf(line.slice(0, at) + line.slice(at + m[0].length));
}

// ---------------------------------------------------------------------------------------------
// Reading lines of records.jsonl in [from, to).

const CHUNK = 4 << 20;

/** Calls `each` for every line in [from, to) of the file, with the line's start offset. */
export function forEachLine(path: string, from: number, to: number, each: (line: string, offset: number) => void): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw ioError(e, 'open', path);
  }
  try {
    // Most calls read a short tail: do not allocate (and fault in) more than the range needs.
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, to - from)));
    let carry: Buffer | null = null;
    let pos = from;
    let lineStart = from;
    while (pos < to) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
      if (n === 0) throw new LedgerError('OP_CORRUPT', `${path} ends before HEAD's size ${to}; run \`ledger audit\``);
      pos += n;
      const data: Buffer = carry ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let i = 0;
      for (;;) {
        const nl = data.indexOf(0x0a, i);
        if (nl < 0) break;
        each(data.toString('utf8', i, nl), lineStart);
        lineStart += nl + 1 - i;
        i = nl + 1;
      }
      carry = i < data.length ? Buffer.from(data.subarray(i)) : null;
      if (carry && carry.length > 1024 * 1024) throw new LedgerError('OP_CORRUPT', `${path} has a line over 1 MiB at byte ${lineStart}; run \`ledger audit\``);
    }
    if (carry) throw new LedgerError('OP_CORRUPT', `${path} does not end with a newline at byte ${to}; run \`ledger audit\``);
  } finally {
    closeSync(fd);
  }
}

/** The rows (key hash, seq, offset) of the records in a byte range, and the range's last record. */
interface Rows {
  h1: number[];
  h2: number[];
  seq: number[];
  offset: number[];
  fromSeq: number;
  toSeq: number;
  fromOffset: number;
  endOffset: number;
  lastOffset: number;
  lastId: string;
  /** Without ids: the lines themselves, for the id keys when first asked (else empty). */
  lines: TailLine[];
}

interface TailLine { line: string; seq: number; offset: number }

/**
 * The rows of a byte range. With `ids` false (the in-memory tail) no record id is computed and no
 * id key is made: hashing every line is most of the scan's cost, and most callers (a retry check
 * of a new append) never look a record up by id. The lines are kept instead.
 */
function scanRows(paths: LedgerPaths, fromSeq: number, fromOffset: number, endOffset: number, ids = true): Rows {
  const rows: Rows = { h1: [], h2: [], seq: [], offset: [], fromSeq, toSeq: fromSeq - 1, fromOffset, endOffset, lastOffset: -1, lastId: '', lines: [] };
  let expect = fromSeq;
  forEachLine(paths.records, fromOffset, endOffset, (line, offset) => {
    let rec: LedgerRecord;
    try {
      rec = JSON.parse(line) as LedgerRecord;
    } catch {
      throw new LedgerError('OP_CORRUPT', `${paths.records}: the line at byte ${offset} is not JSON; run \`ledger audit\``);
    }
    if (rec === null || typeof rec !== 'object' || rec.seq !== expect || typeof rec.kind !== 'string') {
      throw new LedgerError('OP_CORRUPT', `${paths.records}: the line at byte ${offset} is not record seq ${expect}; run \`ledger audit\``);
    }
    const id = ids ? lineId(line, rec) : null;
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
  });
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Segments on disk.

// v3: identity keys, no kind keys. A segment of another version does not match and is rebuilt.
const MAGIC = Buffer.from('HLCIX003');
const HEADER_BYTES = 136;
/** Past this many unindexed records (or bytes), the tail is written as a segment. */
export const DELTA_MAX_RECORDS = 128;
const DELTA_MAX_BYTES = 256 * 1024;
const SEG_RE = /^(\d{13})-(\d{13})\.seg$/;
const TMP_RE = /^\.tmp-.*\.seg$/;
const pad = (n: number) => String(n).padStart(13, '0');

function rawDigest(id: string): Buffer {
  return Buffer.from(id.slice(7), 'hex');
}

function encodeSegment(rows: Rows, genesis: string): Buffer {
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
  const size = HEADER_BYTES + (bucketCount + 1) * 4 + entryCount * 16 + n * 12;
  const out = Buffer.alloc(size);
  MAGIC.copy(out, 0);
  [rows.fromSeq, rows.toSeq, rows.fromOffset, rows.endOffset, rows.lastOffset, bucketCount, entryCount, n].forEach((v, i) => out.writeDoubleLE(v, 8 + i * 8));
  rawDigest(rows.lastId).copy(out, 72);
  rawDigest(genesis).copy(out, 104);
  let at = HEADER_BYTES;
  for (let b = 0; b <= bucketCount; b++, at += 4) out.writeUInt32LE(bucketStart[b], at);
  for (let e = 0; e < entries.length; e++, at += 4) out.writeUInt32LE(entries[e], at);
  for (let k = 0; k < n; k++, at += 12) {
    const i = postings[k];
    out.writeUInt32LE(rows.seq[i] - rows.fromSeq, at);
    out.writeDoubleLE(rows.offset[i], at + 4);
  }
  return out;
}

class Segment {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly fromOffset: number;
  readonly endOffset: number;
  readonly lastOffset: number;
  readonly lastId: string;
  readonly genesis: string;
  private readonly bucketCount: number;
  private readonly entryCount: number;
  private readonly postingCount: number;

  constructor(readonly fd: number, readonly name: string, header: Buffer) {
    if (!header.subarray(0, 8).equals(MAGIC)) throw new Error('bad magic');
    const f = (i: number) => header.readDoubleLE(8 + i * 8);
    [this.fromSeq, this.toSeq, this.fromOffset, this.endOffset, this.lastOffset, this.bucketCount, this.entryCount, this.postingCount] = [0, 1, 2, 3, 4, 5, 6, 7].map(f);
    this.lastId = 'sha256:' + header.toString('hex', 72, 104);
    this.genesis = 'sha256:' + header.toString('hex', 104, 136);
    const ok = [this.fromSeq, this.toSeq, this.fromOffset, this.endOffset, this.lastOffset, this.bucketCount, this.entryCount, this.postingCount].every((v) => Number.isSafeInteger(v) && v >= 0);
    if (!ok || this.toSeq < this.fromSeq || this.endOffset <= this.lastOffset || this.lastOffset < this.fromOffset || (this.bucketCount & (this.bucketCount - 1)) !== 0 || this.bucketCount === 0) {
      throw new Error('bad header');
    }
  }

  get count(): number {
    return this.toSeq - this.fromSeq + 1;
  }

  private read(at: number, len: number): Buffer {
    const buf = Buffer.allocUnsafe(len);
    if (len === 0) return buf;
    const n = readSync(this.fd, buf, 0, len, at);
    if (n !== len) throw new IndexDamaged(`segment ${this.name} is truncated`);
    return buf;
  }

  lookup(h1: number, h2: number, out: Posting[]): void {
    const b = h2 & (this.bucketCount - 1);
    const bk = this.read(HEADER_BYTES + b * 4, 8);
    const [start, end] = [bk.readUInt32LE(0), bk.readUInt32LE(4)];
    if (end < start || end > this.entryCount) throw new IndexDamaged(`segment ${this.name} has a bad bucket`);
    if (end === start) return;
    const entriesAt = HEADER_BYTES + (this.bucketCount + 1) * 4;
    const es = this.read(entriesAt + start * 16, (end - start) * 16);
    for (let e = 0; e < end - start; e++) {
      if (es.readUInt32LE(e * 16) !== h1 || es.readUInt32LE(e * 16 + 4) !== h2) continue;
      const first = es.readUInt32LE(e * 16 + 8);
      const count = es.readUInt32LE(e * 16 + 12);
      if (first + count > this.postingCount) throw new IndexDamaged(`segment ${this.name} has a bad entry`);
      const ps = this.read(entriesAt + this.entryCount * 16 + first * 12, count * 12);
      for (let k = 0; k < count; k++) out.push({ seq: this.fromSeq + ps.readUInt32LE(k * 12), offset: ps.readDoubleLE(k * 12 + 4) });
    }
  }
}

/** The index disagrees with itself or the ledger; the caller drops it and rebuilds. */
export class IndexDamaged extends Error {}

// ---------------------------------------------------------------------------------------------

export interface IndexOptions {
  /** Write segments (false: keep everything past the last segment in memory). Default true. */
  write?: boolean;
}

/**
 * The index of the records HEAD covers. Open it per command (it holds file descriptors) and
 * close it; a later HEAD needs a new one.
 */
export class RecordIndex {
  private constructor(
    readonly head: Head,
    private readonly segments: Segment[],
    private readonly tail: Map<string, Posting[]>,
    /** Tail lines whose id keys are not in `tail` yet (hashed on the first lookup by id). */
    private unhashed: TailLine[],
  ) {}

  static dirOf(paths: LedgerPaths): string {
    return join(paths.dir, 'index');
  }

  /**
   * The highest seq the segment files' names claim to cover, or -1: read from the directory
   * listing alone, without opening or checking anything. Only a hint for when to bring the index
   * up to date (never for what a decision relies on).
   */
  static namedThrough(paths: LedgerPaths): number {
    let names: string[];
    try {
      names = readdirSync(RecordIndex.dirOf(paths));
    } catch {
      return -1;
    }
    let through = -1;
    for (const name of names) {
      const m = SEG_RE.exec(name);
      if (m) through = Math.max(through, Number(m[2]));
    }
    return through;
  }

  /** Opens (and brings up to date, when it may write) the index for `head`. */
  static open(paths: LedgerPaths, head: Head, opts: IndexOptions = {}): RecordIndex {
    let write = opts.write ?? true;
    const dir = RecordIndex.dirOf(paths);
    if (write) {
      try {
        mkdirSync(dir, { recursive: true });
      } catch {
        write = false; // a read-only ledger: everything past the segments stays in memory
      }
    }
    // A concurrent merge can remove a segment between listing and opening; list again.
    for (let attempt = 0; ; attempt++) {
      try {
        return RecordIndex.openOnce(paths, head, dir, write);
      } catch (e) {
        if (attempt >= 4 || !(e instanceof SegmentVanished)) throw e;
      }
    }
  }

  private static openOnce(paths: LedgerPaths, head: Head, dir: string, write: boolean): RecordIndex {
    let chain = loadChain(paths, head, dir, write);
    let covered = chain.length ? chain[chain.length - 1] : null;
    let fromSeq = covered ? covered.toSeq + 1 : 0;
    let fromOffset = covered ? covered.endOffset : 0;
    const behind = head.seq - fromSeq + 1;
    if (write && (behind > DELTA_MAX_RECORDS || head.size - fromOffset > DELTA_MAX_BYTES)) {
      try {
        const rows = scanRows(paths, fromSeq, fromOffset, head.size);
        chain.push(writeSegment(dir, rows, head.genesis));
        chain = compact(paths, dir, chain, head.genesis);
      } catch (e) {
        // A reader without write access to the ledger directory still gets a correct (slower)
        // answer: whatever is not in a segment is scanned below.
        if (!(e instanceof LedgerError) || !(e.code === 'OP_PERMISSION' || e.code === 'OP_IO')) throw e;
      }
      covered = chain.length ? chain[chain.length - 1] : null;
      fromSeq = covered ? covered.toSeq + 1 : 0;
      fromOffset = covered ? covered.endOffset : 0;
    }
    const tail = new Map<string, Posting[]>();
    let unhashed: TailLine[] = [];
    if (fromOffset < head.size) {
      const rows = scanRows(paths, fromSeq, fromOffset, head.size, false);
      for (let i = 0; i < rows.seq.length; i++) addTail(tail, rows.h1[i], rows.h2[i], { seq: rows.seq[i], offset: rows.offset[i] });
      unhashed = rows.lines;
    }
    return new RecordIndex(head, chain, tail, unhashed);
  }

  /** Where the records filed under `key` are, in seq order. Callers verify each record. */
  lookup(key: string): Posting[] {
    if (this.unhashed.length && key.startsWith(idKey(''))) this.hashTail();
    const [h1, h2] = hash64(key);
    const out: Posting[] = [];
    for (const s of this.segments) s.lookup(h1, h2, out);
    const t = this.tail.get(`${h1}:${h2}`);
    if (t) out.push(...t);
    return out;
  }

  /** Files the tail's records under their id keys too (in seq order, as lookups expect). */
  private hashTail(): void {
    for (const { line, seq, offset } of this.unhashed) {
      const [h1, h2] = hash64(idKey(lineId(line)));
      addTail(this.tail, h1, h2, { seq, offset });
    }
    this.unhashed = [];
  }

  /** How many records are indexed in segments, and how many are scanned each open (for tests). */
  stats(): { segments: number; segmentRecords: number; tailRecords: number } {
    const segmentRecords = this.segments.reduce((n, s) => n + s.count, 0);
    return { segments: this.segments.length, segmentRecords, tailRecords: this.head.seq + 1 - segmentRecords };
  }

  close(): void {
    for (const s of this.segments) {
      try {
        closeSync(s.fd);
      } catch {
        /* already closed */
      }
    }
    this.segments.length = 0;
  }
}

function addTail(tail: Map<string, Posting[]>, h1: number, h2: number, p: Posting): void {
  const k = `${h1}:${h2}`;
  let list = tail.get(k);
  if (!list) tail.set(k, (list = []));
  list.push(p);
}

class SegmentVanished extends Error {}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already, or a read-only ledger */
  }
}

/**
 * The chain of segments from seq 0, each starting where the previous ended, every one checked
 * against HEAD and records.jsonl. A segment that does not match is dropped with all after it.
 */
function loadChain(paths: LedgerPaths, head: Head, dir: string, write: boolean): Segment[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const segs = new Map<number, { name: string; to: number }[]>();
  for (const name of names) {
    const m = SEG_RE.exec(name);
    if (!m) {
      if (write && TMP_RE.test(name)) removeOldTemp(join(dir, name));
      continue;
    }
    const [from, to] = [Number(m[1]), Number(m[2])];
    if (!segs.has(from)) segs.set(from, []);
    segs.get(from)!.push({ name, to });
  }
  const chain: Segment[] = [];
  let cursor = 0;
  let offset = 0;
  const onChain = new Set<string>();
  for (;;) {
    // The longest segment from here that HEAD covers; a shorter one if the longer does not fit.
    const candidates = (segs.get(cursor) ?? []).filter((c) => c.to <= head.seq).sort((a, b) => b.to - a.to);
    let seg: Segment | null = null;
    for (const pick of candidates) {
      const path = join(dir, pick.name);
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch (e) {
        for (const s of chain) closeSync(s.fd);
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SegmentVanished(pick.name);
        throw ioError(e, 'open index segment', path);
      }
      try {
        const header = Buffer.alloc(HEADER_BYTES);
        readSync(fd, header, 0, HEADER_BYTES, 0);
        const s = new Segment(fd, pick.name, header);
        const fits = s.fromSeq === cursor && s.toSeq === pick.to && s.fromOffset === offset && s.genesis === head.genesis && s.endOffset <= head.size;
        if (!fits || lastLineId(paths, s) !== s.lastId) throw new Error('does not match the ledger');
        seg = s;
        break;
      } catch {
        closeSync(fd);
        // Policy: a segment that disagrees with the ledger is never repaired in place; it is
        // dropped, and what it covered is indexed again from records.jsonl.
        if (write) tryUnlink(path);
      }
    }
    if (!seg) break;
    chain.push(seg);
    onChain.add(seg.name);
    cursor = seg.toSeq + 1;
    offset = seg.endOffset;
  }
  // Segments wholly covered by the chain (left by a merge that another process finished) go.
  if (write) {
    for (const [from, list] of segs) {
      for (const s of list) if (!onChain.has(s.name) && s.to < cursor && from < cursor) tryUnlink(join(dir, s.name));
    }
  }
  return chain;
}

function removeOldTemp(path: string): void {
  try {
    if (Date.now() - statSync(path).mtimeMs > 10 * 60_000) unlinkSync(path);
  } catch {
    /* another process is cleaning up too */
  }
}

/** The id of a segment's last record, recomputed from records.jsonl. */
function lastLineId(paths: LedgerPaths, seg: Segment): string {
  const len = seg.endOffset - seg.lastOffset;
  if (len > 1024 * 1024) return '';
  const fd = openSync(paths.records, 'r');
  try {
    const buf = Buffer.allocUnsafe(len);
    if (readSync(fd, buf, 0, len, seg.lastOffset) !== len || buf[len - 1] !== 0x0a) return '';
    const line = buf.toString('utf8', 0, len - 1);
    const rec = JSON.parse(line) as LedgerRecord;
    if (rec?.seq !== seg.toSeq) return '';
    return lineId(line, rec);
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}

/** Writes a segment with the durable recipe (temp, fsync, rename) and opens it. */
function writeSegment(dir: string, rows: Rows, genesis: string): Segment {
  const name = `${pad(rows.fromSeq)}-${pad(rows.toSeq)}.seg`;
  const bytes = encodeSegment(rows, genesis);
  const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}.seg`);
  try {
    const fd = openSync(tmp, 'w', 0o644);
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, done);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, name));
  } catch (e) {
    tryUnlink(tmp);
    throw ioError(e, 'write index segment', join(dir, name));
  }
  const fd = openSync(join(dir, name), 'r');
  return new Segment(fd, name, bytes.subarray(0, HEADER_BYTES));
}

/** Merges the newest segments while the older of the last two is not bigger than the newer. */
function compact(paths: LedgerPaths, dir: string, chain: Segment[], genesis: string): Segment[] {
  while (chain.length >= 2) {
    const a = chain[chain.length - 2];
    const b = chain[chain.length - 1];
    if (a.count > b.count) break;
    const merged = writeSegment(dir, scanRows(paths, a.fromSeq, a.fromOffset, b.endOffset), genesis);
    for (const s of [a, b]) {
      closeSync(s.fd);
      tryUnlink(join(dir, s.name));
    }
    chain.splice(chain.length - 2, 2, merged);
  }
  return chain;
}
