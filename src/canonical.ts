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
  if (value !== null && typeof value === 'object') {
    try {
      return fastCanonical(value, 0);
    } catch (e) {
      if (e !== NOT_FAST) throw e;
    }
  }
  return canonicalJsonReference(value);
}

/**
 * The reference encoding, and the one that names every refusal: the strict checks, then the
 * `canonicalize` package (SPEC 2). The fast writer below must agree with it byte for byte on
 * every value it accepts (test/canonical.test.ts holds the property test); on anything else it
 * hands the value here.
 */
export function canonicalJsonReference(value: unknown): string {
  assertPlainJson(value, '$');
  const text = canonicalize(value);
  if (text === undefined) throw new LedgerError('INPUT_CANONICAL', 'value has no JSON form');
  return text;
}

// Thrown by the fast writer when a value is outside what it handles; never escapes this module.
const NOT_FAST: unique symbol = Symbol('not fast');
// Records nest a few levels; anything deeper (or a value that contains itself) goes to the
// reference, which has the cycle check and the error message.
const FAST_MAX_DEPTH = 32;
// String.prototype.isWellFormed (ES2024, in Node >= 20) is the lone-surrogate test as one call.
const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();
// What JSON.stringify escapes in a well-formed string ('"', '\\', controls), and any surrogate.
// A string with none of these is its own JSON text between quotes.
const NEEDS_STRINGIFY = /["\\\u0000-\u001f\uD800-\uDFFF]/u;

/** JSON.stringify of a string, as `canonicalize` writes it; NOT_FAST for a lone surrogate. */
function fastString(s: string): string {
  if (!NEEDS_STRINGIFY.test(s)) return '"' + s + '"';
  if (!isWellFormed(s)) throw NOT_FAST;
  return JSON.stringify(s);
}

/**
 * JCS of plain JSON data in one pass, about four times faster than checking and then encoding:
 * the same JSON.stringify for strings and safe integers that `canonicalize` uses, members sorted
 * by UTF-16 code units with the same Array.prototype.sort, and each value read once. It accepts
 * only what the reference accepts without a question (null, booleans, safe integers, well-formed
 * strings, arrays without holes, plain objects without toJSON) and throws NOT_FAST for anything
 * else, so every refusal and every odd case is decided by the reference path.
 */
function fastCanonical(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return fastString(v);
    case 'number':
      if (!Number.isSafeInteger(v)) throw NOT_FAST;
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth > FAST_MAX_DEPTH) throw NOT_FAST;
      if (Array.isArray(v)) {
        // canonicalize would call an array's toJSON; the reference decides what that means.
        if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_FAST;
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) throw NOT_FAST;
          out += (i === 0 ? '' : ',') + fastCanonical(v[i], depth + 1);
        }
        return out + ']';
      }
      return '{' + fastMembers(v, depth, null) + '}';
    }
    default:
      throw NOT_FAST;
  }
}

/**
 * The members of a plain object, canonical and comma-joined, without the braces. With `split`
 * set, the members whose key sorts before it go to split.before and the rest to the result,
 * and a member named `split` itself is NOT_FAST (canonicalAroundSig's "sig").
 */
function fastMembers(v: object, depth: number, split: { key: string; before: string } | null): string {
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw NOT_FAST;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_FAST;
  const keys = Object.keys(v).sort();
  let out = '';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const member = fastString(k) + ':' + fastCanonical((v as Record<string, unknown>)[k], depth + 1);
    if (split !== null && k <= split.key) {
      if (k === split.key) throw NOT_FAST;
      split.before += (split.before === '' ? '' : ',') + member;
      continue;
    }
    out += (first ? '' : ',') + member;
    first = false;
  }
  return out;
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
 * this equal to canonicalLine({ ...unsigned, sig }). The members come from the fast writer; any
 * value it hands back (and every refusal) goes through the reference encoding instead.
 */
export function canonicalAroundSig(unsigned: object): { unsignedText: string; lineWithSig: (sig: object) => string } {
  let a: string;
  let b: string;
  try {
    if (unsigned === null || typeof unsigned !== 'object' || Array.isArray(unsigned)) throw NOT_FAST;
    const split = { key: 'sig', before: '' };
    b = fastMembers(unsigned, 0, split);
    a = split.before;
  } catch (e) {
    if (e !== NOT_FAST) throw e;
    ({ a, b } = membersAroundSigReference(unsigned));
  }
  // Only the unsigned text and where "sig" goes in it are kept (a batch holds one per record
  // until its signature exists), not the member strings it was built from.
  const unsignedText = '{' + a + (a !== '' && b !== '' ? ',' : '') + b + '}';
  const at = a === '' ? 1 : 1 + a.length;
  const sep = a === '' ? (b === '' ? '' : ',') : null;
  return {
    unsignedText,
    lineWithSig: (sig) => {
      const member = '"sig":' + canonicalJson(sig);
      // After the members before "sig" (and a comma), or first, before a comma and the rest.
      return sep === null
        ? unsignedText.slice(0, at) + ',' + member + unsignedText.slice(at) + '\n'
        : '{' + member + sep + unsignedText.slice(1) + '\n';
    },
  };
}

/** canonicalAroundSig's members by the reference encoding, which also names every refusal. */
function membersAroundSigReference(unsigned: object): { a: string; b: string } {
  assertPlainJson(unsigned, '$');
  // Without a prototype, a member named "__proto__" is a member here too, not a prototype.
  const before: Record<string, unknown> = Object.create(null);
  const after: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(unsigned)) {
    if (k === 'sig') throw new LedgerError('INPUT_CANONICAL', '$.sig: an unsigned record has no sig');
    if (k < 'sig') before[k] = v;
    else after[k] = v;
  }
  return { a: (canonicalize(before) as string).slice(1, -1), b: (canonicalize(after) as string).slice(1, -1) };
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
  // JSON.parse accepted, so the scanner can stay small. It reads char codes (batch input is
  // scanned line by line, tens of thousands of times) and decodes a key with JSON.parse only
  // when it has an escape; without one, the text between the quotes is the key.
  const stack: (Set<string> | null)[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      let escaped = false;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x5c) {
          escaped = true;
          j++;
        }
      }
      const start = i;
      i = j + 1;
      let k = i;
      for (; k < n; k++) {
        const w = text.charCodeAt(k);
        if (w !== 0x20 && w !== 0x0a && w !== 0x0d && w !== 0x09) break;
      }
      const top = stack.length ? stack[stack.length - 1] : null;
      if (top && text.charCodeAt(k) === 0x3a) {
        const key = escaped ? (JSON.parse(text.slice(start, j + 1)) as string) : text.slice(start + 1, j);
        if (top.has(key)) return key;
        top.add(key);
      }
      continue;
    }
    if (c === 0x7b) stack.push(new Set());
    else if (c === 0x5b) stack.push(null);
    else if (c === 0x7d || c === 0x5d) stack.pop();
    i++;
  }
  return null;
}
