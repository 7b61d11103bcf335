// The only place values become bytes (RFC 8785 JCS via `canonicalize`) and bytes become ids
// (SHA-256). Pure: no I/O. SPEC 2 and SPEC 4.
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { LedgerError } from './errors.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const encoder = new TextEncoder();

export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

/**
 * JCS text of a value. Policy: stricter than `canonicalize` itself, which silently drops
 * `undefined` members, follows `toJSON` and accepts any finite number. A record's bytes must be
 * exactly what the caller built, so each of those throws here (SPEC 2: safe integers only).
 */
export function canonicalJson(value: unknown): string {
  assertPlainJson(value, '$');
  const text = canonicalize(value);
  if (text === undefined) throw new LedgerError('INPUT_CANONICAL', 'value has no JSON form');
  return text;
}

// With the u flag, a surrogate code unit matches only when it is not half of a pair.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function assertPlainJson(v: unknown, path: string, open: Set<object> = new Set()): void {
  if (v === null || typeof v === 'boolean') return;
  if (typeof v === 'string') {
    // Policy: RFC 8785 3.2.2.2 says lone surrogates MUST make JCS fail; canonicalize escapes them.
    if (LONE_SURROGATE.test(v)) throw new LedgerError('INPUT_CANONICAL', `${path}: string has a lone surrogate (not Unicode)`, { path });
    return;
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) {
      throw new LedgerError('INPUT_CANONICAL', `${path}: expected a safe integer, got ${String(v)}`, { path });
    }
    return;
  }
  if (typeof v === 'object' && open.has(v)) {
    throw new LedgerError('INPUT_CANONICAL', `${path}: a value that contains itself has no JSON form`, { path });
  }
  if (Array.isArray(v)) {
    open.add(v);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw new LedgerError('INPUT_CANONICAL', `${path}[${i}]: holes are not JSON`, { path });
      assertPlainJson(v[i], `${path}[${i}]`, open);
    }
    open.delete(v);
    return;
  }
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      throw new LedgerError('INPUT_CANONICAL', `${path}: expected a plain object, got ${proto?.constructor?.name ?? 'an exotic object'}`, { path });
    }
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      throw new LedgerError('INPUT_CANONICAL', `${path}: objects with toJSON are not encoded`, { path });
    }
    open.add(v);
    for (const [k, x] of Object.entries(v)) {
      if (LONE_SURROGATE.test(k)) throw new LedgerError('INPUT_CANONICAL', `${path}: key has a lone surrogate (not Unicode)`, { path });
      assertPlainJson(x, `${path}.${k}`, open);
    }
    open.delete(v);
    return;
  }
  throw new LedgerError('INPUT_CANONICAL', `${path}: ${typeof v} is not JSON`, { path });
}

// The one-shot crypto.hash (Node >= 20.12) is about twice as fast as createHash for short input:
// no Hash object per call, which matters for an id per record.
export function sha256Hex(bytes: Uint8Array | string): string {
  return hash('sha256', bytes, 'hex');
}

/** `"sha256:" + 64 lowercase hex` of the bytes (SPEC 2). */
export function digestOf(bytes: Uint8Array | string): string {
  return 'sha256:' + sha256Hex(bytes);
}

export const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

/** A value with its `sig` member removed: what ids and signatures are computed over. */
export function withoutSig(value: object): Record<string, unknown> {
  const { sig: _sig, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** SPEC 4: id(r) = "sha256:" + hex(SHA-256(UTF-8(JCS(r without "sig")))). */
export function recordId(record: object): string {
  return digestOf(canonicalJson(withoutSig(record)));
}

/** SPEC 5: the digest a HEAD signature covers, computed like a record id. */
export function headDigest(head: object): string {
  return digestOf(canonicalJson(withoutSig(head)));
}

/**
 * The canonical text of an unsigned record, and a function that gives the canonical line of the
 * same record with a `sig` member added, from one canonicalisation instead of two. JCS orders
 * members by UTF-16 code units (RFC 8785 3.2.3), so the members sort into those before "sig" and
 * those after it; each member's text does not depend on its neighbours. A property test holds
 * this equal to canonicalLine({ ...unsigned, sig }).
 */
export function canonicalAroundSig(unsigned: object): { unsignedText: string; lineWithSig: (sig: object) => string } {
  assertPlainJson(unsigned, '$');
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(unsigned)) {
    if (k === 'sig') throw new LedgerError('INPUT_CANONICAL', '$.sig: an unsigned record has no sig');
    if (k < 'sig') before[k] = v;
    else after[k] = v;
  }
  const a = (canonicalize(before) as string).slice(1, -1);
  const b = (canonicalize(after) as string).slice(1, -1);
  const join = (...parts: string[]) => '{' + parts.filter((x) => x !== '').join(',') + '}';
  return {
    unsignedText: join(a, b),
    lineWithSig: (sig) => join(a, '"sig":' + canonicalJson(sig), b) + '\n',
  };
}

/** SPEC 4: the exact bytes of a record line (and of HEAD, SPEC 5). */
export function canonicalLine(value: unknown): string {
  return canonicalJson(value) + '\n';
}

// ---------------------------------------------------------------------------------------------
// base64url without padding (RFC 4648 section 5), decoded strictly.

const B64URL_RE = /^[A-Za-z0-9_-]*$/;

export function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Decodes base64url of exactly `length` bytes, or returns null. Policy: strict. Node's decoder
 * skips bad characters and ignores non-zero trailing bits; both would let two strings name one
 * key, so the alphabet is checked and the result must re-encode to the same text.
 */
export function fromBase64url(text: unknown, length: number): Uint8Array | null {
  if (typeof text !== 'string' || !B64URL_RE.test(text)) return null;
  if (text.length !== Math.ceil((length * 4) / 3)) return null;
  const buf = Buffer.from(text, 'base64url');
  if (buf.length !== length || buf.toString('base64url') !== text) return null;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

// ---------------------------------------------------------------------------------------------
// Strict JSON for files people edit (trust, keys, floors, batch lines).

/**
 * JSON.parse that also refuses duplicate object keys, which JSON.parse silently resolves to the
 * last one (a trust file with two `key` members must not mean whichever a reader picks).
 * Attacker-controlled input: throws INPUT_JSON with a one-line reason naming `what`.
 */
export function parseJsonStrict(text: string, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new LedgerError('INPUT_JSON', `${what} is not valid JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  const dup = findDuplicateKey(text);
  if (dup !== null) throw new LedgerError('INPUT_JSON', `${what} has a duplicate key "${dup}"`, { key: dup });
  return value;
}

/** Scans valid JSON text and returns the first key that repeats within one object, or null. */
export function findDuplicateKey(text: string): string | null {
  // A stack of key sets, one per open container (null for arrays). Only called on text that
  // JSON.parse accepted, so the scanner can stay small.
  const stack: (Set<string> | null)[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      i = j + 1;
      let k = i;
      while (k < text.length && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k++;
      const top = stack[stack.length - 1];
      if (text[k] === ':' && top) {
        const key = JSON.parse(raw) as string;
        if (top.has(key)) return key;
        top.add(key);
      }
      continue;
    }
    if (c === '{') stack.push(new Set());
    else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    i++;
  }
  return null;
}
