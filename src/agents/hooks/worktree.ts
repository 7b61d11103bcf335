// When did the work tree last change (the stop hook's "changed since your last checkpoint")?
// Read-only, and bounded so a hook stays fast:
//   1. the top of the work tree: the nearest folder with a `.git` (a folder, or a worktree's file);
//   2. the time HEAD last moved (a commit, checkout, reset or merge), from the modification time of
//      its reflog (`logs/HEAD` in the git directory), read without running git;
//   3. every path `git status` reports (modified, staged, untracked, deleted): the latest of HEAD's
//      move and each reported file's modification time (a deleted one's folder);
//      the ledger's own files and the two views are skipped: a checkpoint rewrites HANDOFF.md and
//      HANDOFF.yml just after its record, and that is not the agent's work.
// null when it cannot be told (not a git work tree, git missing or too slow): the caller then
// decides on the other rule alone. Git runs as the caller (project/git.ts callerGit: the work
// tree's filters and config are the caller's code), with the caller's GIT_* variables dropped
// and fsmonitor off, as the evidence reader runs it (src/causal/evidence/git.ts), with a short
// timeout; where it may not run as the caller, it is not run (unknown).
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { callerGitOrNull } from '../../project/git.js';

/** Policy: each git run may take this long; a hook that waits longer is worse than one that skips. */
const GIT_TIMEOUT_MS = 5_000;
/** Policy: at most this many reported paths are looked at; past them, the tree counts as changed now. */
const MAX_PATHS = 5_000;

function git(cwd: string, args: string[]): Promise<string | null> {
  const as = callerGitOrNull();
  if ('refused' in as) return Promise.resolve(null);
  return new Promise((done) => {
    execFile('git', ['-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', ...args], {
      cwd,
      encoding: 'utf8',
      ...as,
      timeout: GIT_TIMEOUT_MS,
      maxBuffer: 64 << 20,
    }, (err, stdout) => done(err ? null : stdout));
  });
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** The nearest folder at or above `cwd` that holds a `.git` entry (as git finds its work tree). */
function workTreeTop(cwd: string): string | null {
  for (let d = real(cwd); ; d = dirname(d)) {
    try {
      lstatSync(join(d, '.git'));
      return d;
    } catch {
      /* not here */
    }
    if (dirname(d) === d) return null;
  }
}

/** The git directory of the work tree at `top`: `.git` itself, or where a worktree's `.git` file points. */
function gitDir(top: string): string | null {
  const dotGit = join(top, '.git');
  try {
    if (lstatSync(dotGit).isDirectory()) return dotGit;
    const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
    return m ? resolve(top, m[1].trim()) : null;
  } catch {
    return null;
  }
}

function mtime(path: string): number | null {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return null;
  }
}

const inside = (p: string, own: string) => p === own || p.startsWith(own + sep);

/** The latest change of the work tree in ms since the epoch, or null when it cannot be told. */
export async function latestWorkTreeChange(cwd: string, ledger: { dir: string; views: string }): Promise<number | null> {
  const top = workTreeTop(cwd);
  if (top === null) return null;
  // Policy: HEAD's reflog moves with every commit, checkout, reset and merge: each is a change of
  // the work tree. No reflog (none yet, or core.logAllRefUpdates off): only the status counts.
  const dir = gitDir(top);
  let latest = (dir === null ? null : mtime(join(dir, 'logs', 'HEAD'))) ?? -Infinity;
  const status = await git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  if (status === null) return null;
  const views = real(ledger.views);
  const own = [real(ledger.dir), join(views, 'HANDOFF.md'), join(views, 'HANDOFF.yml')];
  // -z: "XY PATH\0" (paths from the top), and a rename or copy carries its old path as one more field.
  const fields = status.split('\0');
  let seen = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    if (f[0] === 'R' || f[0] === 'C') i++;
    if (++seen > MAX_PATHS) return Date.now();
    const path = join(top, f.slice(3));
    if (own.some((o) => inside(path, o))) continue;
    const t = mtime(path) ?? mtime(dirname(path));
    if (t !== null && t > latest) latest = t;
  }
  return latest;
}

/** The work tree's content digest, as a start or checkpoint records it (handoff/code-place.ts): what the stop rule compares. */
export { workTreeContent } from '../../handoff/code-place.js';
