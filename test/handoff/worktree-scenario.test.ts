// Issue 14.6 in a real git repository: claude works in a `git worktree add` checkout on branch
// claude-branch while the ledger lives in the main checkout. `--tests-cmd` runs where claude is
// (not in the main checkout on master), the checkpoint records that directory, its commit, its
// branch and whether it was clean, and `resume` lists what was committed after it, counting
// neither the ledger's own files nor the views.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLedger, scratch } from '../helpers/cli.js';
import { Ledger } from '../../src/ledger.js';
import type { TestsRun } from '../../src/record.js';

let s: ReturnType<typeof scratch>;
let main: string;
let wt: string;
const env = (home: string) => ({ HOME: home, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' });
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { PATH: process.env.PATH, ...env(s.dir) }, encoding: 'utf8' }).trim();
const lastTests = () => ([...Ledger.open({ dir: join(main, '.ledger') }).records()].at(-1)!.record as { tests?: TestsRun }).tests!;
const FLAGS = ['--done', 'ran the tz suite', '--state', '14 pass, 2 fail', '--next', 'fix toLocal() for -05:00'];

/** `ledger ...` as claude, from `cwd`, on the main checkout's ledger. */
async function ledger(cwd: string, args: string[], extraEnv: Record<string, string> = {}) {
  const r = await runLedger([...args, '--dir', join(main, '.ledger'), '--key', join(main, 'keys/harness.key'), '--json'], { cwd, env: { LEDGER_AGENT: 'claude', ...extraEnv } });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  s = scratch('ledger-worktree-');
  s.dir = realpathSync(s.dir);
  main = join(s.dir, 'app');
  wt = join(s.dir, 'claude-wt');
  mkdirSync(join(main, 'src'), { recursive: true });
  git(main, 'init', '-q', '-b', 'master');
  writeFileSync(join(main, 'src/tz.js'), 'export const toLocal = (t) => t;\n');
  // The secret key is ignored; the views are left untracked on purpose: they must not make the
  // work tree count as dirty.
  writeFileSync(join(main, '.gitignore'), 'keys/\n');
  git(main, 'add', '-A');
  git(main, 'commit', '-q', '-m', 'initial');
  expect((await runLedger(['init', '--name', 'app'], { cwd: main })).code).toBe(0);
  // init added its ignore lines (the key, .ledger/) to .gitignore; the user commits them.
  git(main, 'commit', '-q', '-am', 'ignore the ledger and its key');
  git(main, 'worktree', 'add', '-q', '-b', 'claude-branch', wt);
  await ledger(main, ['start', 'fix-tz', '--summary', 'fix toLocal() for negative offsets']);
});
afterAll(() => s.cleanup());

describe('when claude checkpoints with --tests-cmd from a git worktree on claude-branch', () => {
  it('runs the command in the worktree and records its directory, commit, branch and a clean tree', async () => {
    await ledger(wt, ['checkpoint', 'fix-tz', ...FLAGS, '--tests-cmd', 'pwd; git rev-parse --abbrev-ref HEAD']);
    const t = lastTests();
    expect(t.excerpt.split('\n')).toEqual([wt, 'claude-branch']);
    expect(t.workdir).toEqual({ path: wt, git: { commit: git(wt, 'rev-parse', 'HEAD'), branch: 'claude-branch', clean: true } });
  });

  it('asks git about the worktree itself, whatever GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE the caller had', async () => {
    await ledger(wt, ['checkpoint', 'fix-tz', ...FLAGS, '--tests-cmd', 'true'], { GIT_DIR: join(main, '.git'), GIT_WORK_TREE: main, GIT_INDEX_FILE: join(s.dir, 'no-index') });
    expect(lastTests().workdir?.git).toMatchObject({ branch: 'claude-branch', clean: true });
  });

  it('says the tree was dirty when a file outside the ledger and the views changed', async () => {
    writeFileSync(join(wt, 'scratch.txt'), 'notes\n');
    await ledger(wt, ['checkpoint', 'fix-tz', ...FLAGS, '--tests-cmd', 'true']);
    expect(lastTests().workdir?.git?.clean).toBe(false);
    rmSync(join(wt, 'scratch.txt'));
  });

  it('counts the main checkout clean though HANDOFF.md/yml are untracked there', async () => {
    expect(git(main, 'status', '--porcelain')).toMatch(/^\?\? HANDOFF\.md\n\?\? HANDOFF\.yml$/);
    await ledger(main, ['checkpoint', 'fix-tz', ...FLAGS, '--tests-cmd', 'true']);
    expect(lastTests().workdir).toEqual({ path: main, git: { commit: git(main, 'rev-parse', 'HEAD'), branch: 'master', clean: true } });
  });

  it('resume lists the commit made on claude-branch after the last test run, and its files, views aside', async () => {
    await ledger(wt, ['checkpoint', 'fix-tz', ...FLAGS, '--tests-cmd', 'true']);
    const base = git(wt, 'rev-parse', 'HEAD');
    writeFileSync(join(wt, 'src/tz.js'), 'export const toLocal = (t, off) => t + off;\n');
    writeFileSync(join(wt, 'HANDOFF.md'), 'a copy of the view, committed by mistake\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', 'fix toLocal() for -05:00');
    const oid = git(wt, 'rev-parse', '--short', 'HEAD');

    const r = await runLedger(['resume', 'fix-tz', '--json'], { cwd: main });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).changes_since).toEqual({
      as_of_seq: 6, commit: base, branch: 'claude-branch', tip: 'refs/heads/claude-branch', known: true,
      commits: { count: 1, list: [{ oid, subject: 'fix toLocal() for -05:00' }] },
      files: { count: 1, list: ['src/tz.js'] },
    });
    const text = await runLedger(['resume', 'fix-tz'], { cwd: main });
    const lines = text.stdout.split('\n');
    expect(lines).toContain(`since the commit of the last test run (seq 6, ${base.slice(0, 10)} on claude-branch): 1 commit, 1 file changed (the ledger's files and the views not counted)`);
    expect(lines).toContain(`  commit ${oid} fix toLocal() for -05:00`);
    expect(lines).toContain('  file src/tz.js');
    expect(lines.length).toBeLessThanOrEqual(81);
  });
});
