// What git would do with several paths asked in one call (src/project/git-ignore.ts
// gitExposures): git is asked once per work tree, and every path must still get the answer it
// gets when asked alone. Real repositories, real git.
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitExposures, type GitPath } from '../../src/project/git-ignore.js';
import { scratch } from '../helpers/cli.js';
import { git, gitRepo } from '../helpers/git-repo.js';

let s: ReturnType<typeof scratch>;
let a: string;
let b: string;
let outside: string;
beforeAll(() => {
  s = scratch('ledger-git-ignore-');
  const base = realpathSync(s.dir);
  // Repository a: rules for the key and the ledger, a tracked view, a tracked file whose name
  // is a glob, a machine-only excludes file (core.excludesFile), a dangling link to a folder.
  a = gitRepo(join(base, 'a'), { '.gitignore': '/keys/*.key\n/.ledger/\n', 'HANDOFF.md': '# handoff\n', 'xy': 'tracked\n', 'ledger-in-git/HEAD': 'committed\n' });
  writeFileSync(join(base, 'machine-excludes'), '/notes.md\n');
  git(a, 'config', 'core.excludesFile', join(base, 'machine-excludes'));
  mkdirSync(join(a, 'keys'));
  symlinkSync(join(base, 'nowhere'), join(a, 'gone'));
  b = gitRepo(join(base, 'b'), { '.gitignore': '/.ledger/\n' });
  outside = join(base, 'elsewhere');
  mkdirSync(outside);
});
afterAll(() => s.cleanup());

const file = (path: string): GitPath => ({ path, isDir: false });
const dir = (path: string): GitPath => ({ path, isDir: true });

describe('when several paths are asked about in one call', () => {
  it('tells a path git ignores from one it does not, in the same work tree', () => {
    const [key, trust] = gitExposures([file(join(a, 'keys', 'harness.key')), file(join(a, 'keys', 'trust.json'))], 'the repository');
    expect(key).toEqual({ state: 'inside', top: a, rel: 'keys/harness.key', tracked: false, ignored: true });
    expect(trust).toEqual({ state: 'inside', top: a, rel: 'keys/trust.json', tracked: false, ignored: false });
  });

  it('gives each path of two work trees and none the answer it gets alone, for either set of rules', () => {
    const paths = [
      file(join(a, 'keys', 'harness.key')), // ignored by the repository's rule
      dir(join(a, '.ledger')), // a folder that does not exist yet, ignored
      file(join(a, 'HANDOFF.md')), // tracked, not ignored
      dir(join(a, 'ledger-in-git')), // a folder with a tracked file in it
      file(join(a, 'x*')), // not a pattern: `xy` is tracked, `x*` is not
      file(join(a, 'notes.md')), // ignored by this machine's excludes only
      file(join(a, 'keys', 'ci.key')),
      dir(join(b, '.ledger')), // another work tree
      file(join(b, 'HANDOFF.md')),
      file(join(outside, 'harness.key')), // no work tree
    ];
    for (const rules of ['this machine', 'the repository'] as const) {
      const together = gitExposures(paths, rules);
      expect(together).toEqual(paths.map((p) => gitExposures([p], rules)[0]));
      expect(together.map((e) => (e.state === 'inside' ? [e.tracked, e.ignored] : e.state))).toEqual([
        [false, true], [false, true], [true, false], [true, false], [false, false],
        [false, rules === 'this machine'], [false, true], [false, true], [false, false], 'outside',
      ]);
    }
  });

  it('a path git refuses to answer for makes only itself unknown', () => {
    // `gone` is a dangling link: git refuses a path beyond it (check-ignore exits 128), so the
    // batch fails and each path is asked alone.
    const paths = [file(join(a, 'gone', 'harness.key')), file(join(a, 'keys', 'harness.key')), file(join(a, 'README.md'))];
    const together = gitExposures(paths, 'the repository');
    expect(together[0]).toMatchObject({ state: 'unknown', why: expect.stringMatching(/check-ignore failed: .*beyond a symbolic link/) });
    expect(together.slice(1)).toEqual([
      { state: 'inside', top: a, rel: 'keys/harness.key', tracked: false, ignored: true },
      { state: 'inside', top: a, rel: 'README.md', tracked: false, ignored: false },
    ]);
    expect(together).toEqual(paths.map((p) => gitExposures([p], 'the repository')[0]));
  });
});
