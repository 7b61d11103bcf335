// dir/v2 and dir/v1 over real trees built in a scratch folder from generated specs.
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkEvidence, digestSource, dirDigest, redigestSource, type EvidenceReadOps } from '../../../src/causal/evidence.js';
import { realEvidenceOps } from '../../../src/causal/evidence/read-ops.js';
import { LedgerError } from '../../../src/errors.js';
import { scratch } from '../../helpers/cli.js';
import { runs } from '../../helpers/runs.js';
import { build, canon, legacyDirV1, type Node } from './tree.js';

const s = scratch('ledger-dir-');
afterAll(() => s.cleanup());
let n = 0;
/** A fresh folder under the scratch root holding `tree`. */
function materialise(tree: Extract<Node, { t: 'd' }>): string {
  const dir = join(s.dir, `t${n++}`);
  mkdirSync(dir);
  build(dir, tree);
  return dir;
}

// A small alphabet, so generated pairs often share structure: newline, space, "f", the bytes of
// an invalid UTF-8 sequence, a backslash and a dot. Never "/", NUL, ".", ".." or ".git".
const nameOf = (bytes: number[]) => Buffer.from(bytes);
const name = fc
  .array(fc.constantFrom(0x61, 0x0a, 0x20, 0x66, 0xff, 0x80, 0x5c, 0x2e), { minLength: 1, maxLength: 3 })
  .map(nameOf)
  .filter((b) => !['.', '..', '.git'].includes(b.toString('latin1')));
const utf8Name = fc
  .array(fc.constantFrom(0x61, 0x20, 0x66, 0x5c, 0x2e, 0x09), { minLength: 1, maxLength: 3 })
  .map(nameOf)
  .filter((b) => !['.', '..', '.git'].includes(b.toString('latin1')));

function treeArb(nameArb: fc.Arbitrary<Buffer>, depth: number): fc.Arbitrary<Extract<Node, { t: 'd' }>> {
  const leaf: fc.Arbitrary<Node> = fc.oneof(
    fc.record({ t: fc.constant('f' as const), data: fc.uint8Array({ maxLength: 2 }).map((a) => Buffer.from(a)), exec: fc.boolean() }),
    fc.record({ t: fc.constant('l' as const), target: nameArb }),
  );
  const child: fc.Arbitrary<Node> = depth > 0 ? fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: treeArb(nameArb, depth - 1) }) : leaf;
  return fc.uniqueArray(fc.tuple(nameArb, child), { selector: ([k]) => k.toString('hex'), maxLength: 3 }).map((kids) => ({ t: 'd' as const, kids }));
}

describe('dir/v2: no two different trees share a digest, whatever bytes the names hold', () => {
  it('two generated trees digest alike exactly when they are the same tree', () => {
    fc.assert(
      fc.property(treeArb(name, 2), treeArb(name, 2), (a, b) => {
        const same = canon(a).join('\n') === canon(b).join('\n');
        expect(dirDigest(materialise(a)) === dirDigest(materialise(b))).toBe(same);
      }),
      { numRuns: runs(60, 2000) },
    );
  });

  it('the same tree built twice, its entries created in another order, digests alike', () => {
    const reversed = (t: Extract<Node, { t: 'd' }>): Extract<Node, { t: 'd' }> => ({ t: 'd', kids: [...t.kids].reverse().map(([k, v]) => [k, v.t === 'd' ? reversed(v) : v]) });
    fc.assert(
      fc.property(treeArb(name, 2), (t) => {
        expect(dirDigest(materialise(reversed(t)))).toBe(dirDigest(materialise(t)));
      }),
      { numRuns: runs(30, 1000) },
    );
  });

  it('one change to a tree (a rename, a byte, the exec bit, a link target, an empty folder) changes its digest', () => {
    const mutate = (t: Extract<Node, { t: 'd' }>, how: number, extra: Buffer): Extract<Node, { t: 'd' }> => {
      if (t.kids.length === 0 || how === 0) return { t: 'd', kids: [...t.kids.filter(([k]) => !k.equals(extra)), [extra, { t: 'd', kids: [] }]] };
      const [[k, node], ...rest] = t.kids;
      if (how === 1 && !rest.some(([r]) => r.equals(Buffer.concat([k, Buffer.from('\n')])))) return { t: 'd', kids: [[Buffer.concat([k, Buffer.from('\n')]), node], ...rest] };
      if (node.t === 'f') return { t: 'd', kids: [[k, how === 2 ? { ...node, exec: !node.exec } : { ...node, data: Buffer.concat([node.data, extra]) }], ...rest] };
      if (node.t === 'l') return { t: 'd', kids: [[k, { t: 'l', target: Buffer.concat([node.target, extra]) }], ...rest] };
      return { t: 'd', kids: [[k, mutate(node, how, extra)], ...rest] };
    };
    fc.assert(
      fc.property(treeArb(name, 2), fc.integer({ min: 0, max: 3 }), name, (t, how, extra) => {
        const m = mutate(t, how, extra);
        fc.pre(canon(m).join('\n') !== canon(t).join('\n'));
        expect(dirDigest(materialise(m))).not.toBe(dirDigest(materialise(t)));
      }),
      { numRuns: runs(40, 1000) },
    );
  });

  it('when a file name holds a newline, the forged listing of v1 is a different tree under v2', () => {
    // Issue 13 finding 6: {a: X, b: Y} and {"a\nf <sha256 Y> b": X} had one v1 digest.
    const yHex = createHash('sha256').update('b').digest('hex');
    const honest = materialise({ t: 'd', kids: [[Buffer.from('a'), { t: 'f', data: Buffer.from('a'), exec: false }], [Buffer.from('b'), { t: 'f', data: Buffer.from('b'), exec: false }]] });
    const forged = materialise({ t: 'd', kids: [[Buffer.from(`a\nf ${yHex} b`), { t: 'f', data: Buffer.from('a'), exec: false }]] });
    expect(legacyDirV1(forged)).toBe(legacyDirV1(honest)); // the old format collides...
    expect(dirDigest(forged)).not.toBe(dirDigest(honest)); // ...v2 does not
  });
});

describe('dir/v1 records written before v2', () => {
  it('are recomputed exactly as the old code did, for every tree with UTF-8 names without newlines', () => {
    fc.assert(
      fc.property(treeArb(utf8Name, 2), (t) => {
        const root = materialise({ t: 'd', kids: [[Buffer.from('tree'), t]] });
        const ctx = { root, ledgerDir: join(root, '.ledger') };
        expect(redigestSource('dir:tree', ctx)).toBe(legacyDirV1(join(root, 'tree')));
        // A new digest of the same tree is v2, and says so in its source.
        expect(digestSource('dir:tree', ctx).source).toBe('dir/v2:tree');
      }),
      { numRuns: runs(40, 1000) },
    );
  });

  it('refuse a tree v1 cannot tell apart (a newline or non-UTF-8 name) as the old format, never as current', () => {
    for (const bad of [Buffer.from('a\nb'), Buffer.from([0x61, 0xff])]) {
      const root = materialise({ t: 'd', kids: [[Buffer.from('tree'), { t: 'd', kids: [[bad, { t: 'f', data: Buffer.from('x'), exec: false }]] }]] });
      const ctx = { root, ledgerDir: join(root, '.ledger') };
      // The newline tree has a v1 digest the old code would have matched; the old code could not
      // even read the non-UTF-8 name back (it failed with an internal error), so any digest will do.
      const digest = bad.includes(0x0a) ? legacyDirV1(join(root, 'tree')) : 'sha256:' + '0'.repeat(64);
      const check = checkEvidence('out', { source: 'dir:tree', digest }, ctx);
      expect(check.current).toBe(false);
      expect(check.reason).toContain('old dir/v1 format');
      expect(check.reason).toContain('dir/v2');
    }
  });
});

describe('when the tree changes during a dir: walk', () => {
  // Deterministic: the seam deletes or adds a file at a chosen step, no race involved.
  const tree = (): string => materialise({ t: 'd', kids: [[Buffer.from('t'), { t: 'd', kids: [[Buffer.from('a'), { t: 'f', data: Buffer.from('1'), exec: false }], [Buffer.from('b'), { t: 'f', data: Buffer.from('2'), exec: false }]] }]] });
  const cases: { name: string; ops: (root: string) => EvidenceReadOps }[] = [
    {
      name: 'a listed file is deleted before it is looked at',
      ops: (root) => ({ ...realEvidenceOps, readdir: (p) => { const names = realEvidenceOps.readdir(p); if (p.toString().endsWith('/t')) unlinkSync(join(root, 't/b')); return names; } }),
    },
    {
      name: 'a file is replaced between its lstat and its open',
      ops: (root) => ({ ...realEvidenceOps, openRead: (p) => { if (p.toString().endsWith('/t/a')) { unlinkSync(join(root, 't/a')); writeFileSync(join(root, 't/a'), '1'); } return realEvidenceOps.openRead(p); } }),
    },
    {
      name: 'a file is added to a directory already listed',
      ops: (root) => ({ ...realEvidenceOps, openRead: (p) => { if (p.toString().endsWith('/t/b')) writeFileSync(join(root, 't/c'), 'late'); return realEvidenceOps.openRead(p); } }),
    },
    {
      name: 'a file grows while it is read',
      ops: (root) => { let once = false; return { ...realEvidenceOps, read: (fd, buf) => { if (!once) { once = true; writeFileSync(join(root, 't/a'), '1 and more'); } return realEvidenceOps.read(fd, buf); } }; },
    },
    {
      name: 'the whole directory is removed mid-walk',
      ops: (root) => ({ ...realEvidenceOps, openRead: (p) => { const fd = realEvidenceOps.openRead(p); rmSync(join(root, 't'), { recursive: true }); return fd; } }),
    },
  ];
  for (const c of cases) {
    it(`${c.name}: append refuses (INPUT_EVIDENCE, exit 2) and the gate holds, never an internal error`, () => {
      let root = tree();
      let err: unknown;
      try {
        digestSource('dir:t', { root, ledgerDir: join(root, '.ledger'), ops: c.ops(root) });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LedgerError);
      expect((err as LedgerError).code).toBe('INPUT_EVIDENCE');
      expect((err as LedgerError).exitCode).toBe(2);
      expect((err as Error).message).toContain('changed while digesting');

      root = tree();
      const recorded = digestSource('dir:t', { root, ledgerDir: join(root, '.ledger') });
      const check = checkEvidence('t', recorded, { root, ledgerDir: join(root, '.ledger'), ops: c.ops(root) });
      expect(check).toMatchObject({ current: false, actual: null });
      expect(check.reason).toContain('changed while digesting');
    });
  }
});
