// Asking the real git about the folder a ledger lives in: where a worktree's main worktree is,
// whether git ignores or tracks a path. Read-only (nothing here changes a repository).
//
// Policy: git runs with every GIT_* variable removed from its environment (GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS, ... would point it at another repository
// or change its answers), no prompt, no optional locks, and a bound on time and output; the
// machine's PATH and HOME stay, so the user's own git (and ~/.gitconfig's excludes and
// safe.directory) answers. A git that cannot run, or says something we cannot read, is an
// answer of "unknown", and every caller treats unknown as the unsafe case.
//
// The work tree is the caller's (issue 23): its config, hooks, attributes and filters are the
// caller's code. So every git process in it runs as the caller (callerGit: fs/boundary.ts), with
// the caller's allow-listed environment; a process acting for another user that cannot become
// them (a key owner that is not root) runs no git there at all: "unknown". This file, the
// resume and workdir facts (handoff/git.ts, changes-since.ts), `git:` evidence
// (causal/evidence/git.ts) and the stop hook (agents/hooks/worktree.ts) all take their spawn
// options from callerGit.
import { lstatSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { asCaller, callerEnv, currentBoundary, type Boundary } from '../fs/boundary.js';

export interface GitRun {
  /** git's exit code; null when it could not run (not installed, timed out, killed). */
  code: number | null;
  stdout: string;
  /** The first line of stderr, or why git could not run. */
  error: string;
}

const TIMEOUT_MS = 10_000;

/**
 * The one environment every git run of ours gets (ledger discovery, `git:` evidence, resume, the
 * tests' workdir facts, hooks): `base` without a single GIT_* variable (in any case), no prompt,
 * no optional locks (a `git status` never writes the index), no replace objects, no lazy fetch,
 * no pager, and C messages.
 */
export function scrubbedGitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (!k.toUpperCase().startsWith('GIT_') && v !== undefined) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_NO_LAZY_FETCH: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    LC_ALL: 'C',
  };
}

/** How git runs in a caller's work tree: its uid and gid (absent: this process's own) and environment. */
export interface CallerGit { uid?: number; gid?: number; env: NodeJS.ProcessEnv }

/**
 * The spawn options of a git process in a caller's work tree (see the header): as the caller,
 * with callerEnv scrubbed of GIT_*. Throws OP_PERMISSION (fs/boundary.ts asCaller) when this
 * process acts for another user it cannot become; `b` defaults to the command's boundary.
 */
export function callerGit(b: Boundary = currentBoundary()): CallerGit {
  const as = asCaller(b, 'git in the caller\'s work tree');
  return { ...(as ?? {}), env: scrubbedGitEnv(callerEnv(b, process.env)) };
}

/** callerGit, or null (with the reason) where git may not run. */
export function callerGitOrNull(b?: Boundary): CallerGit | { refused: string } {
  try {
    return callerGit(b);
  } catch (e) {
    return { refused: (e as Error).message };
  }
}

export function runGit(cwd: string, args: readonly string[], input?: string): GitRun {
  const as = callerGitOrNull();
  if ('refused' in as) return { code: null, stdout: '', error: as.refused };
  // Loaded here, not imported: every verb finds its ledger through this file, and most never run
  // git; node:child_process costs a couple of milliseconds of start-up (`ledger append` must cost
  // little more than starting Node).
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const r = spawnSync('git', ['-c', 'core.fsmonitor=false', ...args], {
    cwd,
    ...as,
    encoding: 'utf8',
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    timeout: TIMEOUT_MS,
    maxBuffer: 16 << 20,
  });
  if (r.error || r.status === null) return { code: null, stdout: '', error: r.error ? r.error.message : `git was stopped by ${r.signal}` };
  return { code: r.status, stdout: r.stdout, error: (r.stderr.split('\n').find((l) => l.trim() !== '') ?? '').trim() };
}

/**
 * What a folder's `.git` is, found on disk the way git starts its own search: the nearest
 * folder at or above `start` that has a `.git` entry. `linked` is true when that entry is a
 * file (a `git worktree add` worktree, or a submodule): only then is git asked anything.
 */
export function gitEntryAbove(start: string): { top: string; linked: boolean } | null {
  for (let d = resolve(start); ; ) {
    const kind = gitEntryAt(d);
    if (kind) return { top: d, linked: kind === 'file' };
    const up = dirname(d);
    if (up === d) return null;
    d = up;
  }
}

/** Whether `folder/.git` is a directory, a file (a worktree's or submodule's pointer), or absent. */
export function gitEntryAt(folder: string): 'dir' | 'file' | null {
  try {
    const st = lstatSync(join(folder, '.git'));
    return st.isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/**
 * The main worktree of the worktree at `top` (`git rev-parse --git-common-dir`): the folder
 * that holds the common `.git` directory. null when there is none beside it (a bare repository,
 * or a submodule, whose common directory lives in the superproject's `.git/modules/`). Throws
 * the reason when git cannot say.
 */
export function mainWorktreeOf(top: string): string | null {
  const r = runGit(top, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  const out = r.stdout.replace(/\n$/, '');
  if (r.code !== 0 || out === '' || out.includes('\n')) {
    throw new Error(r.code === null ? `git could not run (${r.error})` : `git rev-parse --git-common-dir failed${r.error ? `: ${r.error}` : ''}`);
  }
  const common = resolve(top, out);
  return basename(common) === '.git' ? dirname(common) : null;
}

/** The top of the work tree that holds `path` (an existing folder), or null outside one. */
export function workTreeTop(folder: string): { top: string } | { unknown: string } | null {
  if (!gitEntryAbove(folder)) return null;
  const r = runGit(folder, ['rev-parse', '--show-toplevel']);
  if (r.code === 0 && r.stdout.trim() !== '') return { top: r.stdout.replace(/\n$/, '') };
  // Inside `.git` itself, or a `.git` git does not accept as a repository: not a work tree.
  if (r.code === 128 && /not a git repository|must be run in a work tree|outside repository/i.test(r.error)) return null;
  return { unknown: r.code === null ? `git could not run (${r.error})` : `git rev-parse --show-toplevel failed: ${r.error || `exit ${r.code}`}` };
}
