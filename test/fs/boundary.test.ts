// The privilege boundary (src/fs/boundary.ts, issue 23): whom this process acts for, as a pure
// function of the environment, the process's ids and a passwd lookup, over every case of the
// deployment; who a child that belongs to the caller runs as; and the environments children get.
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asCaller, callerEnv, decideBoundary, ownerEnv, passwdLookup, SAFE_PATH, type Boundary, type PasswdLookup, type ProcessIds } from '../../src/fs/boundary.js';
import { LedgerError } from '../../src/errors.js';
import { scratch } from '../helpers/cli.js';

const USERS = [
  { name: 'root', uid: 0, gid: 0, home: '/root' },
  { name: 'ledger', uid: 900, gid: 900, home: '/var/lib/ledger' },
  { name: 'agent', uid: 1000, gid: 1000, home: '/home/agent' },
];
const lookup: PasswdLookup = (who) => USERS.find((u) => (typeof who === 'number' ? u.uid === who : u.name === who)) ?? null;
const root = { uid: 0, gid: 0, euid: 0 };
const ledgerUser = { uid: 900, gid: 900, euid: 900 };
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as LedgerError).code;
  }
  return 'none';
};
/** Who a child belonging to the caller runs as: null for this process itself. */
const childOf = (env: Record<string, string>, ids: ProcessIds) => asCaller(decideBoundary(env, ids, lookup), 'the tests');

describe('whom this process acts for, and who runs what belongs to the caller', () => {
  it('acts for nobody when nobody else is calling (the caller could read the key directly)', () => {
    expect(decideBoundary({}, root, lookup).caller).toBeNull();
    expect(decideBoundary({}, ledgerUser, lookup).caller).toBeNull();
    expect(decideBoundary({ SUDO_UID: '900', SUDO_GID: '900' }, ledgerUser, lookup).caller).toBeNull();
    expect(childOf({}, root)).toBeNull();
  });

  it('root acts for the sudo caller and switches to them', () => {
    expect(decideBoundary({ SUDO_UID: '1000', SUDO_GID: '1000' }, root, lookup).caller).toEqual({ uid: 1000, gid: 1000, name: 'agent', home: '/home/agent', source: 'SUDO_UID' });
    // SUDO_GID missing: the primary group from passwd; a uid passwd does not know has no home.
    expect(childOf({ SUDO_UID: '1000' }, root)).toEqual({ uid: 1000, gid: 1000 });
    expect(decideBoundary({ SUDO_UID: '5000', SUDO_GID: '5000' }, root, lookup).caller).toMatchObject({ uid: 5000, gid: 5000, name: null, home: null });
  });

  it('root acts for LEDGER_TESTS_USER (name, uid or uid:gid) when sudo is not the wrapper (a harness, a su wrapper)', () => {
    expect(childOf({ LEDGER_TESTS_USER: 'agent' }, root)).toEqual({ uid: 1000, gid: 1000 });
    expect(childOf({ LEDGER_TESTS_USER: '1000:50' }, root)).toEqual({ uid: 1000, gid: 50 });
  });

  it('a setuid wrapper: the real uid is the caller, and the caller\'s environment cannot name anyone else', () => {
    const setuid = { uid: 1000, gid: 1000, euid: 0 };
    expect(childOf({}, setuid)).toEqual({ uid: 1000, gid: 1000 });
    // The finding: a caller-set LEDGER_TESTS_USER=0 decided "no switch". Refused now, and so is SUDO_UID.
    expect(code(() => decideBoundary({ LEDGER_TESTS_USER: '0' }, setuid, lookup))).toBe('INPUT_REFUSED');
    expect(code(() => decideBoundary({ LEDGER_TESTS_USER: 'root' }, setuid, lookup))).toBe('INPUT_REFUSED');
    expect(code(() => decideBoundary({ SUDO_UID: '0', SUDO_GID: '0' }, setuid, lookup))).toBe('INPUT_REFUSED');
    // Naming the real uid itself changes nothing.
    expect(childOf({ LEDGER_TESTS_USER: '1000' }, setuid)).toEqual({ uid: 1000, gid: 1000 });
    // A setuid key owner that is not root acts for the caller but cannot switch: refused, fail closed.
    expect(code(() => childOf({}, { uid: 1000, gid: 1000, euid: 900 }))).toBe('OP_PERMISSION');
  });

  it('refuses, fail closed, when it cannot run as the caller or cannot tell who the caller is', () => {
    expect(code(() => childOf({ SUDO_UID: '1000', SUDO_GID: '1000' }, ledgerUser))).toBe('OP_PERMISSION');
    expect(code(() => childOf({ SUDO_UID: '5000' }, root))).toBe('OP_PERMISSION');
    expect(code(() => decideBoundary({ SUDO_UID: '1000', LEDGER_TESTS_USER: 'root' }, root, lookup))).toBe('INPUT_REFUSED');
    for (const bad of [{ SUDO_UID: 'x' }, { SUDO_UID: '1000', SUDO_GID: '-1' }, { LEDGER_TESTS_USER: 'no such' }, { LEDGER_TESTS_USER: 'ghost' }, { LEDGER_TESTS_USER: '1:2:3' }]) {
      expect(code(() => decideBoundary(bad, root, lookup)), JSON.stringify(bad)).toBe('USAGE');
    }
  });
});

describe('the environments children get', () => {
  const ownerVars = { PATH: '/home/agent/bin:/usr/bin', HOME: '/home/agent', HARNESS_TOKEN: 'secret-token', AWS_SECRET_ACCESS_KEY: 'x', LEDGER_KEY: '/k', SSH_AUTH_SOCK: '/tmp/agent.sock', LANG: 'C.UTF-8', LC_CTYPE: 'C.UTF-8', TERM: 'xterm', TZ: 'UTC', SUDO_UID: '1000', SUDO_GID: '1000' };
  const acting: Boundary = decideBoundary(ownerVars, root, lookup);

  it('acting for another user: the caller\'s HOME, USER and LOGNAME, a safe PATH, the locale and terminal, nothing else', () => {
    expect(callerEnv(acting, ownerVars)).toEqual({ PATH: SAFE_PATH, HOME: '/home/agent', USER: 'agent', LOGNAME: 'agent', LANG: 'C.UTF-8', LC_CTYPE: 'C.UTF-8', TERM: 'xterm', TZ: 'UTC' });
  });

  it('the key owner\'s own git: its own HOME from passwd, never the environment\'s (a setuid wrapper\'s is the caller\'s)', () => {
    expect(ownerEnv(acting, ownerVars)).toEqual({ PATH: SAFE_PATH, HOME: '/root', USER: 'root', LOGNAME: 'root', LANG: 'C.UTF-8', LC_CTYPE: 'C.UTF-8', TERM: 'xterm', TZ: 'UTC' });
  });

  it('acting for nobody: the environment as it is (the caller\'s own)', () => {
    const self = decideBoundary({ HOME: '/root', X: '1' }, root, lookup);
    expect(callerEnv(self, { HOME: '/root', X: '1' })).toEqual({ HOME: '/root', X: '1' });
    expect(ownerEnv(self, { HOME: '/root', X: '1' })).toEqual({ HOME: '/root', X: '1' });
  });
});

describe('passwdLookup', () => {
  it('reads names, ids and homes from a passwd file, and nothing from one that is not a regular file', () => {
    const s = scratch();
    try {
      writeFileSync(join(s.dir, 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n# junk\nbad line\nagent:x:1000:1001::/home/agent:/bin/sh\n');
      const l = passwdLookup(join(s.dir, 'passwd'));
      expect(l('agent')).toEqual({ name: 'agent', uid: 1000, gid: 1001, home: '/home/agent' });
      expect(l(0)?.name).toBe('root');
      expect(l('nobody')).toBeNull();
      expect(passwdLookup(s.dir)('root')).toBeNull();
    } finally {
      s.cleanup();
    }
  });
});
