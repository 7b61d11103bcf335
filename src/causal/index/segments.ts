// The set of segment files on disk, `<ledger>/index/<from>-<to>.seg`: immutable files, each
// covering a contiguous seq range, written by the durable recipe (fs/durable.ts), so a reader
// sees a whole segment or none. They form a chain from seq 0, each checked against HEAD and
// records.jsonl as it is opened, and are merged like a binary counter (two neighbours of similar
// size become one), so a ledger of n records has O(log n) segments.
import { readdirBelow, type FileOps } from '../../fs/ops.js';
import { join } from 'node:path';
import { LedgerError, ioError } from '../../errors.js';
import { removeQuietly, replaceFileDurable } from '../../fs/durable.js';
import type { Head } from '../../record.js';
import type { LedgerPaths } from '../../store/paths.js';
import { lineIdAt, scanRows } from './rows.js';
import {
  HEADER_BYTES, IndexDamaged, checkRoot, decodeHeader, encodeSegment, lookupPostings, pageOf, tableBytes, verifiedPage,
  type Page, type Posting, type Rows, type SegmentHeader,
} from './segment-format.js';

const SEG_RE = /^(\d{13})-(\d{13})\.seg$/;
// A segment's temp file as the durable recipe names it (`.<name>.<random>.tmp`), and as this
// index named them before it used that recipe (`.tmp-<pid>-<random>.seg`).
const TMP_RE = /^\.(\d{13}-\d{13}\.seg\.[0-9a-f]+\.tmp|tmp-.*\.seg)$/;
const pad = (n: number) => String(n).padStart(13, '0');

/**
 * An open segment file: its header and page table (verified against the root when it was
 * opened), and lookups that read and verify one page at a time, each page once.
 */
export class Segment {
  private readonly verified = new Map<number, Page>();

  constructor(private readonly ops: FileOps, readonly fd: number, readonly name: string, readonly header: SegmentHeader, private readonly pages: Buffer) {}

  /** Opens the segment on `fd`: its header decoded and its root checked (throws IndexDamaged). */
  static open(ops: FileOps, fd: number, name: string): Segment {
    const read = (at: number, len: number) => {
      const buf = Buffer.alloc(len);
      if (len > 0 && ops.read(fd, buf, at) !== len) throw new IndexDamaged(`segment ${name} is truncated`);
      return buf;
    };
    const h = decodeHeader(read(0, HEADER_BYTES));
    return new Segment(ops, fd, name, h, checkRoot(h, read(0, tableBytes(h)), name));
  }

  get fromSeq(): number {
    return this.header.fromSeq;
  }

  get toSeq(): number {
    return this.header.toSeq;
  }

  get endOffset(): number {
    return this.header.endOffset;
  }

  get count(): number {
    return this.header.toSeq - this.header.fromSeq + 1;
  }

  lookup(h1: number, h2: number, out: Posting[]): void {
    const g = pageOf(this.header, h2);
    let page = this.verified.get(g);
    if (!page) this.verified.set(g, (page = verifiedPage(this.header, this.pages, (at, len) => this.read(at, len), g, this.name)));
    lookupPostings(this.header, page, this.name, h1, h2, out);
  }

  close(): void {
    try {
      this.ops.close(this.fd);
    } catch {
      /* already closed */
    }
  }

  private read(at: number, len: number): Buffer {
    const buf = Buffer.alloc(len);
    if (len === 0) return buf;
    if (this.ops.read(this.fd, buf, at) !== len) throw new IndexDamaged(`segment ${this.name} is truncated`);
    return buf;
  }
}

/** A segment was listed but removed before it was opened (a concurrent merge); list again. */
export class SegmentVanished extends Error {}

// The listing is the one read that FileOps does not carry: a directory's names.
function listNames(dir: string): string[] | null {
  try {
    return readdirBelow(dir);
  } catch {
    return null;
  }
}

/**
 * The highest seq the segment files' names claim to cover, or -1: read from the directory
 * listing alone, without opening or checking anything. Only a hint for when to bring the index
 * up to date (never for what a decision relies on).
 */
export function namedThrough(dir: string): number {
  let through = -1;
  for (const name of listNames(dir) ?? []) {
    const m = SEG_RE.exec(name);
    if (m) through = Math.max(through, Number(m[2]));
  }
  return through;
}

function removeOldTemp(ops: FileOps, path: string): void {
  try {
    // Policy: only a temp file ten minutes old is taken for abandoned; a younger one may be a
    // write in progress in another process.
    if (Date.now() - ops.mtimeMs(path) > 10 * 60_000) ops.unlink(path);
  } catch {
    /* another process is cleaning up too */
  }
}

/**
 * The chain of segments from seq 0, each starting where the previous ended, every one checked
 * against HEAD and records.jsonl. A segment that does not match is dropped with all after it.
 */
export function loadChain(ops: FileOps, paths: LedgerPaths, head: Head, dir: string, write: boolean): Segment[] {
  const names = listNames(dir);
  if (names === null) return [];
  const segs = new Map<number, { name: string; to: number }[]>();
  for (const name of names) {
    const m = SEG_RE.exec(name);
    if (!m) {
      if (write && TMP_RE.test(name)) removeOldTemp(ops, join(dir, name));
      continue;
    }
    const [from, to] = [Number(m[1]), Number(m[2])];
    if (!segs.has(from)) segs.set(from, []);
    segs.get(from)!.push({ name, to });
  }
  const chain: Segment[] = [];
  let cursor = 0;
  let offset = 0;
  let prevId: string | null = null;
  const onChain = new Set<string>();
  for (;;) {
    // The longest segment from here that HEAD covers; a shorter one if the longer does not fit.
    const candidates = (segs.get(cursor) ?? []).filter((c) => c.to <= head.seq).sort((a, b) => b.to - a.to);
    let seg: Segment | null = null;
    for (const pick of candidates) {
      const path = join(dir, pick.name);
      let fd: number;
      try {
        fd = ops.open(path, 'r');
      } catch (e) {
        for (const s of chain) s.close();
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new SegmentVanished(pick.name);
        throw ioError(e, 'open index segment', path);
      }
      try {
        const opened = Segment.open(ops, fd, pick.name);
        const h = opened.header;
        // It continues the chain (the first record links to the last one before it), names this
        // ledger, and ends on the record that is there now; one ending at HEAD ends on its tail.
        const fits = h.fromSeq === cursor && h.toSeq === pick.to && h.fromOffset === offset && h.prevId === prevId && h.genesis === head.genesis &&
          h.endOffset <= head.size && (h.toSeq !== head.seq || (h.lastId === head.tail && h.endOffset === head.size));
        if (!fits || lineIdAt(ops, paths, h.toSeq, h.lastOffset, h.endOffset) !== h.lastId) throw new IndexDamaged('does not match the ledger');
        seg = opened;
        break;
      } catch {
        ops.close(fd);
        // Policy: a segment that disagrees with the ledger is never repaired in place; it is
        // dropped, and what it covered is indexed again from records.jsonl.
        if (write) removeQuietly(ops, path);
      }
    }
    if (!seg) break;
    chain.push(seg);
    onChain.add(seg.name);
    cursor = seg.toSeq + 1;
    offset = seg.endOffset;
    prevId = seg.header.lastId;
  }
  // Segments wholly covered by the chain (left by a merge that another process finished) go.
  if (write) {
    for (const [from, list] of segs) {
      for (const s of list) if (!onChain.has(s.name) && s.to < cursor && from < cursor) removeQuietly(ops, join(dir, s.name));
    }
  }
  return chain;
}

/**
 * Writes a segment of `rows` with the durable recipe (a random temp name, fsync, rename, fsync
 * of the directory) and opens it. Throws OP_IO or OP_PERMISSION when the disk refuses.
 */
export function writeSegment(ops: FileOps, dir: string, rows: Rows, genesis: string): Segment {
  const name = `${pad(rows.fromSeq)}-${pad(rows.toSeq)}.seg`;
  const path = join(dir, name);
  const bytes = encodeSegment(rows, genesis);
  let fd: number;
  try {
    replaceFileDurable(ops, dir, name, bytes);
    fd = ops.open(path, 'r');
  } catch (e) {
    throw e instanceof LedgerError ? e : ioError(e, 'write index segment', path);
  }
  const h = decodeHeader(bytes.subarray(0, HEADER_BYTES));
  return new Segment(ops, fd, name, h, checkRoot(h, bytes, name));
}

/** Merges the newest segments while the older of the last two is not bigger than the newer. */
export function compact(ops: FileOps, paths: LedgerPaths, dir: string, chain: Segment[], genesis: string): Segment[] {
  while (chain.length >= 2) {
    const a = chain[chain.length - 2];
    const b = chain[chain.length - 1];
    if (a.count > b.count) break;
    // Scanned again, linked from what came before a to b's last record.
    const rows = scanRows(ops, paths, { fromSeq: a.fromSeq, fromOffset: a.header.fromOffset, endOffset: b.endOffset, prevId: a.header.prevId, endId: b.header.lastId });
    const merged = writeSegment(ops, dir, rows, genesis);
    for (const s of [a, b]) {
      s.close();
      removeQuietly(ops, join(dir, s.name));
    }
    chain.splice(chain.length - 2, 2, merged);
  }
  return chain;
}
