// Edwards25519 points that honest code never produces, built with noble: the small-order
// (torsion) points and keys or R values that carry a torsion component. For tests of the strict
// verifiers and the trust loader.
import * as ed from '@noble/ed25519';
import '../../src/ed25519-reference.js'; // wires noble's sha512

const { n: L } = ed.Point.CURVE();
export { L };

/** [L]P without noble's scalar range check: zero exactly when P is in the prime-order subgroup. */
const timesL = (P: ed.Point) => P.multiplyUnsafe(L / 2n).double().add(P);

/** A point of order exactly 8: [L]P of the first decodable y = 2, 3, ... whose torsion part has order 8. */
export const ORDER_8: ed.Point = (() => {
  for (let i = 2; i < 256; i++) {
    const enc = new Uint8Array(32);
    enc[0] = i;
    let P: ed.Point;
    try {
      P = ed.Point.fromBytes(enc, false);
    } catch {
      continue;
    }
    const T = timesL(P);
    if (!T.double().double().is0()) return T;
  }
  throw new Error('no order-8 point found');
})();

/** The eight points of small order: [i]T for an order-8 T, i = 0..7. */
export const SMALL_ORDER_POINTS: readonly ed.Point[] = Array.from({ length: 8 }, (_, i) => ORDER_8.multiplyUnsafe(BigInt(i)));

/** Little-endian 32-byte encoding of a non-negative integer below 2^256. */
export function le32(x: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
}

export function leToBigint(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]);
  return x;
}

/** `key` plus a small-order point: on the curve, canonical, not small order, not torsion-free. */
export function withTorsion(publicKey: Uint8Array, i = 1): Uint8Array {
  return ed.Point.fromBytes(publicKey, false).add(SMALL_ORDER_POINTS[i % 8]).toBytes();
}
