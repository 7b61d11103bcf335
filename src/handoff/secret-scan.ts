// The second line of issue 13 finding 3: whatever a test command printed, a record, a blob or a
// view never carries the signing key. (The first line is that the command runs without the
// key's privileges, fs/boundary.ts.) Output is scanned for the key's secret in the forms a
// command would print it:
//   - the 32-byte seed raw, base64url (as the key file holds it), base64 std, hex (either case)
//   - the key file's bytes, and the file as base64 or hex (`base64 key`, `xxd -p key`)
// Each form of the seed is cut into aligned windows (plus the last one), so a partial leak is
// caught too: any 15 consecutive base64 characters of the seed (90 bits), 23 hex digits (92 bits)
// or 11 raw bytes contain one whole window. The file's forms are looked for whole: its JSON
// around the seed is the same in every key file, so windows of it would refuse harmless output
// (a partial leak of the file is a partial leak of the seed, caught above). The text forms are also looked for with the output's whitespace removed, which
// catches them wrapped over lines (`base64` wraps at 76, `xxd -p` at 60).
// Policy: a random match of a window is about 2^-48 per position: a false refusal is far less
// likely than a leak is costly. What is not caught (a transformed key: reversed, byte-swapped,
// encrypted) is the first line's job; docs/guarantees.md says so.
import { readSync } from 'node:fs';
import { realFileOps } from '../fs/ops.js';

/** What the ledger knows of its key: the seed, and the key file's path and bytes when it was read from one. */
export interface KeySecret { seed: Uint8Array; file: Uint8Array | null; path: string | null }

const B64_WINDOW = 8;
const HEX_WINDOW = 12;
const RAW_WINDOW = 6;
const CHUNK = 1 << 20;
const WHITESPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);

function windows(s: Buffer, k: number): Buffer[] {
  if (s.length <= k) return [s];
  const out: Buffer[] = [];
  for (let i = 0; i + k <= s.length; i += k) out.push(s.subarray(i, i + k));
  out.push(s.subarray(s.length - k));
  return out;
}

/** base64url, base64 std (unpadded), hex and HEX of `bytes`, cut into windows (or whole: Infinity). */
function textForms(bytes: Uint8Array, b64Window: number, hexWindow: number): Buffer[] {
  const b = Buffer.from(bytes);
  const out: Buffer[] = [];
  for (const s of [b.toString('base64url'), b.toString('base64').replace(/=+$/, '')]) out.push(...windows(Buffer.from(s), b64Window));
  for (const s of [b.toString('hex'), b.toString('hex').toUpperCase()]) out.push(...windows(Buffer.from(s), hexWindow));
  return out;
}

function stripWhitespace(b: Buffer): Buffer {
  const out = Buffer.alloc(b.length);
  let n = 0;
  for (const c of b) if (!WHITESPACE.has(c)) out[n++] = c;
  return out.subarray(0, n);
}

function unique(xs: Buffer[]): Buffer[] {
  const seen = new Set<string>();
  return xs.filter((x) => x.length > 0 && !seen.has(x.toString('hex')) && seen.add(x.toString('hex')));
}

/** The forms of one key a scan looks for, and how many bytes a chunk must carry into the next. */
interface Needles {
  raw: Buffer[];
  text: Buffer[];
  keep: number;
}

// Made once per key (a writer scans every string of a draft, each with its own scanner).
const needlesOf = new WeakMap<KeySecret, Needles>();

function needles(secret: KeySecret): Needles {
  let n = needlesOf.get(secret);
  if (!n) {
    const file = secret.file ? Buffer.from(secret.file) : null;
    const raw = unique([...windows(Buffer.from(secret.seed), RAW_WINDOW), ...(file ? [file] : [])]);
    const text = unique([
      ...textForms(secret.seed, B64_WINDOW, HEX_WINDOW),
      ...(file ? [...textForms(file, Infinity, Infinity), stripWhitespace(file)] : []),
    ]);
    n = { raw, text, keep: Math.max(...raw.map((x) => x.length), ...text.map((x) => x.length)) - 1 };
    needlesOf.set(secret, n);
  }
  return n;
}

/** A scanner fed the output in chunks; `found` once any form of the key was seen. */
export class SecretScanner {
  private readonly raw: Buffer[];
  private readonly text: Buffer[];
  private readonly keep: number;
  private rawTail = Buffer.alloc(0);
  private textTail = Buffer.alloc(0);
  found = false;

  constructor(secret: KeySecret) {
    ({ raw: this.raw, text: this.text, keep: this.keep } = needles(secret));
  }

  feed(chunk: Uint8Array): void {
    if (this.found || chunk.length === 0) return;
    const raw = Buffer.concat([this.rawTail, chunk]);
    const text = Buffer.concat([this.textTail, stripWhitespace(Buffer.from(chunk))]);
    if (this.raw.some((n) => raw.includes(n)) || this.text.some((n) => text.includes(n))) this.found = true;
    this.rawTail = raw.subarray(Math.max(0, raw.length - this.keep));
    this.textTail = text.subarray(Math.max(0, text.length - this.keep));
  }
}

/** Whether `data` (or a string, as UTF-8) carries any form of the key. */
export function containsSecret(secret: KeySecret, data: Uint8Array | string): boolean {
  const s = new SecretScanner(secret);
  s.feed(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  return s.found;
}

/**
 * Whether any string inside `value` (a draft: its text fields, lists, maps; keys included)
 * carries the key. Speed: the strings are scanned as one text, joined by line feeds (one scan of
 * a draft, not one per string: 2 ms of a cold `checkpoint` was its two dozen scans). Policy: every
 * form inside one string is inside the joined text, so nothing is missed; a form that only
 * straddles two strings is refused too (fails closed, at the same 2^-48 per position as any
 * random match).
 */
export function valueContainsSecret(secret: KeySecret, value: unknown): boolean {
  const strings: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(collect);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) (strings.push(k), collect(x));
  };
  collect(value);
  return strings.length > 0 && containsSecret(secret, strings.join('\n'));
}

/** Scans the first `size` bytes of an open file, in 1 MiB chunks (the file is never read whole). */
export function fileContainsSecret(secret: KeySecret, fd: number, size: number): boolean {
  const s = new SecretScanner(secret);
  const buf = Buffer.alloc(Math.min(CHUNK, Math.max(size, 1)));
  for (let pos = 0; pos < size && !s.found; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
    if (n <= 0) break;
    s.feed(buf.subarray(0, n));
    pos += n;
  }
  return s.found;
}

/** The same, by path (the scratch file of a run is scanned through its own descriptor instead). */
export function pathContainsSecret(secret: KeySecret, path: string, size: number): boolean {
  const fd = realFileOps.open(path, 'r');
  try {
    return fileContainsSecret(secret, fd, size);
  } finally {
    realFileOps.close(fd);
  }
}
