// Real git repositories for scenario tests: `git init`, real commits, `git worktree add`. git runs
// with a clean environment (no GIT_* of the machine's, no global or system config) and a fixed
// identity, so a test sees the same git on every machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { copyTree } from './cli.js';

const ENV = {
  PATH: process.env.PATH ?? '',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com',
  LC_ALL: 'C',
  // Speed: no `git maintenance run --auto` after each commit (a process per commit, which on
  // repositories of a few objects never has anything to do).
  GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'maintenance.auto', GIT_CONFIG_VALUE_0: 'false',
};

/** Runs git in `cwd`; throws with its stderr unless it exits 0. Returns stdout. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: ENV, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** A new repository at `dir` on branch main, with one commit of `files` (path -> text). */
export function gitRepo(dir: string, files: Record<string, string> = { 'README.md': '# project\n', 'src/app.ts': 'export const x = 1;\n' }): string {
  const key = JSON.stringify(files);
  let made = MADE.get(key);
  if (!made) {
    made = join(mkdtempSync(join(tmpdir(), 'git-repo-template-')), 'repo');
    mkdirSync(made);
    git(made, 'init', '-q', '-b', 'main');
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(made, path)), { recursive: true });
      writeFileSync(join(made, path), text);
    }
    git(made, 'add', '-A');
    git(made, 'commit', '-q', '-m', 'initial');
    MADE.set(key, made);
  }
  mkdirSync(dir, { recursive: true });
  copyTree(`${made}/.`, dir);
  return dir;
}

/**
 * Speed: each repository gitRepo() made in this worker process (by its files), as `git init`,
 * `git add` and `git commit` left it; the next call with the same files copies it (`cp -a`) into
 * the new folder: three git processes become one `cp`. A fresh `git init` names no absolute path,
 * so the copy is the same repository wherever it lands (git refreshes the index's stat data the
 * first time it looks); only its commit is the same commit as the other copies', which no test
 * tells apart from a new one. Every test still gets a repository no other test has touched.
 * Removed when the worker exits.
 */
const MADE = new Map<string, string>();
process.once('exit', () => {
  for (const made of MADE.values()) rmSync(dirname(made), { recursive: true, force: true });
});

/** `git status --porcelain` paths (untracked files listed one by one). */
export function statusPaths(dir: string): string[] {
  return git(dir, 'status', '--porcelain=v1', '--untracked-files=all').split('\n').filter(Boolean).map((l) => l.slice(3));
}
