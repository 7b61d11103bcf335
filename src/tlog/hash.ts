// RFC 6962 section 2.1 hashing and the strict base64 of C2SP's formats. Pure: no I/O.
//
//   leaf hash  = SHA-256(0x00 || leaf)             (SPEC 13: the leaf is the record's line, JCS)
//   inner node = SHA-256(0x01 || left || right)
//   empty tree = SHA-256("")
import { LedgerError, type ErrorCode } from '../errors.js';

export const HASH_SIZE = 32;

// node:crypto is loaded at the first hash, not at import (as canonical.ts does), and the one-shot
// crypto.hash is used: no Hash object per call, which matters at two hashes per record.
let oneShot: typeof import('node:crypto').hash | undefined;
function sha256(bytes: Uint8Array): Uint8Array {
  oneShot ??= process.getBuiltinModule('node:crypto').hash;
  return oneShot('sha256', bytes, 'buffer') as unknown as Uint8Array;
}

/** RFC 6962: the hash of the empty tree, SHA-256 of no bytes. */
export const EMPTY_ROOT: Uint8Array = Uint8Array.from(Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex'));

// Speed (issue 26: a batch hashes every line and about one inner node per record): the input
// 0x00 || leaf and 0x01 || left || right is put together in one scratch buffer, reused, instead
// of a new one per hash (a batch of 200,000 records made 400,000 of them for the collector).
// Synchronous and single-threaded: nothing else runs between filling it and hashing it.
let scratch = new Uint8Array(1024);
function prefixed(prefix: number, length: number): Uint8Array {
  if (scratch.length < 1 + length) scratch = new Uint8Array(Math.max(1 + length, scratch.length * 2));
  scratch[0] = prefix;
  return scratch;
}

/** RFC 6962: MTH({d}) = SHA-256(0x00 || d). */
export function leafHash(leaf: Uint8Array | string): Uint8Array {
  const data = typeof leaf === 'string' ? Buffer.from(leaf, 'utf8') : leaf;
  const buf = prefixed(0x00, data.length);
  buf.set(data, 1);
  return sha256(buf.subarray(0, 1 + data.length));
}

/** RFC 6962: MTH(D[n]) = SHA-256(0x01 || MTH(left) || MTH(right)). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  const buf = prefixed(0x01, left.length + right.length);
  buf.set(left, 1);
  buf.set(right, 1 + left.length);
  return sha256(buf.subarray(0, 1 + left.length + right.length));
}

export function hashEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

/** Standard base64 (RFC 4648 section 4) with padding, as every C2SP format writes it. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Strict standard base64, or null: padding required, no whitespace, and the canonical encoding
 * only (Node's decoder drops non-zero trailing bits; re-encoding catches that), so one value has
 * one text. `length`, when given, is the only length accepted.
 */
export function fromBase64(text: string, length?: number): Uint8Array | null {
  if (typeof text !== 'string' || !B64_RE.test(text)) return null;
  const buf = Buffer.from(text, 'base64');
  if (buf.toString('base64') !== text) return null;
  if (length !== undefined && buf.length !== length) return null;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** A base64 hash line, or a coded error naming what held it. Attacker-controlled input. */
export function parseHash(text: string, what: string, code: ErrorCode): Uint8Array {
  const h = fromBase64(text, HASH_SIZE);
  if (h === null) throw new LedgerError(code, `${what}: expected a base64 SHA-256 hash, got ${quote(text)}`, { what });
  return h;
}

// Policy: sizes and indexes are JavaScript integers, so a tree holds at most 2^53 - 1 leaves; a
// larger number in a note, proof or request is refused as malformed, never rounded.
const DECIMAL_RE = /^(?:0|[1-9][0-9]{0,15})$/;

/** ASCII decimal with no leading zeroes (C2SP), at most 2^53 - 1; null when it is not one. */
export function parseDecimal(text: string): number | null {
  if (!DECIMAL_RE.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** A short, printable quotation of attacker-controlled text for a one-line error. */
export function quote(text: string): string {
  const t = JSON.stringify(text.length > 60 ? text.slice(0, 60) + '…' : text);
  return t;
}
