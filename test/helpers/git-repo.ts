// Real git repositories for scenario tests: `git init`, real commits, `git worktree add`. git runs
// with a clean environment (no GIT_* of the machine's, no global or system config) and a fixed
// identity, so a test sees the same git on every machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ENV = {
  PATH: process.env.PATH ?? '',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com',
  LC_ALL: 'C',
};

/** Runs git in `cwd`; throws with its stderr unless it exits 0. Returns stdout. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: ENV, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** A new repository at `dir` on branch main, with one commit of `files` (path -> text). */
export function gitRepo(dir: string, files: Record<string, string> = { 'README.md': '# project\n', 'src/app.ts': 'export const x = 1;\n' }): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** `git status --porcelain` paths (untracked files listed one by one). */
export function statusPaths(dir: string): string[] {
  return git(dir, 'status', '--porcelain=v1', '--untracked-files=all').split('\n').filter(Boolean).map((l) => l.slice(3));
}
