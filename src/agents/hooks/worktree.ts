// Has the work tree changed since a moment (the stop hook's "changed since your last checkpoint")?
// Read-only, and bounded so a hook stays fast:
//   1. a commit made after the moment: changed;
//   2. else every path `git status` reports (modified, staged, untracked, deleted) whose file, or
//      for a deleted one its folder, was modified after the moment: changed;
//   3. the ledger's own files and the two views are skipped: a checkpoint rewrites HANDOFF.md and
//      HANDOFF.yml just after its record, and that is not the agent's work.
// null when it cannot be told (not a git work tree, git missing or too slow): the caller then
// decides on the other rule alone. Git runs with the caller's GIT_* variables dropped and
// fsmonitor off, as the evidence reader runs it (src/causal/evidence/git.ts), with a short timeout.
import { execFileSync } from 'node:child_process';
import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { scrubbedGitEnv } from '../../causal/evidence/git.js';

/** Policy: each git run may take this long; a hook that waits longer is worse than one that skips. */
const GIT_TIMEOUT_MS = 5_000;
/** Policy: at most this many reported paths are looked at; past them, the tree counts as changed. */
const MAX_PATHS = 5_000;

function git(cwd: string, args: string[]): string | null {
  try {
    return execFileSync('git', ['-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', ...args], {
      cwd,
      encoding: 'utf8',
      env: scrubbedGitEnv(),
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: GIT_TIMEOUT_MS,
      maxBuffer: 64 << 20,
    });
  } catch {
    return null;
  }
}

function mtimeAfter(path: string, sinceMs: number): boolean | null {
  try {
    return lstatSync(path).mtimeMs > sinceMs;
  } catch {
    return null;
  }
}

/** The ledger's own paths inside the work tree, which a checkpoint itself writes. */
function ownPaths(ledgerDir: string, viewsDir: string): string[] {
  // git names paths under the real top folder: compare real paths (a folder may be a link).
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return [real(ledgerDir), join(real(viewsDir), 'HANDOFF.md'), join(real(viewsDir), 'HANDOFF.yml')];
}

const inside = (p: string, own: string) => p === own || p.startsWith(own + sep);

export function workTreeChangedSince(cwd: string, sinceMs: number, ledger: { dir: string; views: string }): boolean | null {
  const top = git(cwd, ['rev-parse', '--show-toplevel'])?.trim();
  if (!top) return null;
  const last = git(top, ['log', '-1', '--format=%ct'])?.trim();
  if (last && /^\d+$/.test(last) && Number(last) * 1000 > sinceMs) return true;
  const status = git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  if (status === null) return null;
  const own = ownPaths(ledger.dir, ledger.views);
  // -z: "XY PATH\0", and a rename or copy carries its old path as one more NUL-ended field.
  const fields = status.split('\0');
  let seen = 0;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    if (f[0] === 'R' || f[0] === 'C') i++;
    if (++seen > MAX_PATHS) return true;
    const path = resolve(top, f.slice(3));
    if (own.some((o) => inside(path, o))) continue;
    if (relative(top, path).startsWith('..')) continue;
    const after = mtimeAfter(path, sinceMs) ?? mtimeAfter(dirname(path), sinceMs);
    if (after) return true;
  }
  return false;
}
