// The bad-input table of finding the ledger and of `init` in a git repository (issue 14.1, 14.2):
// each row exits with its documented code, says why in one line on stderr, and changes nothing
// anywhere in the scratch tree (ledgers, keys, .gitignore files: every byte, every link).
import { chownSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLedger, scratch, spawnLedgerSync, type Run } from '../helpers/cli.js';
import { git, gitRepo } from '../helpers/git-repo.js';

/** Every file, link and folder under `dir` (git's own `.git` folders aside), with its bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      const key = relative(dir, p);
      if (st.isSymbolicLink()) out[key] = `link ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[key] = 'dir';
        if (name !== '.git') walk(p);
      } else out[key] = `file ${(st.mode & 0o777).toString(8)} ${readFileSync(p).toString('base64')}`;
    }
  };
  walk(dir);
  return out;
}

interface Setup { cwd: string; args: string[]; env?: Record<string, string>; spawn?: boolean }
interface Row { name: string; code: number; match: RegExp; setup: (base: string) => Promise<Setup> | Setup; onlyAsRoot?: boolean }

const env = { LEDGER_AGENT: 'claude' };
const init = async (cwd: string, ...extra: string[]) => {
  const r = await runLedger(['init', ...extra], { cwd, env });
  if (r.code !== 0) throw new Error(r.stderr);
};
/** A repository with a ledger at its top. */
const project = async (base: string) => {
  const repo = gitRepo(join(base, 'repo'));
  await init(repo);
  return repo;
};
/** A repository and a `git worktree add` worktree of it (no ledger anywhere). */
const worktree = (base: string) => {
  const main = gitRepo(join(base, 'main'));
  const wt = join(base, 'wt');
  git(main, 'worktree', 'add', '-q', '-b', 'side', wt);
  return { main, wt };
};
/** A folder whose `.ledger` is a symbolic link to a real ledger elsewhere. */
const linked = async (base: string) => {
  const real = join(base, 'real');
  mkdirSync(real);
  await init(real);
  const proj = join(base, 'proj');
  mkdirSync(join(proj, 'src'), { recursive: true });
  symlinkSync(join(real, '.ledger'), join(proj, '.ledger'));
  return proj;
};
/** A folder whose `.git` is a worktree pointer to a repository that is not there. */
const brokenWorktree = (base: string) => {
  const wt = join(base, 'broken');
  mkdirSync(join(wt, 'src'), { recursive: true });
  writeFileSync(join(wt, '.git'), `gitdir: ${join(base, 'gone', '.git', 'worktrees', 'broken')}\n`);
  return wt;
};

const rows: Row[] = [
  { name: 'init in a subdirectory of a project that has a ledger', code: 2, match: /a ledger already exists at .*\/repo\/\.ledger, in a folder above this one/, setup: async (b) => ({ cwd: join(await project(b), 'src'), args: ['init'] }) },
  { name: 'init in a folder whose damaged ledger (records, no HEAD) is there', code: 2, match: /a ledger already exists at/, setup: async (b) => {
    const repo = await project(b);
    const { rmSync } = await import('node:fs');
    rmSync(join(repo, '.ledger', 'HEAD'));
    return { cwd: repo, args: ['init'] };
  } },
  { name: 'init in a linked worktree whose main worktree has a ledger', code: 2, match: /beside the main worktree of this git worktree/, setup: async (b) => {
    const { main, wt } = worktree(b);
    await init(main);
    return { cwd: wt, args: ['init'] };
  } },
  { name: 'init in a linked worktree whose main worktree has none', code: 2, match: /is a linked git worktree of .*\/main/, setup: (b) => ({ cwd: join(worktree(b).wt, 'src'), args: ['init'] }) },
  { name: 'init where `.ledger` here is a symbolic link', code: 3, match: /\.ledger is a symbolic link/, setup: async (b) => ({ cwd: await linked(b), args: ['init'] }) },
  { name: 'a reading verb below a `.ledger` that is a symbolic link', code: 3, match: /\.ledger is a symbolic link/, setup: async (b) => ({ cwd: join(await linked(b), 'src'), args: ['log'] }) },
  { name: 'a writing verb below a `.ledger` that is a symbolic link', code: 3, match: /\.ledger is a symbolic link/, setup: async (b) => ({ cwd: join(await linked(b), 'src'), args: ['start', 'x', '--summary', 's'] }) },
  { name: '--dir naming a folder with no ledger, inside a project that has one', code: 2, match: /no ledger at .*, which --dir names; this folder's ledger is/, setup: async (b) => ({ cwd: join(await project(b), 'src'), args: ['log', '--dir', 'nowhere'] }) },
  { name: 'LEDGER_DIR naming a folder with no ledger, inside a project that has one', code: 2, match: /which LEDGER_DIR names/, setup: async (b) => ({ cwd: join(await project(b), 'src'), args: ['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success'], env: { ...env, LEDGER_DIR: 'elsewhere' } }) },
  { name: 'a verb in a worktree whose repository is gone (git cannot name its main worktree)', code: 3, match: /is a file \(a linked git worktree or a submodule\), but git rev-parse --git-common-dir failed/, setup: (b) => ({ cwd: join(brokenWorktree(b), 'src'), args: ['log'] }) },
  { name: 'init in a worktree whose repository is gone', code: 3, match: /cannot be found/, setup: (b) => ({ cwd: brokenWorktree(b), args: ['init'] }) },
  { name: 'init in a repository whose .gitignore is a symbolic link', code: 3, match: /\.gitignore is a symbolic link; it is not written through/, setup: (b) => {
    const repo = gitRepo(join(b, 'repo'));
    writeFileSync(join(b, 'shared-ignore'), 'node_modules/\n');
    symlinkSync(join(b, 'shared-ignore'), join(repo, '.gitignore'));
    return { cwd: repo, args: ['init'] };
  } },
  { name: 'init in a repository whose rules un-ignore keys (keys/.gitignore has !*.key)', code: 3, match: /git still does not ignore the secret key .* a later rule, or a \.gitignore further down/, setup: (b) => {
    const repo = gitRepo(join(b, 'repo'), { 'README.md': 'x\n', '.gitignore': 'dist/\n', 'keys/.gitignore': '!*.key\n' });
    return { cwd: repo, args: ['init'] };
  } },
  { name: 'init in a repository with a key folder whose name has a line break', code: 2, match: /cannot name .* in \.gitignore: it has a line break/, setup: (b) => ({ cwd: gitRepo(join(b, 'repo')), args: ['init', '--key', 'se\ncret/a.key'] }) },
  { name: 'init in a repository with a ledger directory whose name has a line break', code: 2, match: /line break/, setup: (b) => ({ cwd: gitRepo(join(b, 'repo')), args: ['init', '--dir', 'led\nger'] }) },
  { name: 'init in a repository when git cannot run', code: 3, match: /cannot ask git whether it would commit the secret key/, setup: (b) => {
    const repo = gitRepo(join(b, 'repo'));
    mkdirSync(join(b, 'no-git-here'));
    return { cwd: repo, args: ['init'], env: { PATH: join(b, 'no-git-here') }, spawn: true };
  } },
  { name: 'a verb below a `.ledger` someone else planted in a shared folder', code: 3, match: /is owned by uid 4242, neither you .* anyone could have put it there/, onlyAsRoot: true, setup: async (b) => {
    // /tmp-like: the folder belongs to one user, the planted ledger to another.
    const shared = join(b, 'shared');
    mkdirSync(join(shared, 'mine'), { recursive: true });
    await init(shared);
    chownSync(shared, 4343, 4343);
    chownSync(join(shared, '.ledger'), 4242, 4242);
    return { cwd: join(shared, 'mine'), args: ['log'] };
  } },
];

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('bad input to finding the ledger and to init in git: the exit code, one line, nothing changed', () => {
  for (const row of rows) {
    it.skipIf(row.onlyAsRoot && !asRoot)(`${row.name} exits ${row.code}`, async () => {
      const s = scratch('ledger-locate-bad-');
      try {
        const base = realpathSync(s.dir);
        const { cwd, args, env: e = env, spawn } = await row.setup(base);
        const before = tree(base);
        const r: Run = spawn ? spawnLedgerSync(args, { cwd, env: e }) : await runLedger(args, { cwd, env: e });
        expect(r.code, r.stderr).toBe(row.code);
        expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
        expect(r.stderr).toMatch(row.match);
        expect(tree(base)).toEqual(before);
      } finally {
        s.cleanup();
      }
    });
  }
});
