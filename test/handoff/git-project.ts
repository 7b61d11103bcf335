// A scratch project that is a real git repository (git init, real commits) with a ledger in it,
// for the issue-14 scenarios (takeover, release, note, status), and the snapshot that proves a
// refused command changed nothing: records.jsonl, HEAD and both views, byte for byte.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runLedger, scratch, snapshot, workerTemplate, type Run } from '../helpers/cli.js';
import type { Project } from './helpers.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1',
  // Speed: no `git maintenance run --auto` after each commit (helpers/git-repo.ts).
  GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'maintenance.auto', GIT_CONFIG_VALUE_0: 'false',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
}

/** A git repository with two commits (src/tz.ts and its failing test), then `ledger init`. */
export async function gitProject(): Promise<Project & { commit: (file: string, text: string, subject: string) => void }> {
  const { dir, cleanup } = scratch('ledger-own-');
  const commit = (file: string, text: string, subject: string) => {
    writeFileSync(join(dir, file), text);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', subject);
  };
  await fill(dir);
  return { dir, ledger: join(dir, '.ledger'), cleanup, run: (...args: string[]) => runLedger(args, { cwd: dir }), commit };
}

/**
 * Speed: the project as gitProject() makes it, made once per worker and copied into each new
 * scratch folder (helpers/cli.ts `workerTemplate`): five git processes and an init become one
 * `cp`. Nothing in the repository or the ledger names the folder it is in, and a copy starts with
 * no writer marks, as a ledger new to this user does.
 */
const fill = workerTemplate('ledger-own-template-', async (dir, state) => {
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, '.gitignore'), '.ledger/\nkeys/*.key\n');
  for (const [file, text, subject] of [
    ['tz.js', 'export const toLocal = (t) => t;\n', 'tz: toLocal, naive'],
    ['tz.test.sh', 'echo "14 pass"; echo "2 fail: toLocal(-05:00)"; exit 1\n', 'tz: the failing test'],
  ]) {
    writeFileSync(join(dir, file), text);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', subject);
  }
  const init = await runLedger(['init', '--name', 'tz'], { cwd: dir, env: { LEDGER_STATE_DIR: state } });
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
});

/** records.jsonl, HEAD, HANDOFF.md and HANDOFF.yml as they are (null when absent). */
export function snapshotAll(p: Project): Record<string, string | null> {
  const view = (name: string) => (existsSync(join(p.dir, name)) ? readFileSync(join(p.dir, name), 'utf8') : null);
  return { ...snapshot(p.ledger), md: view('HANDOFF.md'), yml: view('HANDOFF.yml') };
}

/** A refused command: its exit code, its --json error code, and nothing changed (ledger and views). */
export async function refusedUnchanged(p: Project, args: string[], exit: number, code: string): Promise<Run> {
  const before = snapshotAll(p);
  const r = await p.run(...args, '--json');
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(exit);
  expect(JSON.parse(r.stdout).error.code, args.join(' ')).toBe(code);
  expect(r.stderr.trim().split('\n'), 'one line').toHaveLength(1);
  expect(snapshotAll(p), args.join(' ')).toEqual(before);
  return r;
}
