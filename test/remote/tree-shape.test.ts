// readShapeAndBlobs (src/remote/tree.ts) reads a fetched commit's root tree itself, from the raw
// object, where `git ls-tree` and `git cat-file commit` did: it must say what they say, for
// every kind of entry a hostile remote can put at the root (executable, symlink, gitlink,
// subtree, odd names), and name the same parents.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readShapeAndBlobs } from '../../src/remote/tree.js';
import { scratch } from '../helpers/cli.js';
import { git } from './kit.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

function gitIn(repo: string, args: string[], input?: string): string {
  const r = spawnSync('git', ['--git-dir', repo, ...args], { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: repo, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

describe('the root of a fetched commit, read from the raw tree', () => {
  it('is what ls-tree lists, entry for entry, and the parents are the commit\'s', () => {
    const s = scratch('ledger-tree-shape-');
    cleanup = s.cleanup;
    const repo = join(s.dir, 'r.git');
    git(['init', '--quiet', '--bare', repo]);
    const blob = gitIn(repo, ['hash-object', '-w', '--stdin'], 'line\n');
    const sub = gitIn(repo, ['mktree'], `100644 blob ${blob}\tx\n`);
    const entries = [
      `100644 blob ${blob}\tHEAD`,
      `040000 tree ${sub}\trecords`,
      `100755 blob ${blob}\trun me`,
      `120000 blob ${blob}\tlink`,
      `160000 commit ${'1'.repeat(40)}\tmodule`,
      `100644 blob ${blob}\tnaïve-\u00e9`,
    ];
    const tree = gitIn(repo, ['mktree', '--missing'], entries.join('\n') + '\n');
    const p1 = gitIn(repo, ['commit-tree', sub, '-m', 'a']);
    const p2 = gitIn(repo, ['commit-tree', sub, '-m', 'b']);
    for (const parents of [[], [p1], [p1, p2]]) {
      const commit = gitIn(repo, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', 'c']);
      const listed = spawnSync('git', ['--git-dir', repo, 'ls-tree', '-z', `${commit}^{tree}`], { encoding: 'utf8' }).stdout.split('\0').filter(Boolean)
        .map((l) => `${l.slice(0, l.indexOf('\t')).split(' ')[1]}:${l.slice(l.indexOf('\t') + 1)}`);
      const got = readShapeAndBlobs(repo, commit, ['HEAD', 'records/x', 'missing', 'records']);
      expect(got.root).toEqual(listed);
      expect(got.root).toContain('commit:module');
      expect(got.parents).toEqual(parents);
      expect(got.blobs.map((b) => b?.toString('utf8') ?? null)).toEqual(['line\n', 'line\n', null, null]);
    }
  });
});
