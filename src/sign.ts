// Signing messages and strict Ed25519, fast path. Pure: no I/O. SPEC 4 and SPEC 5.
//
// Two implementations live side by side:
// - `ed25519-reference.ts`: @noble/ed25519 with { zip215: false } plus a small-order R check, the
//   portable implementation and the strictness reference (Wycheproof 151/151);
// - this file: node:crypto (OpenSSL), about 17x faster, behind explicit checks of what OpenSSL
//   does not refuse by itself: S >= L, non-canonical y, and small-order keys and R.
// test/sign.test.ts holds the property test that the two agree on the vectors and on random
// valid and mutated signatures, and that both sign the same bytes.
import type { KeyObject } from 'node:crypto';
import { nodeCrypto } from './node-crypto.js';
import { fromBase64url, toBase64url } from './canonical.js';
import { signProduced } from './sign-batch.js';

export type SigDomain = 'record' | 'head';

export interface Sig {
  alg: 'ed25519';
  key: string;
  value: string;
}

/**
 * The one function that defines the signed bytes (SPEC 4, SPEC 5): the ASCII bytes of
 * "handoff-ledger/<domain>/v1 " + digest. The domain prefix keeps a HEAD signature from ever
 * verifying as a record signature and the other way round.
 */
export function signingMessage(domain: SigDomain, digest: string): Uint8Array {
  return Buffer.from(`handoff-ledger/${domain}/v1 ${digest}`, 'latin1');
}

// ---------------------------------------------------------------------------------------------
// Keys for node:crypto, built from raw bytes as JWK. Importing DER instead goes through OpenSSL's
// decoder framework, whose first use costs a process about 0.5 ms for each of the private and the
// public key: a measurable share of a `ledger append` that must cost little more than `node`.
// The DER form stays for the signing worker (sign-batch.ts) and as the fallback below.

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function privateKeyObject(seed: Uint8Array): KeyObject {
  try {
    // Node builds an OKP private key from "d" alone (OpenSSL derives the public half from it) but
    // requires an "x" string; the empty one is never read. The public key used anywhere is the one
    // exported from this object below, so nothing here can name a key it does not hold.
    return nodeCrypto().createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: toBase64url(seed), x: '' }, format: 'jwk' });
  } catch {
    // A Node that checks "x" against "d": the slower, equivalent DER import.
    return nodeCrypto().createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  }
}

/** The base64url public key of a private key object, as OpenSSL derives it. */
function publicKeyOf(privateKey: KeyObject): string {
  const x = privateKey.export({ format: 'jwk' }).x;
  if (typeof x !== 'string' || fromBase64url(x, 32) === null) throw new Error('node:crypto exported no Ed25519 public key');
  return x;
}

export interface Signer {
  /** base64url public key, as it appears in `sig.key` and the trust file. */
  readonly publicKey: string;
  sign(message: Uint8Array): Uint8Array;
  /**
   * Signs the messages `produce(0..count-1)` returns (produced in order, on this thread), and may
   * sign on a second core while later ones are still being produced. Same bytes as sign().
   */
  signProduced?(count: number, produce: (i: number) => Uint8Array, signed?: (i: number, sig: Uint8Array) => void): Uint8Array[];
}

export function createSigner(seed: Uint8Array): Signer {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) {
    throw new TypeError(`"seed" expected Uint8Array of length 32, got length=${(seed as Uint8Array)?.length}`);
  }
  const key = privateKeyObject(seed);
  const publicKey = publicKeyOf(key);
  const sign = (m: Uint8Array) => new Uint8Array(nodeCrypto().sign(null, m, key));
  return {
    publicKey,
    sign,
    signProduced: (count, produce, signed) => signProduced(count, produce, Buffer.concat([PKCS8_PREFIX, seed]), sign, signed),
  };
}

/** The `sig` member for a digest in a domain. */
export function makeSig(domain: SigDomain, digest: string, signer: Signer): Sig {
  return { alg: 'ed25519', key: signer.publicKey, value: toBase64url(signer.sign(signingMessage(domain, digest))) };
}

// ---------------------------------------------------------------------------------------------
// Strict checks that OpenSSL lacks.

// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
const L_LE = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');
// p = 2^255 - 19, little-endian.
const P_LE = Buffer.from('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex');

/** a < b for 32-byte little-endian integers. */
function lessLE(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) {
    if (a[i] !== b[i]) return a[i] < b[i];
  }
  return false;
}

// The y-coordinates (sign bit cleared) of the eight points of small order: 1 (order 1), p-1
// (order 2), 0 (order 4) and the two of order 8. The set is closed under negation, so a point is
// of small order exactly when its y is one of these; test/sign.test.ts derives them with noble.
export const SMALL_ORDER_Y: readonly string[] = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
];
const SMALL_ORDER_SET = new Set(SMALL_ORDER_Y);

/**
 * Why a point encoding is not strict, or null when it is. Policy: it passes when its y (sign bit
 * cleared) is below p and is not the y of a small-order point. That refuses non-canonical
 * encodings and all eight small-order points in every sign-bit variant (x = 0 with the sign bit
 * set is one of them). Byte checks only: cheap enough for every signature and every trust file.
 */
export function pointEncodingProblem(enc: Uint8Array): string | null {
  if (enc.length !== 32) return 'not 32 bytes';
  const y = Buffer.from(enc);
  y[31] &= 0x7f;
  if (!lessLE(y, P_LE)) return 'not a canonical encoding (y >= p)';
  if (SMALL_ORDER_SET.has(y.toString('hex'))) return 'a point of small order';
  return null;
}

export function isStrictPointEncoding(enc: Uint8Array): boolean {
  return pointEncodingProblem(enc) === null;
}

/** S (the second half of the signature) must be reduced: S < L (RFC 8032 5.1.7). */
export function isCanonicalS(sig: Uint8Array): boolean {
  return sig.length === 64 && lessLE(sig.subarray(32, 64), L_LE);
}

/**
 * A memo of the key object for each public key: building one costs about 50 us, verifying with
 * it about 60-200 us, so a reader that verifies many records under few keys (the auditor: a run
 * of its own; a Ledger: ../cache/ 'keys') passes one. Policy: at most 1024 keys are kept.
 */
export type KeyMemo = Map<string, KeyObject | null>;

/** The key object that verifies for `key`; null when the key is not strict. */
function publicKeyObject(key: string, memo?: KeyMemo): KeyObject | null {
  let obj = memo?.get(key);
  if (obj !== undefined) return obj;
  const raw = fromBase64url(key, 32);
  obj = null;
  if (raw && isStrictPointEncoding(raw)) {
    try {
      obj = nodeCrypto().createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key }, format: 'jwk' });
    } catch {
      obj = null; // not a point on the curve
    }
  }
  if (memo) {
    if (memo.size > 1024) memo.clear();
    memo.set(key, obj);
  }
  return obj;
}

/**
 * Strict verification of raw bytes, fast path. Returns false, never throws, for any bad input:
 * a check that cannot decide says no.
 */
export function verifyFast(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return false;
  return verifyWithKey(signature, message, publicKeyObject(toBase64url(publicKey)));
}

function verifyWithKey(signature: Uint8Array, message: Uint8Array, key: KeyObject | null): boolean {
  if (key === null) return false;
  if (!isCanonicalS(signature) || !isStrictPointEncoding(signature.subarray(0, 32))) return false;
  try {
    return nodeCrypto().verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * Verifies a `sig` object over a digest in a domain. Any malformed member is simply invalid.
 * `keys`: a memo of key objects (KeyMemo) the caller keeps across calls.
 */
export function verifySig(domain: SigDomain, digest: string, sig: unknown, keys?: KeyMemo): boolean {
  if (sig === null || typeof sig !== 'object') return false;
  const s = sig as Partial<Sig>;
  if (s.alg !== 'ed25519' || typeof s.key !== 'string') return false;
  const value = fromBase64url(s.value, 64);
  if (value === null) return false;
  return verifyWithKey(value, signingMessage(domain, digest), publicKeyObject(s.key, keys));
}
