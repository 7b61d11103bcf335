// Reading records.jsonl as lines, in fixed-size chunks (constant memory), and the two per-line
// computations the layers share: the canonical check (SPEC 4) and the record id (SPEC 4), both
// done without a second canonicalization of each record.
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { canonicalJson, recordId } from '../src/canonical.js';
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
// The canonical check (SPEC 4): a line is a record only if its bytes are exactly
// JCS(JSON.parse(line)) + "\n".

/**
 * Decodes a line's bytes as UTF-8, or returns null. Policy: invalid UTF-8 is refused here,
 * before JSON.parse: Node's decoder would turn each bad byte into U+FFFD and the canonical
 * comparison of strings would no longer be a comparison of bytes.
 */
export function decodeLine(bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

const SURROGATE_RE = /[\uD800-\uDFFF]/;

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/**
 * True when JSON.stringify(value) is already the JCS text: every object's keys are in JCS order
 * (UTF-16 code units, which is how JS compares strings), every number is a safe integer, and no
 * string holds a lone surrogate (JCS and `canonicalize` refuse those). Then `canonicalize`, which
 * writes sorted keys with JSON.stringify's own escaping, would produce the same text.
 */
function isSortedSafe(v: unknown): boolean {
  if (typeof v === 'string') return !SURROGATE_RE.test(v) || !hasLoneSurrogate(v);
  if (typeof v === 'number') return Number.isSafeInteger(v);
  if (v === null || typeof v === 'boolean') return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!isSortedSafe(x)) return false;
    return true;
  }
  const o = v as Record<string, unknown>;
  let prev: string | null = null;
  for (const k in o) {
    if (prev !== null && !(prev < k)) return false;
    if (SURROGATE_RE.test(k) && hasLoneSurrogate(k)) return false;
    if (!isSortedSafe(o[k])) return false;
    prev = k;
  }
  return true;
}

/**
 * SPEC 4's canonical check of a parsed line: `canonicalJson(value) === text`. The common case is
 * decided by the native JSON.stringify plus one walk (about three times faster than
 * `canonicalize`); anything else (integer-like keys, which JS objects reorder; escapes; numbers)
 * falls back to `canonicalJson` itself, whose verdict is final. A throw there (a lone surrogate,
 * an unsafe number, a nesting too deep) means not canonical: a check that cannot decide says no.
 */
export function isCanonicalText(value: unknown, text: string): boolean {
  try {
    if (JSON.stringify(value) === text && isSortedSafe(value)) return true;
    return canonicalJson(value) === text;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The record id (SPEC 4): "sha256:" + hex(SHA-256(UTF-8(JCS(r without "sig")))).

/**
 * The id of a record whose line is canonical. JCS writes members in sorted order with no
 * whitespace, so JCS(r without sig) is the line with the `"sig":{...}` member (and one comma)
 * cut out; hashing the two remaining byte ranges avoids a second canonicalization. The member's
 * text is rebuilt from the parsed value; if it does not occur exactly once (it always does for a
 * schema-valid record), the id is computed the slow way.
 */
export function lineRecordId(bytes: Buffer, record: { sig: { alg: string; key: string; value: string } }): string {
  const s = record.sig;
  // JCS of the sig object: its three members are already in sorted order.
  const member = `"sig":{"alg":${JSON.stringify(s.alg)},"key":${JSON.stringify(s.key)},"value":${JSON.stringify(s.value)}}`;
  const at = bytes.indexOf(member, 0, 'utf8');
  if (at < 0 || bytes.indexOf(member, at + 1, 'utf8') >= 0) return recordId(record);
  const after = at + Buffer.byteLength(member);
  const hash = createHash('sha256');
  if (bytes[at - 1] === 0x2c) {
    // ...,"sig":{...}  -> drop the comma before it
    hash.update(bytes.subarray(0, at - 1)).update(bytes.subarray(after));
  } else if (bytes[after] === 0x2c) {
    // {"sig":{...},... -> drop the comma after it
    hash.update(bytes.subarray(0, at)).update(bytes.subarray(after + 1));
  } else {
    hash.update(bytes.subarray(0, at)).update(bytes.subarray(after));
  }
  return 'sha256:' + hash.digest('hex');
}
