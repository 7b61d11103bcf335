// Finding the ledger as git finds its repository (SPEC 3, issue 14.1), in real git repositories:
// from a subdirectory, from a `git worktree add` worktree, in nested projects and in a folder
// that is not in git. keys/ and the views belong to the project root, never to the working
// directory, and no verb advises `ledger init` where a ledger exists above.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateLedger } from '../../src/project/locate.js';
import { runLedger, scratch, snapshot } from '../helpers/cli.js';
import { git, gitRepo, statusPaths } from '../helpers/git-repo.js';

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  // realpath: git names paths through symbolic links (a macOS /tmp), the ledger as given.
  s = scratch('ledger-locate-');
  s = { ...s, dir: realpathSync(s.dir) };
});
afterEach(() => s.cleanup());

const env = { LEDGER_AGENT: 'claude' };
const START = ['start', 'fix-tz', '--summary', 'fix toLocal()'];
const CP = ['checkpoint', 'fix-tz', '--done', 'found it', '--state', 'parser verified', '--next', 'fix toLocal'];

async function ok(args: string[], cwd: string, e: Record<string, string> = env) {
  const r = await runLedger(args, { cwd, env: e });
  expect(r.code, `${args.join(' ')} in ${cwd}: ${r.stderr}`).toBe(0);
  return r;
}
async function json(args: string[], cwd: string, e: Record<string, string> = env) {
  return JSON.parse((await ok([...args, '--json'], cwd, e)).stdout);
}

describe('when an agent works from a subdirectory of the project (issue 14.1)', () => {
  it('uses the ledger, key and views of the project root, and `init` there refuses naming the ledger', async () => {
    const repo = gitRepo(join(s.dir, 'repo'));
    await ok(['init', '--name', 'repo'], repo);
    const deep = join(repo, 'src', 'deep');
    mkdirSync(deep, { recursive: true });

    const started = await json(START, deep);
    expect(started.seq).toBe(1);
    await ok(CP, deep);
    // The views are written in the project root, not where the agent stood.
    expect(existsSync(join(repo, 'HANDOFF.md'))).toBe(true);
    expect(existsSync(join(deep, 'HANDOFF.md'))).toBe(false);
    expect(existsSync(join(deep, 'keys'))).toBe(false);
    const log = await ok(['log'], deep);
    expect(log.stdout).toMatch(/checkpoint/);
    expect((await ok(['audit'], join(repo, 'src'))).stdout).toMatch(/pass/i);

    const before = snapshot(join(repo, '.ledger'));
    const again = await runLedger(['init'], { cwd: deep, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`a ledger already exists at ${join(repo, '.ledger')}, in a folder above this one`);
    expect(again.stderr).toContain('--dir');
    expect(snapshot(join(repo, '.ledger'))).toEqual(before);
    expect(existsSync(join(deep, '.ledger'))).toBe(false);
  });

  it('takes --key and --trust given relative as typed, from the working directory', async () => {
    const repo = gitRepo(join(s.dir, 'repo'));
    await ok(['init'], repo);
    const sub = join(repo, 'src');
    await ok([...START, '--key', '../keys/harness.key'], sub);
    const wrong = await runLedger([...CP, '--key', 'keys/harness.key'], { cwd: sub, env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(join(sub, 'keys/harness.key'));
    expect((await runLedger(['audit', '--trust', 'keys/trust.json'], { cwd: sub, env })).stderr).toContain(join(sub, 'keys/trust.json'));
    await ok(['audit', '--trust', '../keys/trust.json'], sub);
    // A variable is a path typed by whoever set it: from the working directory too.
    await ok(['audit'], sub, { ...env, LEDGER_TRUST: '../keys/trust.json' });
  });

  it('never advises `ledger init` from below a project that has a ledger, whatever fails', async () => {
    const repo = gitRepo(join(s.dir, 'repo'));
    await ok(['init'], repo);
    const sub = join(repo, 'src');
    const runs = [
      await runLedger(['log', '--dir', 'nowhere'], { cwd: sub, env }),
      await runLedger(['head'], { cwd: sub, env: { ...env, LEDGER_DIR: '../nowhere' } }),
      await runLedger(['resume', 'no-such-item'], { cwd: sub, env }),
      await runLedger(['gate', 'no_such_op'], { cwd: sub, env }),
      await runLedger(['doctor', '--dir', '.ledger'], { cwd: sub, env }),
    ];
    for (const r of runs) {
      expect(r.code).not.toBe(0);
      expect(r.stderr + r.stdout).not.toMatch(/ledger init/);
    }
    expect(runs[0].stderr).toContain(`this folder's ledger is ${join(repo, '.ledger')}`);
  });

  it('skips an empty `.ledger/` on the way up, but stops at a damaged one and says to restore it', async () => {
    const repo = gitRepo(join(s.dir, 'repo'));
    await ok(['init'], repo);
    mkdirSync(join(repo, 'src', '.ledger'));
    await ok(START, join(repo, 'src'));
    expect(JSON.parse(readFileSync(join(repo, '.ledger', 'HEAD'), 'utf8')).seq).toBe(1);

    const damaged = join(repo, 'pkg');
    mkdirSync(join(damaged, '.ledger'), { recursive: true });
    await ok(['init', '--dir', '.ledger'], damaged);
    // records.jsonl without HEAD: a ledger someone took HEAD from, not a place to `init` over.
    rmSync(join(damaged, '.ledger', 'HEAD'));
    const r = await runLedger(['log'], { cwd: damaged, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no ledger at ${join(damaged, '.ledger')} (no HEAD)`);
    expect(r.stderr).toMatch(/restore HEAD/);
    expect((await runLedger(['init'], { cwd: damaged, env })).code).toBe(2);
  });
});

describe('when a second session works in a `git worktree add` worktree (one ledger per clone)', () => {
  it('uses the ledger beside the main worktree, from anywhere in the worktree, and `init` there refuses', async () => {
    const main = gitRepo(join(s.dir, 'main'));
    await ok(['init', '--name', 'clone'], main);
    git(main, 'add', '-A');
    git(main, 'commit', '-q', '-m', 'handoff-ledger: trust file and ignore rules');
    const wt = join(s.dir, 'claude-wt');
    git(main, 'worktree', 'add', '-q', '-b', 'claude-branch', wt);
    const inWt = join(wt, 'src');

    expect(locateLedger({ cwd: inWt })).toMatchObject({ dir: join(main, '.ledger'), root: main, source: 'main-worktree', linkedWorktree: { top: wt, main } });
    await ok(START, inWt);
    await ok(CP, wt);
    expect((await json(['head'], main)).seq).toBe(2);
    // The views of the clone's one ledger are the main worktree's.
    expect(existsSync(join(main, 'HANDOFF.md'))).toBe(true);
    expect(existsSync(join(wt, 'HANDOFF.md'))).toBe(false);
    // The worktree sees the ignore rules committed on main: the key is out of git there too.
    expect(statusPaths(wt)).toEqual([]);

    const before = snapshot(join(main, '.ledger'));
    const r = await runLedger(['init'], { cwd: inWt, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`a ledger already exists at ${join(main, '.ledger')}, beside the main worktree of this git worktree`);
    expect(snapshot(join(main, '.ledger'))).toEqual(before);
    expect(existsSync(join(wt, '.ledger'))).toBe(false);
  });

  it('refuses `init` in a worktree whose main worktree has no ledger, pointing at the main worktree', async () => {
    const main = gitRepo(join(s.dir, 'main'));
    const wt = join(s.dir, 'wt');
    git(main, 'worktree', 'add', '-q', '-b', 'side', wt);
    const r = await runLedger(['init'], { cwd: wt, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`is a linked git worktree of ${main}`);
    expect(r.stderr).toContain(`run \`ledger init\` in ${main}`);
    expect(existsSync(join(wt, '.ledger'))).toBe(false);
    expect(existsSync(join(wt, 'keys'))).toBe(false);
    // --dir keeps a separate ledger in the worktree, on purpose.
    await ok(['init', '--dir', '.ledger'], wt);
    expect(locateLedger({ cwd: join(wt, 'src') })).toMatchObject({ dir: join(wt, '.ledger'), source: 'nearest' });
  });

  it('prefers a ledger inside the worktree itself to the main worktree\'s', async () => {
    const main = gitRepo(join(s.dir, 'main'));
    await ok(['init'], main);
    const wt = join(s.dir, 'wt');
    git(main, 'worktree', 'add', '-q', '-b', 'side', wt);
    await ok(['init', '--dir', '.ledger'], wt);
    expect(locateLedger({ cwd: join(wt, 'src') })).toMatchObject({ dir: join(wt, '.ledger'), root: wt, source: 'nearest' });
  });
});

describe('when projects are nested', () => {
  it('each folder uses its nearest ledger; the inner one is made on purpose with --dir', async () => {
    const outer = gitRepo(join(s.dir, 'outer'), { 'README.md': 'outer\n', 'docs/a.md': 'a\n', 'inner/README.md': 'inner\n', 'inner/src/x.ts': 'x\n' });
    await ok(['init', '--name', 'outer'], outer);
    const inner = join(outer, 'inner');
    expect((await runLedger(['init'], { cwd: inner, env })).code).toBe(2);
    await ok(['init', '--dir', '.ledger', '--name', 'inner'], inner);
    // The inner project gets its own key and trust file (keys/ beside its ledger).
    expect(existsSync(join(inner, 'keys', 'harness.key'))).toBe(true);

    await ok(START, join(inner, 'src'));
    await ok(START, join(outer, 'docs'));
    const innerGenesis = (await json(['show', '0'], join(inner, 'src'))).record;
    const outerGenesis = (await json(['show', '0'], join(outer, 'docs'))).record;
    expect(innerGenesis.name).toBe('inner');
    expect(outerGenesis.name).toBe('outer');
    expect((await json(['head'], inner)).seq).toBe(1);
    expect((await json(['head'], outer)).seq).toBe(1);
    // Both ledgers and both keys stay out of git.
    git(outer, 'add', '-A');
    expect(git(outer, 'ls-files').split('\n').filter((f) => /\.key$|\.ledger\//.test(f))).toEqual([]);
  });
});

describe('when the project is not in git', () => {
  it('finds the ledger from a subdirectory and writes no .gitignore', async () => {
    const proj = join(s.dir, 'plain');
    mkdirSync(join(proj, 'a', 'b'), { recursive: true });
    const init = await json(['init'], proj);
    expect(init.gitignore).toBeNull();
    expect(existsSync(join(proj, '.gitignore'))).toBe(false);
    await ok(START, join(proj, 'a', 'b'));
    expect(existsSync(join(proj, 'HANDOFF.yml'))).toBe(true);
    expect(locateLedger({ cwd: join(proj, 'a', 'b') })).toEqual({ dir: join(proj, '.ledger'), root: proj, source: 'nearest', linkedWorktree: null });
    // Nothing above: `.ledger` here, where `init` would make it.
    expect(locateLedger({ cwd: join(s.dir, 'elsewhere') })).toMatchObject({ dir: join(s.dir, 'elsewhere', '.ledger'), source: 'none' });
  });

  it('takes --dir over LEDGER_DIR over the search, each relative to the working directory', async () => {
    const proj = join(s.dir, 'p');
    mkdirSync(proj);
    expect(locateLedger({ cwd: proj, dir: 'x', envDir: 'y' })).toMatchObject({ dir: join(proj, 'x'), root: proj, source: 'flag' });
    expect(locateLedger({ cwd: proj, envDir: '../y/.l' })).toMatchObject({ dir: join(s.dir, 'y', '.l'), root: join(s.dir, 'y'), source: 'env' });
  });
});

describe('when the `.ledger` on the way up is a symbolic link', () => {
  it('refuses (exit 3) rather than follow it or search past it, and changes nothing', async () => {
    const real = join(s.dir, 'real');
    mkdirSync(real);
    await ok(['init'], real);
    const proj = join(s.dir, 'proj');
    mkdirSync(join(proj, 'src'), { recursive: true });
    symlinkSync(join(real, '.ledger'), join(proj, '.ledger'));
    const before = snapshot(join(real, '.ledger'));
    for (const args of [['log'], START, ['init']]) {
      const r = await runLedger(args, { cwd: join(proj, 'src'), env });
      expect(r.code, args[0]).toBe(3);
      expect(r.stderr).toContain(`${join(proj, '.ledger')} is a symbolic link`);
    }
    expect(snapshot(join(real, '.ledger'))).toEqual(before);
    // Named on purpose, it is used.
    await ok(['head', '--dir', join(proj, '.ledger')], proj);
  });
});
