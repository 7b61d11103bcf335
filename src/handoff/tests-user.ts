// Who runs a `--tests-cmd` (issue 13 finding 3): never the key's owner on behalf of someone else.
// In the documented deployment (docs/guarantees.md "Deploying so that agents never read the
// key") an agent calls a wrapper that runs `ledger` as the key's owner; a test command run with
// the ledger's privileges would be a shell as that owner. So the command runs as the *caller*:
//
//   - the caller is `SUDO_UID`/`SUDO_GID` (set by sudo, which the wrapper is), else the explicit
//     `LEDGER_TESTS_USER` (NAME, UID or UID:GID, for a harness that is not sudo), else the real
//     uid when it differs from the effective one (a setuid wrapper), else this process's own user
//   - the same user as this process: run as is (there is no privilege to shed: the caller could
//     read the key directly)
//   - another user, and this process is root: run as that user (uid, gid; libuv drops the
//     supplementary groups), with its HOME, USER and LOGNAME
//   - another user, and this process cannot switch: refused (OP_PERMISSION, exit 3), before
//     anything runs
// Policy: when sudo names the caller, LEDGER_TESTS_USER may only name the same user: a caller
// who can set variables must not pick a more privileged user to run as.
// Policy: only root switches users. A process with CAP_SETUID but another uid is refused, not
// trusted to switch (fail closed).
//
// The decision is pure (`decideTestsUser`: the environment, the ids and a passwd lookup passed
// in); `passwdLookup` reads /etc/passwd, a regular file, without blocking.
import { readRegularFileUpTo } from '../fs/ops.js';
import { LedgerError } from '../errors.js';

export interface PasswdEntry { name: string; uid: number; gid: number; home: string }
export type PasswdLookup = (nameOrUid: string | number) => PasswdEntry | null;

export interface ProcessIds { uid: number; gid: number; euid: number }

/** How the test command runs: as this process, or switched to the caller. */
export type TestsUser =
  | { switch: false; uid: number }
  | { switch: true; uid: number; gid: number; name: string | null; home: string | null };

const ID_RE = /^\d{1,10}$/;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9._-]{0,63}\$?$/;
const ALTERNATIVE = 'run the tests yourself and pass their output with --tests TEXT, or run ledger as root through sudo so that it can run --tests-cmd as you';

function numeric(v: string, what: string): number {
  const n = Number(v);
  if (!ID_RE.test(v) || !Number.isSafeInteger(n) || n > 0xfffffffe) throw new LedgerError('USAGE', `${what} must be a numeric id, got "${v}"`);
  return n;
}

interface Caller { uid: number; gid: number | null; source: string }

function fromSudo(env: Record<string, string | undefined>): Caller | null {
  const uid = env.SUDO_UID;
  if (uid === undefined || uid === '') return null;
  const gid = env.SUDO_GID;
  return { uid: numeric(uid, 'SUDO_UID'), gid: gid === undefined || gid === '' ? null : numeric(gid, 'SUDO_GID'), source: 'SUDO_UID' };
}

function fromExplicit(env: Record<string, string | undefined>, lookup: PasswdLookup): Caller | null {
  const v = env.LEDGER_TESTS_USER;
  if (v === undefined || v === '') return null;
  const [user, group, ...rest] = v.split(':');
  if (rest.length) throw new LedgerError('USAGE', `LEDGER_TESTS_USER must be NAME, UID or UID:GID, got "${v}"`);
  let uid: number;
  if (ID_RE.test(user)) uid = numeric(user, 'LEDGER_TESTS_USER');
  else if (NAME_RE.test(user)) {
    const e = lookup(user);
    if (!e) throw new LedgerError('USAGE', `LEDGER_TESTS_USER names "${user}", who is not in /etc/passwd`);
    uid = e.uid;
  } else throw new LedgerError('USAGE', `LEDGER_TESTS_USER must be NAME, UID or UID:GID, got "${v}"`);
  return { uid, gid: group === undefined ? null : numeric(group, 'the GID of LEDGER_TESTS_USER'), source: 'LEDGER_TESTS_USER' };
}

/** Decides who runs the test command; throws when it cannot be run without the key's privileges. */
export function decideTestsUser(env: Record<string, string | undefined>, ids: ProcessIds, lookup: PasswdLookup): TestsUser {
  const sudo = fromSudo(env);
  const explicit = fromExplicit(env, lookup);
  if (sudo && explicit && sudo.uid !== explicit.uid) {
    throw new LedgerError('INPUT_REFUSED', `LEDGER_TESTS_USER names uid ${explicit.uid}, but sudo says the caller is uid ${sudo.uid}; --tests-cmd runs as the caller`, { sudo_uid: sudo.uid, tests_user: explicit.uid });
  }
  const caller: Caller | null = sudo ?? explicit ?? (ids.uid !== ids.euid ? { uid: ids.uid, gid: ids.gid, source: 'the real uid' } : null);
  if (caller === null || caller.uid === ids.euid) return { switch: false, uid: ids.euid };
  if (ids.euid !== 0) {
    throw new LedgerError('OP_PERMISSION', `ledger runs as uid ${ids.euid} for the caller uid ${caller.uid} (${caller.source}) and cannot run --tests-cmd as the caller; it never runs it with the key's privileges`, { euid: ids.euid, caller_uid: caller.uid }, ALTERNATIVE);
  }
  const entry = lookup(caller.uid);
  const gid = caller.gid ?? entry?.gid ?? null;
  if (gid === null) {
    throw new LedgerError('OP_PERMISSION', `cannot tell the group of the caller uid ${caller.uid} (${caller.source}): set SUDO_GID, or LEDGER_TESTS_USER=UID:GID`, { caller_uid: caller.uid }, ALTERNATIVE);
  }
  return { switch: true, uid: caller.uid, gid, name: entry?.name ?? null, home: entry?.home ?? null };
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

/** This process's ids (null fields on a platform without them: no switching there). */
export function processIds(): ProcessIds {
  const uid = process.getuid?.() ?? -1;
  return { uid, gid: process.getgid?.() ?? -1, euid: process.geteuid?.() ?? uid };
}
