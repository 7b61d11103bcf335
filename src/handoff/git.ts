// What git says, read-only: for `resume` (the project's branch, changed files, last commits) and
// for a checkpoint's `tests.workdir` (where `--tests-cmd` ran: commit, branch, clean or not).
// null when the folder is not inside a git work tree or git is not installed.
//
// git runs with a scrubbed environment: no GIT_* variable is inherited (GIT_DIR, GIT_WORK_TREE
// or GIT_INDEX_FILE from a hook would point it at another repository than the folder's), with
// GIT_OPTIONAL_LOCKS=0 (`git status` then never writes the index) and core.fsmonitor off (a
// repository's config must not make reading it run a program).
// Policy: git is asked as the caller (project/git.ts callerGit, fs/boundary.ts): the repository
// is the caller's, and its config and attributes (filters) are the caller's code, as the test
// command is; they never run with the key's privileges. Where this process acts for a caller it
// cannot become, git is not run and the facts are unknown.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Boundary } from '../fs/boundary.js';
import type { TestsWorkdir } from '../record.js';
import { callerGitOrNull, type CallerGit } from '../project/git.js';

export interface GitFacts {
  branch: string;
  changed_files: number;
  last_commits: { oid: string; subject: string }[];
}

const GIT_TIMEOUT_MS = 10_000;

const gitArgs = (dir: string, args: string[]) => ['-c', 'core.fsmonitor=false', '-c', 'core.quotepath=off', '-C', dir, ...args];
const gitOptions = (as: CallerGit) => ({ encoding: 'utf8' as const, timeout: GIT_TIMEOUT_MS, maxBuffer: 64 << 20, ...as });

/** Runs `git -C dir ...args` as the caller (stdin: `input`, if any); its stdout, or null when it fails (not a repository, no git, a timeout, not run). */
export function git(dir: string, args: string[], b?: Boundary, input?: string): string | null {
  const as = callerGitOrNull(b);
  if ('refused' in as) return null;
  try {
    // Loaded on first use (as project/git.ts): most verbs that load this file never run git.
    const { execFileSync } = process.getBuiltinModule('node:child_process');
    return execFileSync('git', gitArgs(dir, args), { ...gitOptions(as), ...(input !== undefined ? { input } : {}), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/**
 * `git status` (NUL-ended entries) and `git log -3`, both from one `/bin/sh`: one process for
 * Node to spawn, not two (each spawn costs Node ~2 ms of its own time). Speed (issue 22:
 * `resume` <= 1.6x `node -e ''`): waited for with spawnSync, not started with execFile and
 * awaited beside the fold. execFile's pipes are net.Sockets, whose streams cost the process
 * 18.8M instructions (callgrind, `resume` on the field bench's 200,000 records: 208.6M before,
 * 189.8M after; `node -e ''` is 94M), more than git's own run, which overlapping saved.
 * The folder reaches sh as an argument, never as script text. null when the status fails (not a
 * work tree, no git, a timeout); the log is empty when it fails (no commit yet).
 */
function statusAndLog(dir: string): { status: string; log: string } | null {
  const as = callerGitOrNull();
  if ('refused' in as) return null;
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  // A status entry is never empty, so its -z output never holds two NULs in a row: the one
  // printed after it marks where the log begins.
  const script = 'git "$@" status --porcelain=v1 -z --branch --untracked-files=all || exit 1; printf "\\0"; git "$@" log -3 --format=%h%x09%s || :';
  const r = spawnSync('/bin/sh', ['-c', script, 'sh', ...gitArgs(dir, [])], { ...gitOptions(as), stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.error || r.status !== 0 || typeof r.stdout !== 'string') return null;
  const cut = r.stdout.indexOf('\0\0');
  return cut < 0 ? null : { status: r.stdout.slice(0, cut + 1), log: r.stdout.slice(cut + 2) };
}

/** Paths in NUL-ended `git status --porcelain=v1 -z` output (a rename's old path skipped). */
export function statusPaths(status: string): string[] {
  const out: string[] = [];
  const fields = status.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    out.push(f.slice(3));
    if (f[0] === 'R' || f[0] === 'C') i++;
  }
  return out;
}

/**
 * The branch `git status --branch` names in its first entry ("## main...origin/main [ahead 1]",
 * "## No commits yet on main", "## HEAD (no branch)"): null when detached.
 */
function branchOf(header: string): string | null {
  const h = header.slice(3);
  const unborn = /^(?:No commits yet on|Initial commit on) (\S+)$/.exec(h);
  if (unborn) return unborn[1];
  if (h.startsWith('HEAD (no branch)')) return null;
  // A branch name holds neither ".." nor a space (git check-ref-format).
  const end = [h.indexOf('...'), h.indexOf(' ')].filter((i) => i >= 0);
  return end.length ? h.slice(0, Math.min(...end)) : h;
}

// Speed (issue 14: `resume` <= 1.5x `node -e ''`): two git runs, not five, from one shell.
// `status --branch` fails outside a work tree (as `rev-parse --is-inside-work-tree` would say)
// and names the branch (as `symbolic-ref` would, before the first commit too); a detached HEAD
// is named by the newest commit's abbreviated oid, which `log` gives as `rev-parse --short`
// would.
export function gitFacts(root: string): GitFacts | null {
  const both = statusAndLog(root);
  if (both === null || !both.status.startsWith('## ')) return null;
  const { status, log: logged } = both;
  const cut = status.indexOf('\0');
  const header = cut < 0 ? status : status.slice(0, cut);
  const entries = cut < 0 ? '' : status.slice(cut + 1);
  const log = logged ?? '';
  const last_commits = log.split('\n').filter(Boolean).map((l) => {
    const tab = l.indexOf('\t');
    return { oid: l.slice(0, tab), subject: l.slice(tab + 1) };
  });
  const named = branchOf(header);
  const branch = named ?? (last_commits.length ? `(detached at ${last_commits[0].oid})` : '(unknown)');
  return { branch, changed_files: statusPaths(entries).length, last_commits };
}

/** Where a test command ran: the checkpoint's `tests.workdir` (its schema is in src/record.ts). */
export type Workdir = TestsWorkdir;

/** Paths (absolute) that never make a work tree dirty: the ledger directory and the two views. */
export interface LedgerFiles { ledgerDir: string; views: string[] }

/** Whether an absolute path is the ledger's own: inside the ledger directory, or one of the views. */
export function isLedgerFile(abs: string, own: LedgerFiles): boolean {
  const r = relative(own.ledgerDir, abs);
  const inside = r === '' || !(r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r));
  return inside || own.views.includes(abs);
}

/** What one `git status --porcelain=v2 -z --branch` says: the branch header and the changed paths. */
export interface TreeStatus {
  /** HEAD's commit, null when none yet (`(initial)`) or not a hash. */
  commit: string | null;
  /** The branch checked out, null when detached. */
  branch: string | null;
  /** The upstream's short name (`origin/main`), null when none is set. */
  upstream: string | null;
  /** Every path the status reports, relative to the top (porcelain paths always are). */
  paths: string[];
}

/** Fields before the path in each porcelain v2 entry kind (`1` ordinary, `2` renamed, `u` unmerged). */
const FIELDS: Record<string, number> = { '1': 8, '2': 9, u: 10 };

/**
 * One `git status` for the commit, the branch, the upstream and every changed path (issue 22: a
 * code place ran eight git processes, a test command's workdir four; each fact comes from the
 * header of the status they need anyway). Renames as a deletion and an addition; untracked
 * files one by one (`all`, as the content digest needs) or a new folder as one entry (`normal`).
 */
export function treeStatus(dir: string, untracked: 'all' | 'normal', as?: Boundary): TreeStatus | null {
  const out = git(dir, ['status', '--porcelain=v2', '-z', '--branch', `--untracked-files=${untracked}`, '--no-renames'], as);
  return out === null ? null : parseTreeStatus(out);
}

/** `git status --porcelain=v2 -z --branch --no-renames` output, parsed; null when it is not that format. */
function parseTreeStatus(out: string): TreeStatus | null {
  const st: TreeStatus = { commit: null, branch: null, upstream: null, paths: [] };
  const entries = out.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e.startsWith('# branch.oid ')) {
      const oid = e.slice('# branch.oid '.length);
      if (oid === '(initial)') continue; // no commit yet
      if (!/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(oid)) return null; // not the format asked for
      st.commit = oid;
    } else if (e.startsWith('# branch.head ')) {
      const head = e.slice('# branch.head '.length);
      st.branch = head === '(detached)' ? null : head;
    } else if (e.startsWith('# branch.upstream ')) {
      st.upstream = e.slice('# branch.upstream '.length);
    } else if (e.startsWith('? ') || e.startsWith('! ')) {
      st.paths.push(e.slice(2));
    } else if (FIELDS[e[0]] !== undefined && e[1] === ' ') {
      // The path is what follows the fixed fields; it may itself hold spaces.
      let at = 0;
      for (let n = 0; n < FIELDS[e[0]] && at >= 0; n++) at = e.indexOf(' ', at + 1);
      if (at < 0) return null; // not the format asked for: cannot be told
      st.paths.push(e.slice(at + 1));
      if (e[0] === '2') i++; // the original path follows as an entry of its own
    } else if (e !== '' && !e.startsWith('# ')) {
      return null;
    }
  }
  return st;
}

/** One look at the work tree at or above a folder (treeSnapshot): what a start, checkpoint or finish records, and what the stop hook compares. */
export interface TreeSnapshot {
  /** The work tree's top folder. */
  top: string;
  /** Its status (every untracked file listed); null when it could not be read. */
  status: TreeStatus | null;
  /** The remote-tracking refs holding HEAD's commit, when asked for and there is a commit. */
  holders: string[] | null;
  /** `ls-tree -r -z --full-tree` of HEAD's commit; '' with no commit yet; null when it could not be read. */
  listed: string | null;
}

// Speed (issue 22: the write verbs and the stop hook <= 1.8x `node -e ''`): what were four or five
// git processes, each spawned by Node in turn, are one /bin/sh spawned once. It asks git for the
// top and HEAD's commit in one rev-parse, then runs the status, the refs holding HEAD and HEAD's
// tree side by side, each writing to a pipe of its own (fd 1, 4 and 5; the top and the commit
// go to fd 3). The folder and the flags reach sh as arguments, never as script text. Its exit code
// says which step failed: 1 not a work tree, 2 the status, 3 the tree. The tree listed is that
// commit's; a status that names another commit (HEAD moved in between) is treated as unread.
const SNAPSHOT = [
  'refs=$1; shift',
  // rev-parse prints the top, then HEAD's commit; on an unborn HEAD it fails after printing the
  // top; outside a work tree it prints nothing.
  'nl="\n"',
  'r=$(git "$@" rev-parse --show-toplevel "HEAD^{commit}" 2>/dev/null) && c=${r#*"$nl"} || c=',
  'top=${r%%"$nl"*}',
  '[ -n "$top" ] || exit 1',
  'printf "%s\\0%s\\0" "$top" "$c" >&3',
  'git "$@" -C "$top" status --porcelain=v2 -z --branch --untracked-files=all --no-renames & s=$!',
  'if [ -n "$c" ]; then',
  '  if [ "$refs" = 1 ]; then git "$@" -C "$top" for-each-ref --contains "$c" "--format=%(refname:short)" refs/remotes >&4 & fi',
  '  git "$@" -C "$top" ls-tree -r -z --full-tree "$c" >&5 & t=$!',
  'fi',
  'wait "$s" || { wait; exit 2; }',
  'if [ -n "$c" ]; then wait "$t" || { wait; exit 3; }; fi',
  'wait',
].join('\n');

/** The work tree at or above `dir` in one process (see SNAPSHOT), or null outside one (or when git cannot be run as the caller). */
export function treeSnapshot(dir: string, withHolders: boolean, as?: Boundary): TreeSnapshot | null {
  const who = callerGitOrNull(as);
  if ('refused' in who) return null;
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const r = spawnSync('/bin/sh', ['-c', SNAPSHOT, 'sh', withHolders ? '1' : '0', ...gitArgs(dir, [])], { ...gitOptions(who), stdio: ['ignore', 'pipe', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const code = r.status;
  if (r.error || code === null || code === 1 || code > 3) return null; // not run, stopped, or not a work tree
  const [, status, , place, refs, tree] = r.output as (string | null)[];
  const m = /^([^\0]+)\0([^\0]*)\0$/.exec(place ?? '');
  if (!m) return null;
  const [, top, commit] = m;
  const st = code === 2 || status === null ? null : parseTreeStatus(status);
  const fresh = st !== null && (st.commit ?? '') === commit ? st : null;
  if (commit === '') return { top, status: fresh, holders: null, listed: fresh ? '' : null };
  return {
    top,
    status: fresh,
    holders: withHolders && refs !== null ? refs.split('\n').filter((x) => x !== '') : null,
    listed: code === 3 || tree === null ? null : tree,
  };
}

/** The git facts of the folder a test command ran in (as the caller `b` names, see the Policy above). */
export function workdirFacts(dir: string, own: LedgerFiles, as?: Boundary): Workdir {
  const path = resolve(dir);
  const top = git(path, ['rev-parse', '--show-toplevel'], as)?.replace(/\n$/, '');
  if (!top) return { path, git: null };
  const st = treeStatus(path, 'normal', as);
  // Policy: a status that cannot be read is not clean (fail closed: "clean" is a claim), and
  // names no commit or branch.
  const clean = st !== null && st.paths.every((p) => isLedgerFile(join(top, p.replace(/\/$/, '')), own));
  return { path, git: { commit: st?.commit ?? null, branch: st?.branch ?? null, clean } };
}
