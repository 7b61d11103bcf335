// Reading records.jsonl as lines, in fixed-size chunks (constant memory), and decoding a line.
// This reader is the auditor's own, not src/fs/lines.ts: the auditor is the independent second
// reader and imports no I/O code of the writer's (test/audit/independence.test.ts forbids it).
import { readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { MAX_LINE_BYTES } from '../src/record.js';

/** One line of records.jsonl, without its newline. Valid only until the reader moves on. */
export interface RawLine {
  /** The seq this line must have: the floor's seq + 1 (or 0), plus its index. */
  pos: number;
  /** Byte offset where the line starts. */
  offset: number;
  /** The line's bytes without the newline; empty when `oversize`. */
  bytes: Buffer;
  /** Its length in bytes without the newline (also when `oversize`). */
  length: number;
  /** Longer than SPEC 4's 1 MiB (newline included): its bytes were skipped, not buffered. */
  oversize: boolean;
}

export interface ReadEnd {
  /** The offset just past the last complete line. */
  consumed: number;
  /** Bytes after the last newline before `end` (a line cut off at `end`, or by EOF). */
  trailing: number;
  /** The file ended before `end`. */
  short: boolean;
}

export const CHUNK_BYTES = 1 << 20;
const MAX_CONTENT = MAX_LINE_BYTES - 1;

/**
 * Every complete line in [start, end) of an open file, streaming: at most one chunk plus one
 * line of at most 1 MiB is held at a time. An over-long line is reported, then skipped up to its
 * newline without being buffered.
 */
export function* readLines(fd: number, start: number, end: number, firstPos: number, done: ReadEnd, chunkBytes = CHUNK_BYTES): Generator<RawLine> {
  const buf = Buffer.allocUnsafe(MAX_CONTENT + 1 + chunkBytes);
  let have = 0; // bytes in buf, starting at file offset `base`
  let base = start;
  let pos = firstPos;
  let skipping = -1; // >= 0: inside an over-long line that began at this offset
  let skipped = 0;
  let filePos = start;
  done.short = false;
  for (;;) {
    const want = Math.min(chunkBytes, end - filePos);
    const n = want > 0 ? readSync(fd, buf, have, want, filePos) : 0;
    if (want > 0 && n === 0) done.short = true;
    filePos += n;
    const limit = have + n;
    const filled = buf.subarray(0, limit); // never search the stale bytes past the data
    let lineStart = 0;
    let scan = have;
    for (;;) {
      const nl = filled.indexOf(0x0a, scan);
      if (nl < 0) break;
      if (skipping >= 0) {
        yield { pos: pos++, offset: skipping, bytes: buf.subarray(0, 0), length: skipped + nl, oversize: true };
        skipping = -1;
      } else if (nl - lineStart > MAX_CONTENT) {
        yield { pos: pos++, offset: base + lineStart, bytes: buf.subarray(0, 0), length: nl - lineStart, oversize: true };
      } else {
        yield { pos: pos++, offset: base + lineStart, bytes: buf.subarray(lineStart, nl), length: nl - lineStart, oversize: false };
      }
      lineStart = nl + 1;
      scan = lineStart;
    }
    // Keep the unfinished line at the front of the buffer.
    const rest = limit - lineStart;
    if (skipping >= 0) {
      skipped += rest;
      have = 0;
      base += limit;
    } else if (rest > MAX_CONTENT) {
      // No newline within 1 MiB: this line is too long whatever follows; stop buffering it.
      skipping = base + lineStart;
      skipped = rest;
      have = 0;
      base += limit;
    } else {
      buf.copyWithin(0, lineStart, limit);
      have = rest;
      base += lineStart;
    }
    if (n === 0) {
      done.consumed = skipping >= 0 ? skipping : base;
      done.trailing = skipping >= 0 ? skipped : have;
      return;
    }
  }
}

/** Reads up to `max` bytes at `offset` (fewer at EOF). */
export function readAt(fd: number, offset: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(max);
  let got = 0;
  while (got < max) {
    const n = readSync(fd, buf, got, max - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

// ---------------------------------------------------------------------------------------------
// Decoding a line for the canonical check (SPEC 4: a line is a record only if its bytes are
// exactly JCS(JSON.parse(line)) + "\n"). The check itself and the record id from a line are
// src/canonical.ts's (isCanonicalText, idFromLine), one definition for every reader.

/**
 * Decodes a line's bytes as UTF-8, or returns null. Policy: invalid UTF-8 is refused here,
 * before JSON.parse: Node's decoder would turn each bad byte into U+FFFD and the canonical
 * comparison of strings would no longer be a comparison of bytes.
 */
export function decodeLine(bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
