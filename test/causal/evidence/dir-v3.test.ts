// dir/v3 (issue 26, item 1) in real git work trees: what the tree's .gitignore files ignore is
// left out, the rules are in the digest, a hold names the first path that differs, and the old
// formats still verify.
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkEvidence, digestSource } from '../../../src/causal/evidence.js';
import { firstDifference, keptManifests } from '../../../src/causal/evidence/manifest.js';
import { putBlob } from '../../../src/handoff/blobs.js';
import { scratch } from '../../helpers/cli.js';

const s = scratch('ledger-dirv3-');
afterAll(() => s.cleanup());
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
let n = 0;

/** A git work tree with src/a.py, a root .gitignore ignoring __pycache__/ and *.log, and a ledger directory. */
function project(gitignore = '__pycache__/\n*.log\n', withGit = true) {
  const root = realpathSync(s.dir) + `/p${n++}`;
  mkdirSync(join(root, 'src/pkg'), { recursive: true });
  mkdirSync(join(root, '.ledger'));
  if (withGit) git(root, 'init', '-q');
  writeFileSync(join(root, '.gitignore'), gitignore);
  writeFileSync(join(root, 'src/a.py'), 'A = 1\n');
  writeFileSync(join(root, 'src/pkg/b.py'), 'B = 2\n');
  const ctx = { root, ledgerDir: join(root, '.ledger'), manifests: keptManifests(join(root, '.ledger')) };
  const keep = (_d: string, stream: Buffer) => void putBlob(ctx.ledgerDir, stream);
  return { root, ctx, digest: (src: string) => digestSource(src, ctx, keep), check: (ev: { digest: string; source: string }) => checkEvidence('src', ev, ctx) };
}

describe('dir/v3: inside a git work tree, what git ignores is left out', () => {
  it('records dir/v3, and stays current when ignored files appear (a test run writes __pycache__/ and a log)', () => {
    const p = project();
    const ev = p.digest('dir:src');
    expect(ev.source).toBe('dir/v3:src');
    mkdirSync(join(p.root, 'src/pkg/__pycache__'));
    writeFileSync(join(p.root, 'src/pkg/__pycache__/b.cpython-312.pyc'), 'bytecode');
    writeFileSync(join(p.root, 'src/run.log'), 'log');
    expect(p.check(ev)).toMatchObject({ current: true, reason: 'dir/v3:src is unchanged' });
  });

  it('holds on a file git does not ignore, naming the first path that differs', () => {
    const p = project();
    const ev = p.digest('dir:src');
    writeFileSync(join(p.root, 'src/pkg/b.py'), 'B = 3\n');
    const c = p.check(ev);
    expect(c.current).toBe(false);
    expect(c.reason).toMatch(/^dir\/v3:src has changed: "pkg\/b\.py" changed \(it digests to sha256:/);
    writeFileSync(join(p.root, 'src/pkg/b.py'), 'B = 2\n');
    writeFileSync(join(p.root, 'src/new.py'), '');
    expect(p.check(ev).reason).toMatch(/"new\.py" was added \(a file\)/);
    rmSync(join(p.root, 'src/new.py'));
    rmSync(join(p.root, 'src/a.py'));
    expect(p.check(ev).reason).toMatch(/"a\.py" was removed/);
  });

  it('puts the rules in the digest: a .gitignore above the tree that changes holds, and is named', () => {
    const p = project();
    const ev = p.digest('dir:src');
    // Hiding a new file by a new rule is a change, not a way around the gate.
    writeFileSync(join(p.root, '.gitignore'), '__pycache__/\n*.log\nevil.py\n');
    writeFileSync(join(p.root, 'src/evil.py'), 'import os\n');
    const c = p.check(ev);
    expect(c.current).toBe(false);
    expect(c.reason).toMatch(/the ignore rules "\.gitignore" changed/);
  });

  it('never leaves out a .gitignore inside the tree, even one that ignores itself', () => {
    const p = project();
    const ev = p.digest('dir:src');
    writeFileSync(join(p.root, 'src/.gitignore'), '.gitignore\nevil.py\n');
    writeFileSync(join(p.root, 'src/evil.py'), 'import os\n');
    const c = p.check(ev);
    expect(c.current).toBe(false);
    expect(c.reason).toMatch(/"\.gitignore" was added/);
  });

  it('applies only the .gitignore files: .git/info/exclude hides nothing', () => {
    const p = project();
    const ev = p.digest('dir:src');
    writeFileSync(join(p.root, '.git/info/exclude'), 'evil.py\n');
    writeFileSync(join(p.root, 'src/evil.py'), '');
    expect(p.check(ev)).toMatchObject({ current: false });
  });

  it('digests a directory git ignores as a whole by dir/v2 (all of it is what was named)', () => {
    const p = project('build/\n');
    mkdirSync(join(p.root, 'build'));
    writeFileSync(join(p.root, 'build/out.bin'), 'x');
    expect(p.digest('dir:build').source).toBe('dir/v2:build');
  });

  it('outside a git work tree, a new digest is dir/v2 as before, and the old dir/v2 record still verifies', () => {
    const p = project('', false);
    const ev = p.digest('dir:src');
    expect(ev.source).toBe('dir/v2:src');
    expect(p.check(ev).current).toBe(true);
    // A dir/v2 record written before v3, now inside a work tree: recomputed as v2, and a change
    // (even in what git would ignore) holds, as it always did.
    git(p.root, 'init', '-q');
    expect(p.check(ev).current).toBe(true);
    mkdirSync(join(p.root, 'src/__pycache__'));
    expect(p.check(ev).current).toBe(false);
  });

  it('a recorded dir/v3 that is no longer in a work tree holds, with the reason', () => {
    const p = project();
    const ev = p.digest('dir:src');
    rmSync(join(p.root, '.git'), { recursive: true });
    const c = p.check(ev);
    expect(c.current).toBe(false);
    expect(c.reason).toMatch(/is dir\/v3, which leaves out what git ignores, but .* is not in a git work tree now/);
  });

  it('a kept manifest that does not hash to the recorded digest is not used', () => {
    const p = project();
    const ev = p.digest('dir:src');
    const forged = (d: string) => (d === ev.digest ? Buffer.from('handoff-ledger/dir/v2\n') : null);
    expect(firstDifference(forged, ev.digest, Buffer.from('handoff-ledger/dir/v2\n'))).toBeNull();
    writeFileSync(join(p.root, 'src/a.py'), 'A = 2\n');
    const c = checkEvidence('src', ev, { ...p.ctx, manifests: forged });
    expect(c.reason).toMatch(/^dir\/v3:src has changed: it digests to sha256:/);
  });
});
