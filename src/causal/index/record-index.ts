// The derived index of the causal layer: which records mention an operation, a revoked target,
// a consumed handoff, or have a given id, so that `gate` and an idempotent `append` read a
// handful of lines instead of the whole of records.jsonl (issue 4, scale). README.md in this
// folder says which file owns what.
//
// What it is trusted for, and what not (SPEC 3: derivable, never trusted by the auditor):
// - It only *locates* records: it answers "which seqs/offsets mention key K". Every record the
//   caller relies on is then read from records.jsonl and verified from its bytes (see
//   verified.ts). A wrong offset or seq is caught there, never believed.
// - Policy: it is trusted for *completeness* (that no record mentioning K is missing) only as far
//   as it verifies: every range was scanned with each line hashed and linked to the one before it
//   (rows.ts), the segments chain (each names the id its first record links to, the genesis, the
//   byte range and the id of its last record, checked against records.jsonl) up to HEAD's tail,
//   and each segment's tables are checked against its digests as they are read
//   (segment-format.ts). A segment that does not verify is dropped and rebuilt. What remains: the
//   digests are not keyed, so someone who may write .ledger/index/ can write a consistent segment
//   that leaves a record out (docs/guarantees.md).
//
// Records past the last segment (at most DELTA_MAX_RECORDS of them in steady state) are scanned
// from records.jsonl on each open (linked and hashed, rows.ts) and kept in memory.
import { join } from 'node:path';
import { LedgerError } from '../../errors.js';
import { realFileOps, type FileOps } from '../../fs/ops.js';
import type { Head } from '../../record.js';
import type { LedgerPaths } from '../../store/paths.js';
import { hash64 } from './hash.js';
import { scanRows } from './rows.js';
import { IndexDamaged, type Posting } from './segment-format.js';
import { Segment, SegmentVanished, compact, loadChain, namedThrough, writeSegment } from './segments.js';
import { tailRows } from './tail-memo.js';

/** Past this many unindexed records (or bytes), the tail is written as a segment. */
export const DELTA_MAX_RECORDS = 128;
const DELTA_MAX_BYTES = 256 * 1024;

export interface IndexOptions {
  /** Write segments (false: keep everything past the last segment in memory). Default true. */
  write?: boolean;
  /** The disk seam; the real disk unless a test gives another. */
  ops?: FileOps;
  /** Ignore the segment files on disk and index from records.jsonl (a rebuild after damage). */
  fresh?: boolean;
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
  ) {}

  static dirOf(paths: LedgerPaths): string {
    return join(paths.dir, 'index');
  }

  /**
   * The highest seq the segment files' names claim to cover, or -1: read from the directory
   * listing alone. Only a hint for when to bring the index up to date.
   */
  static namedThrough(paths: LedgerPaths): number {
    return namedThrough(RecordIndex.dirOf(paths));
  }

  /** Opens (and brings up to date, when it may write) the index for `head`. */
  static open(paths: LedgerPaths, head: Head, given: IndexOptions = {}): RecordIndex {
    // The segments are a cache (../../cache/ 'index'): without the Ledger's caches, none is read or
    // written, and what the command needs is scanned into memory.
    const opts = { ...given, ...(paths.cache ? paths.cache.indexOptions() : { write: false, fresh: true }) };
    const ops = opts.ops ?? realFileOps;
    let write = opts.write ?? true;
    const dir = RecordIndex.dirOf(paths);
    if (write) {
      try {
        ops.mkdir(dir, 0o755);
      } catch {
        write = false; // a read-only ledger: everything past the segments stays in memory
      }
    }
    // A concurrent merge can remove a segment between listing and opening; list again.
    for (let attempt = 0; ; attempt++) {
      try {
        return RecordIndex.openOnce(ops, paths, head, dir, write, opts.fresh ?? false);
      } catch (e) {
        if (attempt >= 4 || !(e instanceof SegmentVanished)) throw e;
      }
    }
  }

  private static openOnce(ops: FileOps, paths: LedgerPaths, head: Head, dir: string, write: boolean, fresh: boolean): RecordIndex {
    let chain = fresh ? [] : loadChain(ops, paths, head, dir, write);
    let covered = chain.length ? chain[chain.length - 1] : null;
    let fromSeq = covered ? covered.toSeq + 1 : 0;
    let fromOffset = covered ? covered.endOffset : 0;
    let prevId = covered ? covered.header.lastId : null;
    const behind = head.seq - fromSeq + 1;
    if (write && (behind > DELTA_MAX_RECORDS || head.size - fromOffset > DELTA_MAX_BYTES)) {
      try {
        // Linked from the last segment to HEAD's tail (rows.ts): what HEAD's chain commits to.
        const rows = scanRows(ops, paths, { fromSeq, fromOffset, endOffset: head.size, prevId, endId: head.tail });
        chain.push(writeSegment(ops, dir, rows, head.genesis));
        chain = compact(ops, paths, dir, chain, head.genesis);
      } catch (e) {
        // A reader without write access to the ledger directory still gets a correct (slower)
        // answer: whatever is not in a segment is scanned below.
        if (!(e instanceof LedgerError) || !(e.code === 'OP_PERMISSION' || e.code === 'OP_IO')) throw e;
      }
      covered = chain.length ? chain[chain.length - 1] : null;
      fromSeq = covered ? covered.toSeq + 1 : 0;
      fromOffset = covered ? covered.endOffset : 0;
      prevId = covered ? covered.header.lastId : null;
    }
    const tail = new Map<string, Posting[]>();
    if (fromOffset < head.size) {
      const rows = tailRows(ops, paths, head.genesis, { fromSeq, fromOffset, endOffset: head.size, prevId, endId: head.tail });
      for (let i = 0; i < rows.seq.length; i++) addTail(tail, rows.h1[i], rows.h2[i], { seq: rows.seq[i], offset: rows.offset[i] });
    } else if (fromSeq !== head.seq + 1) {
      // Segments that end at HEAD's size but not at its seq disagree with HEAD.
      for (const s of chain) s.close();
      throw new IndexDamaged(`the index ends at seq ${fromSeq - 1}, HEAD at seq ${head.seq}`);
    }
    return new RecordIndex(head, chain, tail);
  }

  /** Where the records filed under `key` are, in seq order. Callers verify each record. */
  lookup(key: string): Posting[] {
    const [h1, h2] = hash64(key);
    const out: Posting[] = [];
    for (const s of this.segments) s.lookup(h1, h2, out);
    const t = this.tail.get(`${h1}:${h2}`);
    if (t) for (const p of t) out.push(p); // not push(...t): the tail of a read-only index can hold every record
    return out;
  }

  /** How many records are indexed in segments, and how many are scanned each open (for tests). */
  stats(): { segments: number; segmentRecords: number; tailRecords: number } {
    const segmentRecords = this.segments.reduce((n, s) => n + s.count, 0);
    return { segments: this.segments.length, segmentRecords, tailRecords: this.head.seq + 1 - segmentRecords };
  }

  close(): void {
    for (const s of this.segments) s.close();
    this.segments.length = 0;
  }
}

function addTail(tail: Map<string, Posting[]>, h1: number, h2: number, p: Posting): void {
  const k = `${h1}:${h2}`;
  let list = tail.get(k);
  if (!list) tail.set(k, (list = []));
  list.push(p);
}
