// Who runs --tests-cmd (src/handoff/tests-user.ts): the decision as a pure function of the
// environment, the process's ids and a passwd lookup, over every case of the deployment.
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decideTestsUser, passwdLookup, type PasswdLookup } from '../../src/handoff/tests-user.js';
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

describe('who runs the test command', () => {
  it('runs as is when nobody else is calling (the caller could read the key directly)', () => {
    expect(decideTestsUser({}, root, lookup)).toEqual({ switch: false, uid: 0 });
    expect(decideTestsUser({}, ledgerUser, lookup)).toEqual({ switch: false, uid: 900 });
    expect(decideTestsUser({ SUDO_UID: '900', SUDO_GID: '900' }, ledgerUser, lookup)).toEqual({ switch: false, uid: 900 });
  });

  it('root switches to the sudo caller, with the caller\'s home', () => {
    expect(decideTestsUser({ SUDO_UID: '1000', SUDO_GID: '1000' }, root, lookup)).toEqual({ switch: true, uid: 1000, gid: 1000, name: 'agent', home: '/home/agent' });
    // SUDO_GID missing: the primary group from passwd; a uid passwd does not know has no home.
    expect(decideTestsUser({ SUDO_UID: '1000' }, root, lookup)).toMatchObject({ uid: 1000, gid: 1000 });
    expect(decideTestsUser({ SUDO_UID: '5000', SUDO_GID: '5000' }, root, lookup)).toEqual({ switch: true, uid: 5000, gid: 5000, name: null, home: null });
  });

  it('root switches to LEDGER_TESTS_USER (name, uid or uid:gid) when sudo is not the wrapper', () => {
    expect(decideTestsUser({ LEDGER_TESTS_USER: 'agent' }, root, lookup)).toMatchObject({ switch: true, uid: 1000, gid: 1000 });
    expect(decideTestsUser({ LEDGER_TESTS_USER: '1000:50' }, root, lookup)).toMatchObject({ switch: true, uid: 1000, gid: 50 });
  });

  it('a setuid wrapper: the real uid is the caller', () => {
    expect(decideTestsUser({}, { uid: 1000, gid: 1000, euid: 0 }, lookup)).toMatchObject({ switch: true, uid: 1000, gid: 1000 });
  });

  it('refuses, fail closed, when it cannot run as the caller or cannot tell who the caller is', () => {
    expect(code(() => decideTestsUser({ SUDO_UID: '1000', SUDO_GID: '1000' }, ledgerUser, lookup))).toBe('OP_PERMISSION');
    expect(code(() => decideTestsUser({ SUDO_UID: '5000' }, root, lookup))).toBe('OP_PERMISSION');
    expect(code(() => decideTestsUser({ SUDO_UID: '1000', LEDGER_TESTS_USER: 'root' }, root, lookup))).toBe('INPUT_REFUSED');
    for (const bad of [{ SUDO_UID: 'x' }, { SUDO_UID: '1000', SUDO_GID: '-1' }, { LEDGER_TESTS_USER: 'no such' }, { LEDGER_TESTS_USER: 'ghost' }, { LEDGER_TESTS_USER: '1:2:3' }]) {
      expect(code(() => decideTestsUser(bad, root, lookup)), JSON.stringify(bad)).toBe('USAGE');
    }
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
