// The portable, strict Ed25519 reference: @noble/ed25519 in its RFC 8032 branch. Pure: no I/O.
// Kept apart from sign.ts so the CLI's hot path does not load it; the trust loader and the
// tests do.
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

ed.hashes.sha512 = sha512;

const leToBigint = (b: Uint8Array): bigint => BigInt('0x' + (Buffer.from(b).reverse().toString('hex') || '0'));

/**
 * Strict verify (SPEC 4). Policy: `{ zip215: false }` (noble's default accepts Wycheproof tcId
 * 151), a throw counts as invalid, and R of small order is refused too (noble refuses only a
 * small-order key). Policy: the cofactorless equation [S]B = R + [k]A must hold as well. noble
 * checks only the cofactored one, which also accepts an R (or key) carrying a torsion component
 * that the key holder chose; OpenSSL (verifyFast) checks the cofactorless one and refuses it.
 * Requiring both makes the two verifiers decide every input alike.
 */
export function verifyReference(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    if (signature.length !== 64 || publicKey.length !== 32) return false;
    const R = ed.Point.fromBytes(signature.subarray(0, 32), false);
    if (R.isSmallOrder()) return false;
    if (!ed.verify(signature, message, publicKey, { zip215: false })) return false;
    // RFC 8032 5.1.7: k = SHA-512(R || A || M) mod L; ed.verify has already checked S < L.
    const { n } = ed.Point.CURVE();
    const k = leToBigint(sha512(Buffer.concat([signature.subarray(0, 32), publicKey, message]))) % n;
    const A = ed.Point.fromBytes(publicKey, false);
    return ed.Point.BASE.multiplyUnsafe(leToBigint(signature.subarray(32, 64))).equals(R.add(A.multiplyUnsafe(k)));
  } catch {
    return false;
  }
}

export function signReference(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

export function publicKeyReference(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

/**
 * Why a 32-byte public key cannot be pinned, or null when it can. Policy: beyond a canonical
 * encoding and not of small order, a pinned key must lie in the prime-order subgroup, so that the
 * cofactored (noble) and cofactorless (OpenSSL) equations decide every signature under it alike.
 */
export function publicKeyProblem(publicKey: Uint8Array): string | null {
  let A: ed.Point;
  try {
    A = ed.Point.fromBytes(publicKey, false);
  } catch {
    return 'not a canonical encoding of a curve point';
  }
  if (A.isSmallOrder()) return 'a point of small order';
  if (!A.isTorsionFree()) return 'not in the prime-order subgroup';
  return null;
}
