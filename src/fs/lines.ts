// The one line reader of records.jsonl for the store and the causal layer, over the FileOps
// seam: forward over a byte range, and backward from a line's end. A stored line is its bytes
// and a newline (SPEC 4: one record per line, at most 1 MiB with the newline). Both directions
// refuse, as OP_CORRUPT, what no reader may show as records: a file shorter than the range, a
// line over 1 MiB, bytes that do not end in a newline where the range ends.
// (audit/lines.ts is the auditor's own reader: the independent second reader shares no I/O code.)
import { LedgerError, ioError, RUN_AUDIT } from '../errors.js';
import { MAX_LINE_BYTES } from '../record.js';
import type { FileOps } from './ops.js';

/**
 * Opens `path` for these readers: a regular file, not through a link, without blocking
 * (FileOps.openRegular: a FIFO or device planted as records.jsonl is refused at once, exit 3);
 * a file that cannot be opened is OP_IO (or OP_PERMISSION).
 */
export function openToRead(ops: FileOps, path: string): number {
  try {
    return ops.openRegular ? ops.openRegular(path) : ops.open(path, 'r');
  } catch (e) {
    throw ioError(e, 'open', path);
  }
}

/** One line: its bytes without the newline, and the offset where it starts. */
export interface StoredLine {
  bytes: Buffer;
  offset: number;
}

const MAX_CHUNK = 4 << 20;

const corrupt = (path: string, what: string, offset: number) =>
  new LedgerError('OP_CORRUPT', `${path} ${what}`, { path, offset }, RUN_AUDIT);

const overLong = (path: string, offset: number) => corrupt(path, `has a line over 1 MiB at byte ${offset}`, offset);

/**
 * Every line in [from, to) of the open file `fd` (named `path` in errors), in order, read in
 * chunks that start at `firstChunk` bytes and double up to 4 MiB: a caller after one short line
 * reads little, a scan of the whole file reads in large steps. Memory is one chunk plus one line.
 * A line's bytes are valid until the generator resumes: a caller that keeps them copies them.
 * `from` must be where a line starts. Throws OP_CORRUPT when the file ends before `to`, a line
 * is over 1 MiB, or bytes after the last newline before `to` have none (a line cut off).
 */
export function* linesForward(ops: FileOps, fd: number, path: string, from: number, to: number, firstChunk = 1 << 20): Generator<StoredLine> {
  let chunk = Math.max(1, firstChunk);
  let buf = Buffer.allocUnsafe(0);
  let carry: Buffer | null = null; // the start of a line whose newline is in a later chunk
  let pos = from;
  let lineStart = from;
  while (pos < to) {
    const want = Math.min(chunk, to - pos);
    if (buf.length < want) buf = Buffer.allocUnsafe(want);
    const n = ops.read(fd, buf.subarray(0, want), pos);
    if (n <= 0) throw corrupt(path, `ends at byte ${pos}, before byte ${to}`, pos);
    pos += n;
    chunk = Math.min(MAX_CHUNK, chunk * 2);
    const data: Buffer = carry ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    let i = 0;
    for (let nl = data.indexOf(0x0a, i); nl >= 0; nl = data.indexOf(0x0a, i)) {
      if (nl - i + 1 > MAX_LINE_BYTES) throw overLong(path, lineStart);
      yield { bytes: data.subarray(i, nl), offset: lineStart };
      lineStart += nl + 1 - i;
      i = nl + 1;
    }
    // Copied: `buf` is read into again.
    carry = i < data.length ? Buffer.from(data.subarray(i)) : null;
    if (carry && carry.length + 1 > MAX_LINE_BYTES) throw overLong(path, lineStart);
  }
  if (carry) throw corrupt(path, `does not end with a newline at byte ${to}`, to);
}

/**
 * The line that ends at `end` (its newline is the byte at `end - 1`), read backwards in chunks
 * of 4 KiB, then 64 KiB, then 1 MiB, until its start (the byte after the newline before it, or
 * byte 0) is found. The bytes are the caller's to keep. Throws OP_CORRUPT when there is no
 * newline at `end - 1` (or `end` is 0), the file is shorter than `end`, or the line is over 1 MiB.
 */
export function lineEndingAt(ops: FileOps, fd: number, path: string, end: number): StoredLine {
  if (end <= 0) throw corrupt(path, 'has no line ending at byte 0', 0);
  const chunks: Buffer[] = [];
  let lo = end; // the chunks read so far cover [lo, end)
  for (let chunk = 4096; ; chunk = Math.min(chunk * 16, MAX_LINE_BYTES)) {
    const from = Math.max(0, lo - chunk);
    const part = Buffer.allocUnsafe(lo - from);
    if (readFully(ops, fd, part, from) !== part.length) throw corrupt(path, `is shorter than ${end} bytes`, end);
    if (lo === end && part[part.length - 1] !== 0x0a) throw corrupt(path, `does not end a line at byte ${end}`, end);
    chunks.unshift(part);
    // The newline that ends the line before this one (not the one that ends this line).
    const searchFrom = lo === end ? part.length - 2 : part.length - 1;
    const nl = searchFrom < 0 ? -1 : part.lastIndexOf(0x0a, searchFrom); // a negative offset counts from the end
    lo = from;
    if (nl >= 0 || from === 0) {
      const start = nl >= 0 ? from + nl + 1 : 0;
      if (end - start > MAX_LINE_BYTES) throw overLong(path, start);
      const all = chunks.length === 1 ? part : Buffer.concat(chunks);
      return { bytes: all.subarray(start - from, all.length - 1), offset: start };
    }
    if (end - lo >= MAX_LINE_BYTES) throw overLong(path, lo);
  }
}

/** Reads until `buf` is full or the file ends (a read may return fewer bytes than asked); how many it read. */
export function readFully(ops: FileOps, fd: number, buf: Buffer, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = ops.read(fd, buf.subarray(got), position + got);
    if (n <= 0) break;
    got += n;
  }
  return got;
}
