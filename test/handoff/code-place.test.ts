// Where the code is (issue 24.5), from one shell running git (git.ts treeSnapshot) instead of
// eight git processes (issue 22): every fact is checked against what git's own plumbing says
// (rev-parse, symbolic-ref, @{upstream}), and the content digest against the header's promise
// (the same whatever was committed; changed by any change outside the ledger's files).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codePlace, workTreeContent } from '../../src/handoff/code-place.js';
import { scratch } from '../helpers/cli.js';
import { git, gitRepo } from '../helpers/git-repo.js';

let s: ReturnType<typeof scratch>;
let dir: string;
const own = () => ({ ledgerDir: join(dir, '.ledger'), views: [join(dir, 'HANDOFF.md'), join(dir, 'HANDOFF.yml')] });
const place = (at = dir) => codePlace(at, own());

beforeEach(() => {
  s = scratch('code-place-');
  dir = join(s.dir, 'project');
});
afterEach(() => s.cleanup());

describe('code place', () => {
  it('outside a work tree: no git facts, the folder as given', () => {
    mkdirSync(dir);
    expect(place()).toMatchObject({ path: dir, git: null });
  });

  it('a commit on a branch: the commit and branch git names, clean, not pushed', () => {
    gitRepo(dir);
    const p = place();
    expect(p.path).toBe(dir);
    expect(p.git).toMatchObject({
      branch: 'main',
      commit: git(dir, 'rev-parse', 'HEAD').trim(),
      pushed_to: null,
      dirty: false,
    });
    expect(p.git!.content).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('a top folder whose name is shell text (quotes, $(...), a backslash): the folder as it is, never run', () => {
    dir = join(s.dir, `we"ird $(touch pwned) 'x' \\ ;`);
    gitRepo(dir);
    const p = place();
    expect(p.path).toBe(dir);
    expect(p.git).toMatchObject({ branch: 'main', commit: git(dir, 'rev-parse', 'HEAD').trim(), dirty: false });
    expect(p.git!.content).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const where of [s.dir, dir, process.cwd()]) expect(existsSync(join(where, 'pwned'))).toBe(false);
  });

  it('from a subfolder: the top folder and the same facts', () => {
    gitRepo(dir);
    expect(place(join(dir, 'src'))).toEqual(place());
  });

  it('no commit yet: commit null, the branch still named, dirty with its files', () => {
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'trunk');
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    expect(place().git).toMatchObject({ branch: 'trunk', commit: null, pushed_to: null, dirty: true });
  });

  it('detached: branch null, the commit kept', () => {
    gitRepo(dir);
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    git(dir, 'checkout', '-q', '--detach');
    expect(place().git).toMatchObject({ branch: null, commit: head });
  });

  it('pushed: the upstream that holds the commit, as @{upstream} names it', () => {
    const bare = join(s.dir, 'remote.git');
    git(s.dir, 'init', '-q', '--bare', bare);
    gitRepo(dir);
    git(dir, 'remote', 'add', 'origin', bare);
    git(dir, 'push', '-q', '-u', 'origin', 'main');
    expect(place().git!.pushed_to).toBe(git(dir, 'rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}').trim());
    // A new commit not pushed yet: no remote ref holds it.
    writeFileSync(join(dir, 'b.txt'), 'b\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'b');
    expect(place().git!.pushed_to).toBeNull();
  });

  it('only the ledger and its views changed: not dirty, and the content unchanged', () => {
    gitRepo(dir);
    const was = place().git!.content;
    mkdirSync(join(dir, '.ledger'));
    writeFileSync(join(dir, '.ledger', 'HEAD'), 'x');
    writeFileSync(join(dir, 'HANDOFF.md'), '# work\n');
    expect(place().git).toMatchObject({ dirty: false, content: was });
  });

  it('content: the same whatever was committed, changed by any change (names with spaces, renames, deletions, links, modes)', () => {
    gitRepo(dir, { 'README.md': '# p\n', 'a b.txt': 'one\n', 'old.txt': 'old\n', 'gone.txt': 'gone\n' });
    const seen = new Set([place().git!.content]);
    const changes: Array<() => void> = [
      () => writeFileSync(join(dir, 'a b.txt'), 'two\n'),
      () => renameSync(join(dir, 'old.txt'), join(dir, 'new name.txt')),
      () => rmSync(join(dir, 'gone.txt')),
      () => symlinkSync('README.md', join(dir, 'link')),
      () => writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 }),
      () => {
        mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
        writeFileSync(join(dir, 'deep', 'er', 'f'), 'f\n');
      },
    ];
    for (const change of changes) {
      change();
      const dirty = place().git!;
      expect(dirty.dirty).toBe(true);
      expect(seen.has(dirty.content)).toBe(false);
      seen.add(dirty.content);
      // Committing exactly that work leaves the content as it was and the tree clean.
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', 'step');
      expect(place().git, `after change ${changes.indexOf(change)}`).toMatchObject({ dirty: false, content: dirty.content });
      // The stop hook's own call (no status handed in) agrees.
      expect(workTreeContent(dir, own())).toBe(dirty.content);
    }
  });

  it('a link in a SHA-256 repository, before and after its first commit: the blob id git gives it', () => {
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'main', '--object-format=sha256');
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    symlinkSync('a.txt', join(dir, 'link'));
    const before = place().git!;
    expect(before).toMatchObject({ commit: null, dirty: true });
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'first');
    const after = place().git!;
    expect(after.commit).toMatch(/^[0-9a-f]{64}$/);
    expect(after).toMatchObject({ dirty: false, content: before.content });
  });

  it('HEAD\'s tree unreadable (its object removed): dirty, and no content digest (never one of what could not be read)', () => {
    gitRepo(dir);
    const tree = git(dir, 'rev-parse', 'HEAD^{tree}').trim();
    rmSync(join(dir, '.git', 'objects', tree.slice(0, 2), tree.slice(2)), { force: true });
    const p = place();
    expect(p.path).toBe(dir);
    expect(p.git!.dirty).toBe(true);
    expect(p.git!.content).toBeUndefined();
    expect(workTreeContent(dir, own())).toBeNull();
  });

  it('a merge in progress with a conflict: dirty, and the content can still be told', () => {
    gitRepo(dir, { 'f.txt': 'base\n' });
    git(dir, 'checkout', '-q', '-b', 'other');
    writeFileSync(join(dir, 'f.txt'), 'other\n');
    git(dir, 'commit', '-q', '-am', 'other');
    git(dir, 'checkout', '-q', 'main');
    writeFileSync(join(dir, 'f.txt'), 'main\n');
    git(dir, 'commit', '-q', '-am', 'main');
    try {
      git(dir, 'merge', '-q', 'other');
    } catch {
      // the conflict is what this test wants
    }
    const p = place().git!;
    expect(p.dirty).toBe(true);
    expect(p.content).toMatch(/^sha256:/);
  });
});
