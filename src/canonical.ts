// The only place values become bytes (RFC 8785 JCS via `canonicalize`) and bytes become ids
// (SHA-256). Pure: no I/O. SPEC 2 and SPEC 4.
import canonicalize from 'canonicalize';
import { LedgerError } from './errors.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { nodeCrypto, nodeCryptoLoaded } from './node-crypto.js';
import { parserReason } from './text/sanitize.js';

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
  // Policy: SPEC 2 names the `canonicalize` package as what produces JCS, so every canonical text
  // comes from it, after the strict checks. A hand-written one-pass writer measured about 4 us
  // faster per record (a tenth of `append --batch`), which does not buy a second definition of
  // the bytes every signature covers. (Records and HEADs written through textsAroundSig take
  // a fast path below that is no second writer: JSON.stringify of a copy sorted in JCS order,
  // only where that is provably `canonicalize`'s text.)
  assertPlainJson(value, '$');
  const text = canonicalize(value);
  if (text === undefined) throw new LedgerError('INPUT_CANONICAL', 'value has no JSON form');
  return text;
}

// With the u flag, a surrogate code unit matches only when it is not half of a pair.
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

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
// Speed (issue 22, the read verbs <= 1.6x `node -e ''`): node:crypto is loaded at the first digest
// it is needed for, not at import, and not for a few short ones: loading it and its first digest
// cost about 20M instructions (callgrind), where @noble/hashes' SHA-256 costs about 3M to load and
// 1M a 64-byte block while V8 still interprets it. So the first PURE_BUDGET bytes a process hashes
// before anything has loaded node:crypto (a state file's name, a remote's paths) are hashed in
// JavaScript; past them, or once node:crypto is loaded (to sign, to verify), by OpenSSL. Both are
// SHA-256 (test/canonical.test.ts holds them equal); only the cost differs.
const PURE_BUDGET = 512;
let pureBytes = 0;
let oneShotHash: typeof import('node:crypto').hash | undefined;
export function sha256Hex(bytes: Uint8Array | string): string {
  if (oneShotHash === undefined && !nodeCryptoLoaded()) {
    const input = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    if (pureBytes + input.length <= PURE_BUDGET) {
      pureBytes += input.length;
      return Buffer.from(nobleSha256(input)).toString('hex');
    }
  }
  oneShotHash ??= nodeCrypto().hash;
  return oneShotHash('sha256', bytes, 'hex');
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
export function canonicalAroundSig(unsigned: object): {
  unsignedText: string;
  lineWithSig: (sig: object) => string;
  /** The same line from the sig member's canonical text (canonicalJson of the sig object). */
  lineWithSigJson: (sigJson: string) => string;
} {
  const { unsignedText, before, after } = splitAroundSig(unsigned);
  const lineWithSigJson = (sigJson: string) => before + '"sig":' + sigJson + after + '\n';
  return { unsignedText, lineWithSig: (sig) => lineWithSigJson(canonicalJson(sig)), lineWithSigJson };
}

/**
 * canonicalAroundSig in parts, for a writer that puts the line together itself (a batch writes
 * each line into one buffer as it is placed, leaving the signature's place to fill): the line
 * is `before + '"sig":' + sig + after + '\n'`.
 */
export function splitAroundSig(unsigned: object): { unsignedText: string; before: string; after: string } {
  const texts = textsAroundSig(unsigned);
  const a = texts.before.slice(1, -1);
  const b = texts.after.slice(1, -1);
  const unsignedText = '{' + a + (a !== '' && b !== '' ? ',' : '') + b + '}';
  // "sig" first: `{`, the member, then a comma when members follow, and the rest.
  if (a === '') return { unsignedText, before: '{', after: (b === '' ? '' : ',') + unsignedText.slice(1) };
  const at = 1 + a.length; // after the members before "sig"
  return { unsignedText, before: unsignedText.slice(0, at) + ',', after: unsignedText.slice(at) };
}

/**
 * splitAroundSig's layout in bytes, for the batch writer (store/append.ts placeDrafts). Speed
 * (issue 26, `append --batch` >= 20,000 records/s): the line is written from the two texts
 * textsAroundSig gave, with no string put together per record. At `at` in `buf` (the caller made
 * room for every character of both texts as 3 bytes, plus `member` and a newline): first the
 * unsigned record's JCS text, which is hashed there for the id (SPEC 4); then the members after
 * "sig" move up to make room for `member` (the bytes of `"sig":` and the sig object's JCS text)
 * and a comma, and a newline ends the line. Returns the id, where the member starts, and where
 * the line ends (after its newline). test/store/placement.test.ts holds each line equal to
 * canonicalLine of its signed record.
 */
export function writeAroundSig(texts: { before: string; after: string }, buf: Buffer, at: number, member: Uint8Array): { id: string; memberAt: number; end: number } {
  const aEmpty = texts.before.length === 2; // '{}'
  const bEmpty = texts.after.length === 2;
  // The unsigned text: '{a}', '{b}', or '{a' + ',b}' ('{a}' with its '}' overwritten by '{b}', then that '{' by a comma).
  let end: number;
  let cut: number; // where the member goes: after '{a' (at its '}' or the comma before b), or after '{'
  if (aEmpty) {
    end = at + buf.write(texts.after, at);
    cut = at + 1;
  } else {
    end = at + buf.write(texts.before, at);
    cut = end - 1;
    if (!bEmpty) {
      end = cut + buf.write(texts.after, cut);
      buf[cut] = 0x2c;
    }
  }
  const id = digestOf(buf.subarray(at, end));
  // The line: '{a' + ',' + member + (the rest from the cut: ',b}' or '}'), or '{' + member + (',' when b follows) + 'b}'.
  const insert = member.length + (aEmpty && bEmpty ? 0 : 1);
  buf.copyWithin(cut + insert, cut, end);
  let memberAt = cut;
  if (!aEmpty) buf[memberAt++] = 0x2c;
  buf.set(member, memberAt);
  if (aEmpty && !bEmpty) buf[memberAt + member.length] = 0x2c;
  end += insert;
  buf[end] = 0x0a;
  return { id, memberAt, end: end + 1 };
}

// A signature value in base64url: 64 bytes are always 86 characters of a JSON-inert alphabet.
const SIG_VALUE_RE = /^[A-Za-z0-9_-]{86}$/;

/**
 * canonicalJson({ alg: 'ed25519', key, value }) for many signature values under one key, as a
 * batch signs them: `canonicalize` writes the object once, with a placeholder value of the same
 * length and alphabet, and each value takes the placeholder's place. A base64url string needs no
 * JSON escaping, so that is exactly the text canonicalize writes for it (test/canonical.test.ts
 * holds the two equal); any other value goes through canonicalJson itself.
 */
export function ed25519SigJson(key: string): (value: string) => string {
  const { head, tail } = ed25519SigParts(key);
  return (value) => (SIG_VALUE_RE.test(value) ? head + value + tail : canonicalJson({ alg: 'ed25519', key, value }));
}

/** The canonical text of an ed25519 sig object under `key` is `head + value + tail` for a base64url value of 64 bytes (86 characters). */
export function ed25519SigParts(key: string): { head: string; tail: string } {
  const placeholder = 'A'.repeat(86);
  const text = canonicalJson({ alg: 'ed25519', key, value: placeholder });
  // "value" sorts after "alg" and "key": its string is the last thing before the closing brace.
  const at = text.length - 2 - placeholder.length;
  if (text.slice(at, at + placeholder.length) !== placeholder) throw new Error('unexpected canonical sig layout');
  const head = text.slice(0, at);
  const tail = text.slice(at + placeholder.length);
  return { head, tail };
}

/**
 * The canonical members of `unsigned` that sort before "sig" and after it, each as an object's JCS
 * text ('{...}'): what splitAroundSig splits, and what writeAroundSig writes.
 */
export function textsAroundSig(unsigned: object): { before: string; after: string } {
  const fast = membersByStringify(unsigned);
  if (fast !== null) return fast;
  assertPlainJson(unsigned, '$');
  // Without a prototype, a member named "__proto__" is a member here too, not a prototype.
  const before: Record<string, unknown> = Object.create(null);
  const after: Record<string, unknown> = Object.create(null);
  for (const k of Object.keys(unsigned)) {
    if (k === 'sig') throw new LedgerError('INPUT_CANONICAL', '$.sig: an unsigned record has no sig');
    (k < 'sig' ? before : after)[k] = (unsigned as Record<string, unknown>)[k];
  }
  return { before: canonicalize(before) as string, after: canonicalize(after) as string };
}

// ---------------------------------------------------------------------------------------------
// Speed (issue 26: `append --batch` of 200,000 payloads at >= 20,000 records/s; every record of a
// batch, and every HEAD, is written through textsAroundSig). `canonicalize` and the strict walk
// before it took about 11 us a record there, a fifth of the batch's main thread. For a value of
// the common shape, the same text comes from the native JSON.stringify of a copy whose objects
// were built with their members in JCS order: about 3 us, with the same checks.
//
// Why the texts are the same: `canonicalize` writes a string, a number and a key with
// JSON.stringify itself, an array as its elements joined by commas, and an object as its own
// enumerable members sorted by UTF-16 code units (`Object.keys(o).sort()`, the order
// `keys.sort()` gives below), joined by commas; JSON.stringify writes them the same way except
// that an object's members come in property order. The copy makes property order the sorted
// order: each object is a fresh ordinary object whose members are added in sorted order, and
// property order is the order of addition except for integer-like keys (which come first, in
// numeric order) and "__proto__" (which, added so, would set the prototype): the copy refuses
// every key that starts with a digit and "__proto__". It also refuses (returns NOT_FAST) every
// value the strict walk (assertPlainJson) would refuse, anything whose JSON form a `toJSON`
// would change, and nesting past FAST_DEPTH (a value that contains itself has no end); each of
// those takes the general path, `canonicalize` after assertPlainJson, with its errors.
// test/canonical.test.ts holds the two paths equal against `canonicalize` itself, and shows
// that records take the fast one.

const NOT_FAST: unique symbol = Symbol('not fast');
const FAST_DEPTH = 64;

/** A copy of `v` whose objects have their members in JCS order, or NOT_FAST (see above). */
function sortedCopy(v: unknown, depth: number): unknown {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return ANY_SURROGATE.test(v) && LONE_SURROGATE.test(v) ? NOT_FAST : v;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : NOT_FAST;
  if (typeof v !== 'object' || depth > FAST_DEPTH) return NOT_FAST;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return NOT_FAST;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return NOT_FAST;
      const x = sortedCopy(v[i], depth + 1);
      if (x === NOT_FAST) return NOT_FAST;
      out.push(x);
    }
    return out;
  }
  const keys = fastKeys(v);
  if (keys === null) return NOT_FAST;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const x = sortedCopy((v as Record<string, unknown>)[k], depth + 1);
    if (x === NOT_FAST) return NOT_FAST;
    out[k] = x;
  }
  return out;
}

/** A plain object's own keys in JCS order, or null when one of them (or the object) is not for the fast path. */
function fastKeys(v: object): string[] | null {
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return null;
  const keys = Object.keys(v);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const c = k.charCodeAt(0);
    if ((c >= 0x30 && c <= 0x39) || k === '__proto__' || (ANY_SURROGATE.test(k) && LONE_SURROGATE.test(k))) return null;
    if (i > 0 && !(keys[i - 1] < k)) sorted = false;
  }
  return sorted ? keys : keys.sort();
}

/** textsAroundSig by JSON.stringify of sorted copies, or null for the general path. */
function membersByStringify(unsigned: object): { before: string; after: string } | null {
  if (unsigned === null || typeof unsigned !== 'object' || Array.isArray(unsigned)) return null;
  if (typeof (unsigned as { toJSON?: unknown }).toJSON === 'function') return null;
  const keys = fastKeys(unsigned);
  if (keys === null) return null;
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === 'sig') return null; // refused, by the general path
    const x = sortedCopy((unsigned as Record<string, unknown>)[k], 1);
    if (x === NOT_FAST) return null;
    (k < 'sig' ? before : after)[k] = x;
  }
  return { before: JSON.stringify(before), after: JSON.stringify(after) };
}

/** The fast path's text for a value, or null where it does not apply; for the tests that hold it equal to `canonicalize`. */
export function jcsByStringify(value: unknown): string | null {
  const x = sortedCopy(value, 0);
  return x === NOT_FAST ? null : JSON.stringify(x);
}

// ---------------------------------------------------------------------------------------------
// From a stored line: whether it is canonical, and the id it carries. Readers check the first,
// then compute the second from the line's own bytes, without a second canonicalisation.

/**
 * SPEC 4's canonical check of a parsed line: `canonicalJson(value) === text`, `text` without its
 * newline. The common case is decided by the native JSON.stringify plus one walk (about three
 * times faster than `canonicalize`); anything else (integer-like keys, which JS objects reorder;
 * escapes; numbers) falls back to `canonicalJson` itself, whose verdict is final. A throw there (a
 * lone surrogate, an unsafe number, a nesting too deep) means not canonical: a check that cannot
 * decide says no.
 */
export function isCanonicalText(value: unknown, text: string): boolean {
  try {
    if (JSON.stringify(value) === text && isSortedSafe(value)) return true;
    return canonicalJson(value) === text;
  } catch {
    return false;
  }
}

// Without the u flag this matches any surrogate code unit, and is much faster to run on every
// string; only a string that has one is asked whether one stands alone.
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * True when JSON.stringify(value) is already the JCS text: every object's keys are in JCS order
 * (UTF-16 code units, which is how JS compares strings), every number is a safe integer, and no
 * string holds a lone surrogate (JCS and `canonicalize` refuse those). Then `canonicalize`, which
 * writes sorted keys with JSON.stringify's own escaping, would produce the same text.
 */
function isSortedSafe(v: unknown): boolean {
  if (typeof v === 'string') return !ANY_SURROGATE.test(v) || !LONE_SURROGATE.test(v);
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
    if (ANY_SURROGATE.test(k) && LONE_SURROGATE.test(k)) return false;
    if (!isSortedSafe(o[k])) return false;
    prev = k;
  }
  return true;
}

/**
 * A record's id from its stored line (SPEC 4: "sha256:" + hex(SHA-256(UTF-8(JCS(r without
 * "sig"))))), and HEAD's digest from HEAD's line alike (SPEC 5). `line` is the text or the UTF-8
 * bytes, with or without its final newline; `value` is what it parses to (parsed here when not
 * given: text that is not a JSON object throws INPUT_JSON).
 *
 * Precondition: `line` is the canonical line of `value` (JCS(value), then "\n" or nothing). The
 * caller has checked that (isCanonicalText; the auditor's schema layer) or made the line itself.
 * It is not checked again here: for any other line the result is a digest, not the id.
 *
 * How: JCS writes an object's members in sorted order, each member's text independent of its
 * neighbours, joined by commas, so JCS(r without sig) is the line with the `"sig":JCS(sig)` member
 * and one comma cut out; the two pieces around it are hashed. The member's text is
 * rebuilt from the parsed `sig`, and the cut is made only where that text occurs exactly once: an
 * unescaped `"sig":` cannot occur inside a JSON string, but a nested object, or a key such as
 * `x"sig` (written `"x\"sig"`), can hold the same text, and then the full JCS computation decides.
 */
export function idFromLine(line: string | Uint8Array, value?: object): string {
  const v = value ?? parseLineValue(line);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new LedgerError('INPUT_JSON', 'a record line is a JSON object');
  // Without its newline (a canonical text never ends in one: JCS escapes it inside strings).
  const body = typeof line === 'string'
    ? (line.endsWith('\n') ? line.slice(0, -1) : line)
    : Buffer.from(line.buffer, line.byteOffset, line.byteLength - (line[line.byteLength - 1] === 0x0a ? 1 : 0));
  if (!Object.hasOwn(v, 'sig')) return 'sha256:' + sha256Hex(body);
  const member = '"sig":' + sigJson((v as { sig: unknown }).sig);
  const cut = typeof body === 'string' ? cutAround(body, member, member.length) : cutAround(body, Buffer.from(member), Buffer.byteLength(member));
  if (cut === null) return recordId(v);
  // One piece for the one-shot hash: measured faster than a Hash object fed the two pieces.
  const rest = typeof body === 'string' ? body.slice(0, cut[0]) + body.slice(cut[1]) : Buffer.concat([body.subarray(0, cut[0]), body.subarray(cut[1])]);
  return 'sha256:' + sha256Hex(rest);
}

/**
 * Where the member `m` (of length `len` in the units of `body`) and one comma beside it are, as
 * [from, to), when `m` occurs exactly once; else null. The comma is the one before it, else the
 * one after it, else none (it was the only member).
 */
function cutAround<T extends string | Buffer>(body: T, m: T, len: number): [number, number] | null {
  const find = (from: number) => (body as string).indexOf(m as string, from);
  const at = find(0);
  if (at < 0 || find(at + 1) >= 0) return null;
  const after = at + len;
  const isComma = (i: number) => (typeof body === 'string' ? body.charCodeAt(i) : (body as Buffer)[i]) === 0x2c;
  if (isComma(at - 1)) return [at - 1, after];
  if (isComma(after)) return [at, after + 1];
  return [at, after];
}

/**
 * canonicalJson(sig). A signature of our one shape, three string members `alg`, `key`, `value`,
 * is written without `canonicalize`: those names are already in JCS order, and JCS writes a
 * string exactly as JSON.stringify does (RFC 8785 3.2.2.2) when it is well formed, which a
 * canonical line's strings are.
 */
function sigJson(sig: unknown): string {
  if (sig !== null && typeof sig === 'object' && !Array.isArray(sig)) {
    const s = sig as { alg?: unknown; key?: unknown; value?: unknown };
    if (typeof s.alg === 'string' && typeof s.key === 'string' && typeof s.value === 'string' && Object.keys(s).length === 3) {
      return `{"alg":${JSON.stringify(s.alg)},"key":${JSON.stringify(s.key)},"value":${JSON.stringify(s.value)}}`;
    }
  }
  return canonicalJson(sig);
}

function parseLineValue(line: string | Uint8Array): unknown {
  const text = typeof line === 'string' ? line : Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LedgerError('INPUT_JSON', `a record line is not JSON: ${parserReason(e)}`);
  }
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
    throw new LedgerError('INPUT_JSON', `${what} is not valid JSON: ${parserReason(e)}`);
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
