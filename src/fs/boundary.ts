// The privilege boundary (issue 23), in one place: whether this process acts for another user,
// who that user is, and what that changes for every child process it starts. In the documented
// deployment (docs/guarantees.md "Deploying so that agents never read the key") an agent calls a
// wrapper that runs `ledger` as the key's owner; everything the agent controls (its work tree,
// its git config and filters, its test command, its environment) must then run as the agent, or
// not at all, and nothing of the key owner's (its environment, its privileges) may reach it.
//
// Who the caller is (decideBoundary, pure; the environment, the ids and a passwd lookup passed in):
//   1. the real uid, when it differs from the effective one (a setuid wrapper). The environment
//      is the caller's own then, so it cannot name anyone else: SUDO_UID or LEDGER_TESTS_USER
//      naming another uid is refused (INPUT_REFUSED, exit 2), never believed (a caller-set
//      LEDGER_TESTS_USER=0 once decided "no switch" here)
//   2. else SUDO_UID/SUDO_GID (sudo sets them; only a process that is already this user could
//      fake them, and it would only lower its own privileges)
//   3. else LEDGER_TESTS_USER (NAME, UID or UID:GID): a harness that is not sudo, or a su
//      wrapper, names the caller with it (su leaves no trace of its caller that could be trusted)
//   4. else nobody: this process acts for itself
// Policy: when sudo names the caller, LEDGER_TESTS_USER may only name the same user: a caller
// who can set variables must not pick a more privileged user to run as.
// A caller who is this process's own user is no other user: there is no privilege to shed.
//
// What acting for another user changes (each enforced where that thing is done):
//   - a child run as the caller (the test command, git in the caller's work tree) gets the
//     caller's uid and gid (root only: libuv drops the supplementary groups; any other key owner
//     is refused, OP_PERMISSION, exit 3: Policy, only root switches users, since a setuid
//     process that is not root keeps its saved uid through setuid(2)) and the allow-listed
//     environment of callerEnv (sudo's env_reset: the caller's HOME, USER and LOGNAME, a safe
//     PATH, the locale and the terminal), never the key owner's
//   - git the key owner runs for itself gets ownerEnv: its own HOME from the password database,
//     not the environment's (a setuid wrapper's environment is the caller's), and a safe PATH
//   - the ledger directory, the per-user state directory and the key are held to StrictModes
//     (fs/confine.ts), as they always are for a writer
import { readRegularFileUpTo } from './ops.js';
import { LedgerError } from '../errors.js';

export interface PasswdEntry { name: string; uid: number; gid: number; home: string }
export type PasswdLookup = (nameOrUid: string | number) => PasswdEntry | null;

export interface ProcessIds { uid: number; gid: number; euid: number }

export type Env = Record<string, string | undefined>;

/** The user this process acts for. */
export interface Caller {
  uid: number;
  /** null: none given and none in the password database (switching is then refused). */
  gid: number | null;
  name: string | null;
  home: string | null;
  source: 'the real uid' | 'SUDO_UID' | 'LEDGER_TESTS_USER';
}

export interface Boundary {
  ids: ProcessIds;
  /** The user this process acts for; null when it acts for itself. */
  caller: Caller | null;
  /** The key owner's own name and home (the password database's entry for the effective uid). */
  owner: { name: string | null; home: string | null };
}

const ID_RE = /^\d{1,10}$/;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9._-]{0,63}\$?$/;

function numeric(v: string, what: string): number {
  const n = Number(v);
  if (!ID_RE.test(v) || !Number.isSafeInteger(n) || n > 0xfffffffe) throw new LedgerError('USAGE', `${what} must be a numeric id, got "${v}"`);
  return n;
}

interface Named { uid: number; gid: number | null; source: Caller['source'] }

function fromSudo(env: Env): Named | null {
  const uid = env.SUDO_UID;
  if (uid === undefined || uid === '') return null;
  const gid = env.SUDO_GID;
  return { uid: numeric(uid, 'SUDO_UID'), gid: gid === undefined || gid === '' ? null : numeric(gid, 'SUDO_GID'), source: 'SUDO_UID' };
}

function fromExplicit(env: Env, lookup: PasswdLookup): Named | null {
  const v = env.LEDGER_TESTS_USER;
  if (v === undefined || v === '') return null;
  const [user, group, ...rest] = v.split(':');
  const malformed = () => new LedgerError('USAGE', `LEDGER_TESTS_USER must be NAME, UID or UID:GID, got "${v}"`);
  if (rest.length) throw malformed();
  let uid: number;
  if (ID_RE.test(user)) uid = numeric(user, 'LEDGER_TESTS_USER');
  else if (NAME_RE.test(user)) {
    const e = lookup(user);
    if (!e) throw new LedgerError('USAGE', `LEDGER_TESTS_USER names "${user}", who is not in /etc/passwd`);
    uid = e.uid;
  } else throw malformed();
  return { uid, gid: group === undefined ? null : numeric(group, 'the GID of LEDGER_TESTS_USER'), source: 'LEDGER_TESTS_USER' };
}

/** Decides whom this process acts for (see the header); throws on a caller it must not believe. */
export function decideBoundary(env: Env, ids: ProcessIds, lookup: PasswdLookup): Boundary {
  const sudo = fromSudo(env);
  const explicit = fromExplicit(env, lookup);
  let named: Named | null;
  if (ids.uid !== ids.euid && ids.uid >= 0) {
    // 1. setuid: the real uid is the caller, whatever the (caller's own) environment says.
    for (const n of [sudo, explicit]) {
      if (n && n.uid !== ids.uid) {
        throw new LedgerError('INPUT_REFUSED', `${n.source} names uid ${n.uid}, but ledger runs setuid for the real uid ${ids.uid}; the caller is the real uid`, { real_uid: ids.uid, named_uid: n.uid });
      }
    }
    named = { uid: ids.uid, gid: ids.gid >= 0 ? ids.gid : null, source: 'the real uid' };
  } else {
    if (sudo && explicit && sudo.uid !== explicit.uid) {
      throw new LedgerError('INPUT_REFUSED', `LEDGER_TESTS_USER names uid ${explicit.uid}, but sudo says the caller is uid ${sudo.uid}; whatever ledger runs for the caller runs as the caller`, { sudo_uid: sudo.uid, tests_user: explicit.uid });
    }
    named = sudo ?? explicit;
  }
  // The owner's entry is looked up only when asked (ownerEnv): a command that acts for nobody
  // reads no password database.
  let self: PasswdEntry | null | undefined;
  const owner = {
    get name() {
      return (self ??= ids.euid >= 0 ? lookup(ids.euid) : null)?.name ?? null;
    },
    get home() {
      return (self ??= ids.euid >= 0 ? lookup(ids.euid) : null)?.home ?? null;
    },
  };
  if (named === null || named.uid === ids.euid) return { ids, caller: null, owner };
  const entry = lookup(named.uid);
  return { ids, caller: { uid: named.uid, gid: named.gid ?? entry?.gid ?? null, name: entry?.name ?? null, home: entry?.home ?? null, source: named.source }, owner };
}

const ALTERNATIVE = 'run the tests yourself and pass their output with --tests TEXT, or run ledger as root through sudo so that it can run them as you';

/**
 * How a child that belongs to the caller runs: as this process (acting for nobody), or switched
 * to the caller. Throws OP_PERMISSION (exit 3) when this process acts for another user and
 * cannot switch to them: such a child never runs with the key owner's privileges. `what` names
 * the child in the refusal.
 */
export function asCaller(b: Boundary, what: string): { uid: number; gid: number } | null {
  const c = b.caller;
  if (c === null) return null;
  if (b.ids.euid !== 0) {
    throw new LedgerError('OP_PERMISSION', `ledger runs as uid ${b.ids.euid} for the caller uid ${c.uid} (${c.source}) and cannot run ${what} as the caller; it never runs it with the key owner's privileges`, { euid: b.ids.euid, caller_uid: c.uid }, ALTERNATIVE);
  }
  if (c.gid === null) {
    throw new LedgerError('OP_PERMISSION', `cannot tell the group of the caller uid ${c.uid} (${c.source}), so ${what} cannot run as the caller: set SUDO_GID, or LEDGER_TESTS_USER=UID:GID`, { caller_uid: c.uid }, ALTERNATIVE);
  }
  return { uid: c.uid, gid: c.gid };
}

/** sudo's secure_path: where a child of a process acting for another user finds its programs. */
export const SAFE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The variables a child keeps from this process's environment when it acts for another user: the locale and the terminal. */
const KEPT = /^(?:LANG|LANGUAGE|LC_[A-Z_]+|TERM|COLORTERM|TZ)$/;

/**
 * The environment of a child that runs as the caller. Acting for nobody: `from` as it is (the
 * caller's own; each caller of this takes out what it must). Acting for another user: sudo's
 * env_reset: the caller's HOME (from the password database; /nonexistent when it has none),
 * USER and LOGNAME, SAFE_PATH, and the locale and terminal of `from`; nothing else of the key
 * owner's (a harness token, a cloud credential, LEDGER_*).
 */
export function callerEnv(b: Boundary, from: Env): Env {
  const c = b.caller;
  if (c === null) return { ...from };
  const out = keptOf(from);
  out.HOME = c.home ?? '/nonexistent';
  if (c.name !== null) {
    out.USER = c.name;
    out.LOGNAME = c.name;
  }
  return out;
}

/**
 * The environment of a child the key owner runs for itself (git fetching and pushing the
 * ledger's ref). Acting for nobody: `from`. Acting for another user: the owner's HOME from the
 * password database (its ssh keys and git config), USER and LOGNAME, SAFE_PATH, the locale and
 * the terminal: under a setuid wrapper the environment is the caller's, and a caller's PATH,
 * HOME or SSH_AUTH_SOCK must not choose the key owner's git, config or credentials.
 */
export function ownerEnv(b: Boundary, from: Env): Env {
  if (b.caller === null) return { ...from };
  const out = keptOf(from);
  if (b.owner.home !== null) out.HOME = b.owner.home;
  if (b.owner.name !== null) {
    out.USER = b.owner.name;
    out.LOGNAME = b.owner.name;
  }
  return out;
}

function keptOf(from: Env): Env {
  const out: Env = { PATH: SAFE_PATH };
  for (const [k, v] of Object.entries(from)) if (v !== undefined && KEPT.test(k)) out[k] = v;
  return out;
}

const PASSWD_MAX = 4 << 20;

/** Reads /etc/passwd (a regular file only, opened without blocking); null when it cannot be read. */
function readPasswd(path: string): string | null {
  try {
    return readRegularFileUpTo(path, PASSWD_MAX)?.toString('utf8') ?? null;
  } catch {
    return null;
  }
}

/** A lookup over /etc/passwd (`path` for tests), read once, on the first question. */
export function passwdLookup(path = '/etc/passwd'): PasswdLookup {
  let entries: PasswdEntry[] | null = null;
  return (who) => {
    if (entries === null) {
      entries = [];
      for (const line of (readPasswd(path) ?? '').split('\n')) {
        const f = line.split(':');
        if (f.length < 7 || !ID_RE.test(f[2]) || !ID_RE.test(f[3])) continue;
        entries.push({ name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5] });
      }
    }
    return entries.find((e) => (typeof who === 'number' ? e.uid === who : e.name === who)) ?? null;
  };
}

/** This process's ids (-1 on a platform without them: nobody is ever acted for there). */
export function processIds(): ProcessIds {
  const uid = process.getuid?.() ?? -1;
  return { uid, gid: process.getgid?.() ?? -1, euid: process.geteuid?.() ?? uid };
}

// The boundary of this process, decided once per environment object: the CLI's environment is
// process.env, and a test drives the CLI in-process with environments of its own.
const decided = new WeakMap<object, Boundary>();

/**
 * This process's boundary for `env` (default: process.env). Throws as decideBoundary does; the
 * CLI asks it first, so a caller it must not believe is refused before anything is read.
 */
export function boundaryFor(env: Env = process.env): Boundary {
  const known = decided.get(env);
  if (known) return known;
  const b = decideBoundary(env, processIds(), passwdLookup());
  decided.set(env, b);
  return b;
}

// The environment the process runs for: set by the CLI for the length of one command (an
// in-process test runs the CLI with an environment of its own), else process.env.
let scoped: Env | null = null;

/** The boundary of the command running now (see `runFor`). */
export function currentBoundary(): Boundary {
  return boundaryFor(scoped ?? process.env);
}

/** Runs `fn` with `env` as the environment of the command running now (the CLI, once per command). */
export async function runFor<T>(env: Env, fn: () => Promise<T>): Promise<T> {
  const before = scoped;
  scoped = env;
  try {
    return await fn();
  } finally {
    scoped = before;
  }
}
