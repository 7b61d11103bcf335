// The RFC 6962 tree (src/tlog/tree.ts, verify.ts) against independent vectors: transparency-dev/
// merkle's probes and reference tree, Go's sumdb/tlog record hash (fixtures/tlog/SOURCES.md), and
// a property test that every proof made verifies and any one changed byte, size or hash fails.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_ROOT, fromBase64, leafHash, nodeHash } from '../../src/tlog/hash.js';
import { RightEdge, arrayReader, proveConsistency, proveInclusion, rightEdge, storedHashCount, storedHashIndex, storedHashesForLeaf, treeHash } from '../../src/tlog/tree.js';
import { rootFromInclusion, verifyConsistency, verifyInclusion } from '../../src/tlog/verify.js';
import { runs } from '../helpers/runs.js';

const FIX = new URL('../../fixtures/tlog/', import.meta.url).pathname;
const hex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');
// The probes' JSON carries Go []byte as base64 of any length ("" and 12-byte ones included).
const b64any = (s: string | null) => new Uint8Array(Buffer.from(s ?? '', 'base64'));

function probes(dir: string): { file: string; p: Record<string, unknown> }[] {
  const out: { file: string; p: Record<string, unknown> }[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d).sort()) {
      const path = join(d, f);
      if (statSync(path).isDirectory()) walk(path);
      else if (f.endsWith('.json')) out.push({ file: path.slice(FIX.length), p: JSON.parse(readFileSync(path, 'utf8')) });
    }
  };
  walk(join(FIX, dir));
  return out;
}

const ref = JSON.parse(readFileSync(join(FIX, 'reference-tree.json'), 'utf8'));
const go = JSON.parse(readFileSync(join(FIX, 'go-sumdb.json'), 'utf8'));

/** A stored tree of the given leaf hashes, appended one at a time as a writer does. */
function build(leaves: readonly Uint8Array[]): Uint8Array[] {
  const stored: Uint8Array[] = [];
  leaves.forEach((h, i) => stored.push(...storedHashesForLeaf(i, h, arrayReader(stored))));
  return stored;
}

describe('RFC 6962 hashing against transparency-dev/merkle and Go sumdb/tlog', () => {
  it('hashes the empty tree, leaves and nodes as the reference hasher does', () => {
    const h = ref.rfc6962Hasher;
    expect(toHex(EMPTY_ROOT), 'emptyRoot').toBe(h.emptyRoot);
    expect(toHex(leafHash(new Uint8Array())), 'emptyLeaf').toBe(h.emptyLeaf);
    expect(toHex(leafHash('L123456')), 'leafL123456').toBe(h.leafL123456);
    expect(toHex(nodeHash(Buffer.from('N123'), Buffer.from('N456'))), 'nodeN123N456').toBe(h.nodeN123N456);
    // Domain separation: the leaf of the same bytes is not the node.
    expect(toHex(leafHash(Buffer.from('N123N456'))), 'a leaf is not a node').not.toBe(h.nodeN123N456);
  });

  it('gives RecordHash("hello world") as Go sumdb/tlog does', () => {
    expect(Buffer.from(leafHash('hello world')).toString('base64')).toBe(go.tlog.helloWorldRecordHash);
  });

  it('builds the reference tree: every leaf hash, root and right edge of sizes 0 to 8', () => {
    const leaves = ref.leafInputs.map((x: string) => leafHash(hex(x)));
    expect(leaves.map(toHex)).toEqual(ref.leafHashes);
    const stored = build(leaves);
    const edge = new RightEdge();
    for (let n = 0; n <= 8; n++) {
      expect(toHex(treeHash(n, arrayReader(stored))), `root of size ${n}`).toBe(ref.rootHashes[n]);
      expect(rightEdge(n, arrayReader(stored)).map(toHex), `right edge of size ${n}`).toEqual(ref.rightEdges[n]);
      expect(toHex(edge.root()), `RightEdge root of size ${n}`).toBe(ref.rootHashes[n]);
      expect(edge.hashes.map(toHex), `RightEdge of size ${n}`).toEqual(ref.rightEdges[n]);
      if (n < 8) edge.append(leaves[n]);
    }
    expect(stored.length).toBe(storedHashCount(8));
  });

  it('stores hashes where Go sumdb/tlog does (StoredHashIndex)', () => {
    // Go: the leaf n's hash is stored at StoredHashIndex(0, n); these are its first values.
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => storedHashIndex(0, n))).toEqual([0, 1, 3, 4, 7, 8, 10, 11]);
    expect([storedHashIndex(1, 0), storedHashIndex(2, 0), storedHashIndex(1, 1), storedHashIndex(3, 0)]).toEqual([2, 6, 5, 14]);
  });
});

describe('inclusion probes of transparency-dev/merkle', () => {
  const all = probes('merkle/inclusion');
  it('has the probes', () => expect(all.length).toBe(98));
  for (const { file, p } of all) {
    it(`${file}: ${p.wantErr ? 'refused' : 'verified'}`, () => {
      // Indexes past 2^53 (leafIdx-sub-@1 is 2^64 - 1, read as a float) are not safe integers: refused.
      const ok = verifyInclusion(p.leafIdx as number, p.treeSize as number, b64any(p.leafHash as string), ((p.proof as string[]) ?? []).map(b64any), b64any(p.root as string));
      expect(ok, file).toBe(!p.wantErr);
    });
  }
});

describe('consistency probes of transparency-dev/merkle', () => {
  const all = probes('merkle/consistency');
  // Policy (verify.ts, C2SP tlog-witness): the empty tree is consistent with every tree.
  const DIFFERENT = new Set(['merkle/consistency/additional/size1-is-zero-and-size2-is-not-zero.json']);
  it('has the probes', () => expect(all.length).toBe(98));
  for (const { file, p } of all) {
    const want = DIFFERENT.has(file) ? true : !p.wantErr;
    it(`${file}: ${want ? 'verified' : 'refused'}${DIFFERENT.has(file) ? ' (C2SP: the empty tree is consistent with every tree)' : ''}`, () => {
      const ok = verifyConsistency(p.size1 as number, p.size2 as number, b64any(p.root1 as string), b64any(p.root2 as string), ((p.proof as string[]) ?? []).map(b64any));
      expect(ok, file).toBe(want);
    });
  }
});

describe('the proofs this code makes for the reference tree', () => {
  const leaves = ref.leafInputs.map((x: string) => leafHash(hex(x)));
  const r = arrayReader(build(leaves));
  it('are the happy-path proofs of transparency-dev/merkle, byte for byte', () => {
    let n = 0;
    for (const { file, p } of [...probes('merkle/inclusion'), ...probes('merkle/consistency')]) {
      if (p.desc !== 'happy path') continue;
      const want = ((p.proof as string[]) ?? []);
      const made = 'leafIdx' in p ? proveInclusion(p.treeSize as number, p.leafIdx as number, r) : proveConsistency(p.size2 as number, p.size1 as number, r);
      expect(made.map((h) => Buffer.from(h).toString('base64')), file).toEqual(want);
      n++;
    }
    expect(n).toBe(10);
  });
});

describe('every proof made verifies, and any single change fails it (property)', () => {
  // Every size from 1 to 70 alike (size 'max'; fast-check's default size makes about ten leaves,
  // never a tree more than four levels deep).
  const leafSet = fc.array(fc.uint8Array({ minLength: 0, maxLength: 8 }), { minLength: 1, maxLength: 70, size: 'max' });

  it('inclusion: made for any leaf of any size; a flipped bit, a moved index, a wrong size, a dropped or extra hash fail', () => {
    fc.assert(fc.property(leafSet, fc.nat(), fc.nat(), fc.nat(), (datas, a, b, c) => {
      const leaves = datas.map((d, i) => leafHash(Uint8Array.from([i, ...d])));
      const r = arrayReader(build(leaves));
      const size = 1 + (a % leaves.length);
      const index = b % size;
      const root = treeHash(size, r);
      const proof = proveInclusion(size, index, r);
      expect(verifyInclusion(index, size, leaves[index], proof, root)).toBe(true);
      expect(rootFromInclusion(index, size, leaves[index], proof)).toEqual(root);
      // A changed byte anywhere: in a proof hash, the leaf, the root.
      if (proof.length > 0) {
        const k = c % proof.length;
        const bad = proof.map((h) => Uint8Array.from(h));
        bad[k][c % 32] ^= 1 << (c % 8);
        expect(verifyInclusion(index, size, leaves[index], bad, root)).toBe(false);
        expect(verifyInclusion(index, size, leaves[index], proof.slice(1), root)).toBe(false);
      }
      const badLeaf = Uint8Array.from(leaves[index]);
      badLeaf[c % 32] ^= 1;
      expect(verifyInclusion(index, size, badLeaf, proof, root)).toBe(false);
      const badRoot = Uint8Array.from(root);
      badRoot[c % 32] ^= 0x80;
      expect(verifyInclusion(index, size, leaves[index], proof, badRoot)).toBe(false);
      expect(verifyInclusion(index, size, leaves[index], [...proof, root], root)).toBe(false);
      // Another index or size: fails unless it names the same leaf hash at the same place.
      const other = (index + 1 + (c % size)) % size;
      if (other !== index && toHex(leaves[other]) !== toHex(leaves[index])) expect(verifyInclusion(other, size, leaves[index], proof, root)).toBe(false);
      // The size is bound by the (signed) root, not by the proof: a proof for one size never
      // verifies against the root of another (sizes of the same proof shape included).
      if (size + 1 <= leaves.length) expect(verifyInclusion(index, size + 1, leaves[index], proof, treeHash(size + 1, r))).toBe(false);
      if (size - 1 > index) expect(verifyInclusion(index, size - 1, leaves[index], proof, treeHash(size - 1, r))).toBe(false);
    }), { numRuns: runs(150, 5_000) });
  });

  it('consistency: made between any two sizes; a flipped bit, a wrong size or root fail', () => {
    fc.assert(fc.property(leafSet, fc.nat(), fc.nat(), fc.nat(), (datas, a, b, c) => {
      const leaves = datas.map((d, i) => leafHash(Uint8Array.from([i, ...d])));
      const r = arrayReader(build(leaves));
      const newSize = 1 + (a % leaves.length);
      const oldSize = 1 + (b % newSize);
      const oldRoot = treeHash(oldSize, r);
      const newRoot = treeHash(newSize, r);
      const proof = proveConsistency(newSize, oldSize, r);
      expect(verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof)).toBe(true);
      if (proof.length > 0) {
        const bad = proof.map((h) => Uint8Array.from(h));
        bad[c % bad.length][c % 32] ^= 1 << (c % 8);
        expect(verifyConsistency(oldSize, newSize, oldRoot, newRoot, bad)).toBe(false);
        expect(verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof.slice(0, -1))).toBe(false);
      }
      const badOld = Uint8Array.from(oldRoot);
      badOld[c % 32] ^= 1;
      expect(verifyConsistency(oldSize, newSize, badOld, newRoot, proof)).toBe(false);
      const badNew = Uint8Array.from(newRoot);
      badNew[c % 32] ^= 1;
      expect(verifyConsistency(oldSize, newSize, oldRoot, badNew, proof)).toBe(false);
      if (newSize < leaves.length) expect(verifyConsistency(oldSize, newSize + 1, oldRoot, treeHash(newSize + 1, r), proof)).toBe(false);
      if (oldSize > 1 && oldSize < newSize) expect(verifyConsistency(oldSize - 1, newSize, treeHash(oldSize - 1, r), newRoot, proof)).toBe(false);
    }), { numRuns: runs(150, 5_000) });
  });

  it('the right edge kept in memory gives the root the stored tree gives, at every size', () => {
    fc.assert(fc.property(leafSet, (datas) => {
      const leaves = datas.map((d, i) => leafHash(Uint8Array.from([i, ...d])));
      const stored = build(leaves);
      const edge = new RightEdge();
      leaves.forEach((h, i) => {
        edge.append(h);
        expect(toHex(edge.root()), `size ${i + 1}`).toBe(toHex(treeHash(i + 1, arrayReader(stored))));
      });
      expect(stored.length).toBe(storedHashCount(leaves.length));
    }), { numRuns: runs(60, 2_000) });
  });

  it('the right edge hands out the stored hashes storedHashesForLeaf makes, and one resumed at any size (RightEdge.of) goes on alike', () => {
    fc.assert(fc.property(leafSet, fc.nat(), (datas, a) => {
      const leaves = datas.map((d, i) => leafHash(Uint8Array.from([i, ...d])));
      const stored = build(leaves);
      const cut = a % (leaves.length + 1);
      const handed: Uint8Array[] = [];
      const first = new RightEdge();
      leaves.slice(0, cut).forEach((h) => first.append(h, (x) => handed.push(x)));
      const resumed = RightEdge.of(cut, rightEdge(cut, arrayReader(stored)));
      expect(resumed.hashes.map(toHex)).toEqual(first.hashes.map(toHex));
      leaves.slice(cut).forEach((h) => resumed.append(h, (x) => handed.push(x)));
      expect(handed.map(toHex)).toEqual(stored.map(toHex));
      expect(toHex(resumed.root())).toBe(toHex(treeHash(leaves.length, arrayReader(stored))));
    }), { numRuns: runs(60, 2_000) });
    expect(() => RightEdge.of(3, [leafHash('x')])).toThrow(RangeError);
  });
});

describe('when a size or index is not a safe integer', () => {
  it('refuses to make a proof (RangeError) and verification says no', () => {
    const r = arrayReader([leafHash('a')]);
    expect(() => proveInclusion(1, 1, r)).toThrow(RangeError);
    expect(() => proveInclusion(2 ** 53, 0, r)).toThrow(RangeError);
    expect(() => proveConsistency(1, 2, r)).toThrow(RangeError);
    expect(verifyInclusion(-1, 1, leafHash('a'), [], leafHash('a'))).toBe(false);
    expect(verifyInclusion(0.5, 1, leafHash('a'), [], leafHash('a'))).toBe(false);
    expect(verifyConsistency(1, 2 ** 64, leafHash('a'), leafHash('a'), [leafHash('b')])).toBe(false);
  });
  it('decodes only canonical, padded base64', () => {
    expect(fromBase64('AA==')).toEqual(new Uint8Array([0]));
    expect(fromBase64('AB==')).toBe(null);
    expect(fromBase64('AA')).toBe(null);
    expect(fromBase64('A A=')).toBe(null);
  });
});
