// The RFC 6962 tree over a log's leaves, kept as its stored hashes: every complete subtree's hash,
// once, in the order they become complete (the layout of Go's golang.org/x/mod/sumdb/tlog, so a
// file of them is the same as sumdb's). Pure: the hashes are read through a HashReader the caller
// gives (an array in memory, a file), so proofs cost O(log n) reads, not O(n) hashing.
//
// An append stores the leaf's hash and the hash of every subtree the leaf completes: 1 + the
// number of trailing one bits of its index, so O(log n) hashes and 2 per leaf on average. The
// tree's right edge (the complete subtrees of the largest sizes that make up n, at most log2 n of
// them) is what the next append and the root read; it is never recomputed from the leaves.
import { EMPTY_ROOT, nodeHash } from './hash.js';

/** Reads stored hashes by their index (storedHashIndex); throws when one is missing. */
export interface HashReader {
  readHashes(indexes: readonly number[]): Uint8Array[];
}

/** A HashReader over an array of stored hashes in memory (tests, a tree built whole). */
export function arrayReader(stored: readonly Uint8Array[]): HashReader {
  return {
    readHashes: (indexes) => indexes.map((i) => {
      const h = stored[i];
      if (h === undefined) throw new RangeError(`stored hash ${i} is past the ${stored.length} stored`);
      return h;
    }),
  };
}

// Sizes reach 2^53: arithmetic, never 32-bit bit operators.
const half = (n: number) => Math.floor(n / 2);

/** The number of trailing one bits of n (n >= 0). */
function trailingOnes(n: number): number {
  let c = 0;
  while (n % 2 === 1) {
    c++;
    n = half(n);
  }
  return c;
}

/** The largest power of two k < n (n >= 2), with log2 k. */
function maxPow2Below(n: number): { k: number; level: number } {
  let k = 1;
  let level = 0;
  while (k * 2 < n) {
    k *= 2;
    level++;
  }
  return { k, level };
}

/**
 * Where the hash of the subtree at `level` (0 = a leaf), index `n` in that level, is stored. A
 * subtree is stored right after the leaf that completes it, leaves in order.
 */
export function storedHashIndex(level: number, n: number): number {
  for (let l = level; l > 0; l--) n = 2 * n + 1;
  let i = 0;
  for (; n > 0; n = half(n)) i += n;
  return i + level;
}

/** How many hashes a tree of `size` leaves stores. */
export function storedHashCount(size: number): number {
  if (size === 0) return 0;
  return storedHashIndex(0, size - 1) + 1 + trailingOnes(size - 1);
}

/**
 * The hashes to store when leaf `index` (its hash `leaf`) is appended to a tree of `index`
 * leaves, in order: the leaf, then each subtree it completes. Reads the right edge's subtrees
 * it merges with: O(log n).
 */
export function storedHashesForLeaf(index: number, leaf: Uint8Array, r: HashReader): Uint8Array[] {
  const m = trailingOnes(index);
  const indexes: number[] = new Array(m);
  for (let i = 0; i < m; i++) indexes[m - 1 - i] = storedHashIndex(i, Math.floor(index / 2 ** i) - 1);
  const old = m === 0 ? [] : r.readHashes(indexes);
  const out = [leaf];
  let h = leaf;
  for (let i = 0; i < m; i++) {
    h = nodeHash(old[m - 1 - i], h);
    out.push(h);
  }
  return out;
}

/** The stored indexes of the complete subtrees that make up the leaves [lo, hi), left to right. */
function subtreeIndexes(lo: number, hi: number, need: number[]): number[] {
  while (lo < hi) {
    const { k, level } = maxPow2Below(hi - lo + 1);
    need.push(storedHashIndex(level, lo / k));
    lo += k;
  }
  return need;
}

/** Folds the subtrees of [lo, hi) (read in subtreeIndexes' order from `hashes` at `at`) into one hash. */
function subtreeHash(lo: number, hi: number, hashes: Uint8Array[], at: { i: number }): Uint8Array {
  const parts: Uint8Array[] = [];
  while (lo < hi) {
    const { k } = maxPow2Below(hi - lo + 1);
    parts.push(hashes[at.i++]);
    lo += k;
  }
  let h = parts[parts.length - 1];
  for (let i = parts.length - 2; i >= 0; i--) h = nodeHash(parts[i], h);
  return h;
}

/** The root of the first `size` leaves: O(log n) reads (the right edge at that size). */
export function treeHash(size: number, r: HashReader): Uint8Array {
  assertSize(size, 'size');
  if (size === 0) return EMPTY_ROOT;
  const hashes = r.readHashes(subtreeIndexes(0, size, []));
  return subtreeHash(0, size, hashes, { i: 0 });
}

/** The right edge of a tree of `size` leaves: its complete subtrees' hashes, largest first. */
export function rightEdge(size: number, r: HashReader): Uint8Array[] {
  assertSize(size, 'size');
  return r.readHashes(subtreeIndexes(0, size, []));
}

function inclusionIndexes(lo: number, hi: number, n: number, need: number[]): number[] {
  if (lo + 1 === hi) return need;
  const { k } = maxPow2Below(hi - lo);
  if (n < lo + k) {
    inclusionIndexes(lo, lo + k, n, need);
    subtreeIndexes(lo + k, hi, need);
  } else {
    subtreeIndexes(lo, lo + k, need);
    inclusionIndexes(lo + k, hi, n, need);
  }
  return need;
}

function inclusionPath(lo: number, hi: number, n: number, hashes: Uint8Array[], at: { i: number }): Uint8Array[] {
  if (lo + 1 === hi) return [];
  const { k } = maxPow2Below(hi - lo);
  let p: Uint8Array[];
  let th: Uint8Array;
  if (n < lo + k) {
    p = inclusionPath(lo, lo + k, n, hashes, at);
    th = subtreeHash(lo + k, hi, hashes, at);
  } else {
    th = subtreeHash(lo, lo + k, hashes, at);
    p = inclusionPath(lo + k, hi, n, hashes, at);
  }
  p.push(th);
  return p;
}

/**
 * RFC 6962 section 2.1.1 PATH(index, D[size]): the inclusion proof of leaf `index` in the tree of
 * `size` leaves, from the leaf's sibling up to the root's child. O(log n) reads.
 */
export function proveInclusion(size: number, index: number, r: HashReader): Uint8Array[] {
  assertSize(size, 'size');
  assertSize(index, 'index');
  if (index >= size) throw new RangeError(`"index" ${index} is not below the tree size ${size}`);
  const indexes = inclusionIndexes(0, size, index, []);
  const hashes = indexes.length === 0 ? [] : r.readHashes(indexes);
  return inclusionPath(0, size, index, hashes, { i: 0 });
}

function consistencyIndexes(lo: number, hi: number, n: number, need: number[]): number[] {
  if (n === hi) return lo === 0 ? need : subtreeIndexes(lo, hi, need);
  const { k } = maxPow2Below(hi - lo);
  if (n <= lo + k) {
    consistencyIndexes(lo, lo + k, n, need);
    subtreeIndexes(lo + k, hi, need);
  } else {
    subtreeIndexes(lo, lo + k, need);
    consistencyIndexes(lo + k, hi, n, need);
  }
  return need;
}

function consistencyPath(lo: number, hi: number, n: number, hashes: Uint8Array[], at: { i: number }): Uint8Array[] {
  if (n === hi) return lo === 0 ? [] : [subtreeHash(lo, hi, hashes, at)];
  const { k } = maxPow2Below(hi - lo);
  let p: Uint8Array[];
  let th: Uint8Array;
  if (n <= lo + k) {
    p = consistencyPath(lo, lo + k, n, hashes, at);
    th = subtreeHash(lo + k, hi, hashes, at);
  } else {
    th = subtreeHash(lo, lo + k, hashes, at);
    p = consistencyPath(lo + k, hi, n, hashes, at);
  }
  p.push(th);
  return p;
}

/**
 * RFC 6962 section 2.1.2 PROOF(oldSize, D[newSize]): the consistency proof from the tree of
 * `oldSize` leaves to the tree of `newSize`. Empty when oldSize is 0 or equals newSize
 * (C2SP tlog-witness: the empty tree is consistent with every tree).
 */
export function proveConsistency(newSize: number, oldSize: number, r: HashReader): Uint8Array[] {
  assertSize(newSize, 'newSize');
  assertSize(oldSize, 'oldSize');
  if (oldSize > newSize) throw new RangeError(`"oldSize" ${oldSize} is larger than "newSize" ${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  const indexes = consistencyIndexes(0, newSize, oldSize, []);
  const hashes = indexes.length === 0 ? [] : r.readHashes(indexes);
  return consistencyPath(0, newSize, oldSize, hashes, { i: 0 });
}

function assertSize(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`"${what}" expected a non-negative safe integer, got ${n}`);
}

/**
 * The right edge alone, in memory, for a reader that walks the leaves once (the auditor checking
 * a checkpoint's root against the records): O(log n) memory, O(1) amortized hashes per leaf.
 */
export class RightEdge {
  size = 0;
  /** The complete subtrees' hashes, largest (leftmost) first. */
  readonly hashes: Uint8Array[] = [];

  /**
   * The edge of a tree of `size` leaves from its complete subtrees' hashes, largest first (what
   * rightEdge reads); throws when their number is not the number of one bits of `size`.
   */
  static of(size: number, hashes: readonly Uint8Array[]): RightEdge {
    assertSize(size, 'size');
    let ones = 0;
    for (let n = size; n > 0; n = half(n)) ones += n % 2;
    if (hashes.length !== ones) throw new RangeError(`a tree of ${size} leaves has ${ones} subtrees on its right edge, not ${hashes.length}`);
    const e = new RightEdge();
    e.size = size;
    e.hashes.push(...hashes);
    return e;
  }

  /**
   * Appends a leaf's hash. `stored`, when given, is handed the hashes the tree stores for it
   * (storedHashesForLeaf's, in its order: the leaf, then each subtree it completes).
   */
  append(leaf: Uint8Array, stored?: (h: Uint8Array) => void): void {
    let h = leaf;
    stored?.(h);
    for (let n = this.size; n % 2 === 1; n = half(n)) {
      h = nodeHash(this.hashes.pop()!, h);
      stored?.(h);
    }
    this.hashes.push(h);
    this.size++;
  }

  root(): Uint8Array {
    if (this.size === 0) return EMPTY_ROOT;
    let h = this.hashes[this.hashes.length - 1];
    for (let i = this.hashes.length - 2; i >= 0; i--) h = nodeHash(this.hashes[i], h);
    return h;
  }
}
