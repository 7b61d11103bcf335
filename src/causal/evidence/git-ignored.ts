// What git ignores under a directory, for dir/v3 (dir.ts): the untracked paths that the work
// tree's own `.gitignore` files match, as raw bytes relative to the directory.
//
// Policy: only the `.gitignore` files count, the same rule git: evidence applies to untracked
// files (git.ts): `.git/info/exclude` and `core.excludesFile` live outside the tree, differ by
// machine, and anyone who can write `.git` could hide a file with them. Git runs as git.ts runs
// it (as the caller, project/git.ts callerGit; scrubbed environment, no fsmonitor, no pager, a
// timeout); `ls-files` runs no filter.
import { CAREFUL } from './git.js';
import { callerGitOrNull } from '../../project/git.js';

const GIT_TIMEOUT_MS = 60_000;

export interface GitIgnored {
  /** The real path of the work tree's top. */
  top: string;
  /** Paths under the directory git ignores, relative to it; a directory ignored as a whole ends in "/". */
  ignored: Buffer[];
}

/** Outcome of asking git: a work tree and its ignored paths, not a work tree, or git failed (why). */
export type IgnoredAnswer = { kind: 'tree'; tree: GitIgnored } | { kind: 'none' } | { kind: 'failed'; why: string };

function run(args: string[], cwd: string): { status: number | null; stdout: Buffer; stderr: string; error?: string } {
  const as = callerGitOrNull();
  if ('refused' in as) return { status: null, stdout: Buffer.alloc(0), stderr: '', error: as.refused };
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const r = spawnSync('git', ['--no-pager', ...CAREFUL.flatMap((c) => ['-c', c]), ...args], {
    cwd,
    ...as,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: GIT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 256 << 20,
  });
  if (r.error) return { status: null, stdout: Buffer.alloc(0), stderr: '', error: (r.error as NodeJS.ErrnoException).code ?? r.error.message };
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString('utf8') };
}

/** Asks git about the directory `dir` (a real path). Never throws. */
export function gitIgnoredUnder(dir: string): IgnoredAnswer {
  const top = run(['rev-parse', '--show-toplevel'], dir);
  if (top.error) return top.error === 'ENOENT' ? { kind: 'none' } : { kind: 'failed', why: `git did not finish (${top.error})` };
  // Not a work tree (exit 128: no repository, a bare one, or inside .git): dir/v2 applies.
  if (top.status !== 0) return { kind: 'none' };
  const r = run(['ls-files', '-z', '--others', '--ignored', '--exclude-per-directory=.gitignore', '--directory', '--', '.'], dir);
  if (r.error) return { kind: 'failed', why: `git did not finish (${r.error})` };
  if (r.status !== 0) return { kind: 'failed', why: `git ls-files failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.status}`}` };
  const ignored: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < r.stdout.length; i++) {
    if (r.stdout[i] !== 0) continue;
    if (i > from) ignored.push(r.stdout.subarray(from, i));
    from = i + 1;
  }
  return { kind: 'tree', tree: { top: top.stdout.toString('utf8').trim(), ignored } };
}
