// Running the real git binary (SPEC 11: git's own plumbing and compare-and-swap, never a
// reimplementation). Every call goes through `runGit`, which:
//   1. starts git with a scrubbed environment: no GIT_* variable of the caller is inherited
//      (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY... would point git at
//      another repository than the one we name), only the ones set here;
//   2. never prompts (GIT_TERMINAL_PROMPT=0, ssh BatchMode) and takes no optional locks;
//   3. runs none of a repository's programs: no hooks (core.hooksPath=/dev/null), no fsmonitor,
//      no alternate-refs command, and speaks only the transports of TRANSPORTS (never ext:: or
//      fd::, which run commands); it names the repository with --git-dir;
//   4. is killed after a timeout, which the caller treats as "unreachable".
// This is the git the key owner runs for itself (issue 23): the private repository in the
// per-user state directory (whose config is ours, under StrictModes: fs/confine.ts), fetching
// from and pushing to the joined remote. Acting for another user, its environment is the key
// owner's own (fs/boundary.ts ownerEnv: its HOME from the password database, a safe PATH),
// never the caller's. Git in a caller's work tree is project/git.ts's, and runs as the caller.
// Every remote URL reaching git here passed checkRemoteUrl, and stands after `--`.
import { ownerEnv, currentBoundary } from '../fs/boundary.js';
import { LedgerError } from '../errors.js';
import { scrubbedGitEnv } from '../project/git.js';

export interface GitResult {
  status: number;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  /** stdout grew past the call's maxBuffer: git was stopped, and stdout is not whole. */
  overflow?: boolean;
}

export interface GitCall {
  /** The repository (--git-dir); absent for a call that needs none (ls-remote by URL). */
  gitDir?: string;
  /** The working directory (default: the process's). */
  cwd?: string;
  input?: Buffer | string;
  /** Default 60 s for network verbs, see NETWORK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Extra GIT_* variables this call needs (the committer identity for commit-tree). */
  env?: Record<string, string>;
  /** The most stdout may hold (default 1 GiB); past it git is killed and the result says `overflow`. */
  maxBuffer?: number;
}

export const LOCAL_TIMEOUT_MS = 30_000;
export const NETWORK_TIMEOUT_MS = 60_000;

/** Variables kept from the caller: what finds binaries, the home (ssh keys, the user's own git config), the locale. */
const KEPT = ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'LANG', 'LC_ALL', 'SSH_AUTH_SOCK', 'SYSTEMROOT'];

/** The environment of every git process (step 1-2 above). */
export function gitEnv(extra: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // Only the variables kept, then the one scrubbed git environment every git run of ours gets
  // (src/project/git.ts: no GIT_*, no prompt, no optional locks, no pager, C messages).
  const from = ownerEnv(currentBoundary(), base);
  const kept: NodeJS.ProcessEnv = {};
  for (const name of KEPT) if (from[name] !== undefined) kept[name] = from[name];
  const env = scrubbedGitEnv(kept);
  env.GCM_INTERACTIVE = 'never';
  // Policy: ssh never asks (a password or an unknown host key is a refusal, exit 3), so a
  // writer under an agent never hangs on a prompt nobody sees.
  env.GIT_SSH_COMMAND = 'ssh -o BatchMode=yes';
  env.LC_ALL = 'C'; // the porcelain and error texts we classify are the untranslated ones
  for (const [k, v] of Object.entries(extra)) env[k] = v;
  return env;
}

/**
 * Policy: the transports a remote may use: the ones that move objects and run nothing of the
 * URL's choosing (a local path, git://, ssh, http and https). A remote helper (`ext::`, `fd::`,
 * any `<transport>::<address>`) is refused by checkRemoteUrl and by git itself (protocol.allow).
 */
export const TRANSPORTS = ['file', 'git', 'ssh', 'http', 'https'] as const;

/** Step 3's settings, on every git this file runs. */
const HARDENED = [
  'core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.alternateRefsCommand=', 'gc.auto=0',
  'protocol.allow=never', ...TRANSPORTS.map((t) => `protocol.${t}.allow=always`),
].flatMap((c) => ['-c', c]);

/**
 * A remote's URL as git may be given it, or a USAGE refusal (exit 2): a URL of one of
 * TRANSPORTS (`scheme://...`), an scp-like `[user@]host:path`, or an absolute path. Never a
 * word git would read as an option (`--upload-pack=CMD`), a remote helper (`ext::sh -c ...`),
 * a host ssh would read as an option (`-oProxyCommand=...`), or a control character.
 */
export function checkRemoteUrl(url: string, what = '--remote'): string {
  const refuse = (why: string) => new LedgerError('USAGE', `${what} ${JSON.stringify(url.slice(0, 200))} is refused: ${why}`, { url: url.slice(0, 200) }, `give a URL (${TRANSPORTS.join(', ')}), host:path, or a path`);
  if (url.length === 0) throw refuse('it is empty');
  if (/[\x00-\x1f\x7f]/.test(url)) throw refuse('it holds a control character');
  if (url.startsWith('-')) throw refuse('git would read it as an option');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    const s = scheme[1].toLowerCase();
    const transport = s === 'git+ssh' || s === 'ssh+git' ? 'ssh' : s;
    if (!(TRANSPORTS as readonly string[]).includes(transport)) throw refuse(`the transport ${s}:// is not one of ${TRANSPORTS.join(', ')}`);
    const host = url.slice(scheme[0].length).replace(/^[^/@]*@/, '');
    if (host.startsWith('-')) throw refuse('its host would be read as an option');
    return url;
  }
  if (url.startsWith('/')) return url;
  // A remote helper: `<transport>::<address>` (git reads "::" before any slash so).
  const colons = url.indexOf('::');
  if (colons >= 0 && !url.slice(0, colons).includes('/')) throw refuse('a remote helper (`transport::address`) runs a program; only plain transports are taken');
  const scp = /^(?:([^@/:]+)@)?([^/:]+):/.exec(url);
  if (scp) {
    if (scp[2].startsWith('-') || (scp[1] ?? '').startsWith('-')) throw refuse('its host would be read as an option');
    return url;
  }
  throw refuse('it is neither a URL, host:path, nor an absolute path');
}

export function runGit(args: readonly string[], call: GitCall = {}): GitResult {
  const full = [...HARDENED, ...(call.gitDir ? ['--git-dir', call.gitDir] : []), ...args];
  // Loaded here, not imported: every writer loads this file with the Ledger (a joined ledger's
  // publisher), most never run git, and node:child_process costs 2-3 ms of every start.
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const r = spawnSync('git', full, {
    cwd: call.cwd,
    input: call.input,
    env: gitEnv(call.env),
    timeout: call.timeoutMs ?? LOCAL_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: call.maxBuffer ?? 1024 * 1024 * 1024,
    windowsHide: true,
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOBUFS') return { status: -1, stdout: Buffer.alloc(0), stderr: '', timedOut: false, overflow: true };
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new LedgerError('OP_REMOTE', 'git is not installed (no `git` on PATH); a ledger shared through a remote needs it');
  }
  const timedOut = r.signal === 'SIGKILL' || (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  return { status: r.status ?? -1, stdout: r.stdout ?? Buffer.alloc(0), stderr: (r.stderr ?? Buffer.alloc(0)).toString('utf8'), timedOut };
}

/** The first line of git's complaint, for a one-line error. */
export function gitComplaint(r: GitResult): string {
  if (r.timedOut) return 'git timed out';
  const line = r.stderr.split('\n').map((l) => l.trim()).find((l) => l.startsWith('fatal:') || l.startsWith('error:')) ?? r.stderr.trim().split('\n')[0] ?? '';
  return line.replace(/^(fatal|error): /, '').slice(0, 300) || `git exited ${r.status}`;
}

/** Runs a local plumbing verb that must succeed; a failure is operational (exit 3). */
export function gitOk(args: readonly string[], call: GitCall): Buffer {
  const r = runGit(args, call);
  if (r.status !== 0) throw new LedgerError('OP_REMOTE', `git ${args[0]} failed: ${gitComplaint(r)}`, { args: [...args] });
  return r.stdout;
}
