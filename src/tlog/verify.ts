// Verifying RFC 6962 inclusion and consistency proofs, as RFC 9162 sections 2.1.3.2 and 2.1.4.2
// write the algorithms (an iteration over the proof, not the recursion that tree.ts makes them
// with: two derivations, so a slip in one is caught by the other in test/tlog/). Pure: no I/O.
// A proof that does not verify is a finding: these return false, never throw, for any input.
import { EMPTY_ROOT, HASH_SIZE, hashEqual, nodeHash } from './hash.js';

const half = (n: number) => Math.floor(n / 2);
const odd = (n: number) => n % 2 === 1;
const isSize = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const allHashes = (p: readonly Uint8Array[]) => Array.isArray(p) && p.every((h) => h instanceof Uint8Array && h.length === HASH_SIZE);

/** The root that `proof` derives for leaf `index` with hash `leaf` in a tree of `size`, or null. */
export function rootFromInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[]): Uint8Array | null {
  if (!isSize(index) || !isSize(size) || index >= size) return null;
  if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_SIZE || !allHashes(proof)) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 2.1.3.2: does `proof` place leaf hash `leaf` at `index` in the tree of `size` with `root`? */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  const r = rootFromInclusion(index, size, leaf, proof);
  return r !== null && root instanceof Uint8Array && hashEqual(r, root);
}

/**
 * RFC 9162 2.1.4.2: is the tree of `oldSize` with `oldRoot` a prefix of the tree of `newSize` with
 * `newRoot`, by `proof`?
 *
 * Policy (C2SP tlog-witness): the empty tree is consistent with every tree, with an empty proof,
 * when its root is the empty tree's. (transparency-dev/merkle calls such a proof meaningless and
 * refuses it; test/tlog/ names that one vector as the deliberate difference.) Equal sizes need an
 * empty proof and equal roots.
 */
export function verifyConsistency(oldSize: number, newSize: number, oldRoot: Uint8Array, newRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!isSize(oldSize) || !isSize(newSize) || oldSize > newSize) return false;
  if (!(oldRoot instanceof Uint8Array) || !(newRoot instanceof Uint8Array) || !Array.isArray(proof)) return false;
  if (oldSize === 0) return proof.length === 0 && hashEqual(oldRoot, EMPTY_ROOT) && (newSize > 0 || hashEqual(newRoot, EMPTY_ROOT));
  if (oldSize === newSize) return proof.length === 0 && hashEqual(oldRoot, newRoot);
  if (proof.length === 0 || !allHashes(proof)) return false;
  // Step 2: when oldSize is a power of two, the old root is the proof's implicit first node.
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashEqual(fr, oldRoot) && hashEqual(sr, newRoot);
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !odd(n)) n = half(n);
  return n === 1;
}
