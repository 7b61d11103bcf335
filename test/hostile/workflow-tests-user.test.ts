// Issue 13 finding 3, the first line, with two real users: in the README's deployment the ledger
// runs as the key's owner (here root, through "sudo": SUDO_UID/SUDO_GID) for an agent who is
// another user (here nobody, uid 65534). `checkpoint --tests-cmd 'cat keys/harness.key'` then
// runs as the agent, cannot read the key, and the record says so; no byte of the key reaches
// records.jsonl, the blobs or the views. Needs root to be two users (CI runs as root).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { BIN, runLedger, spawnLedgerSync } from '../helpers/cli.js';
import { allBytes, projectState } from '../helpers/project-state.js';
import { CP, ok, project, records, type Project } from '../handoff/helpers.js';
import type { TestsRun } from '../../src/record.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const SKIP_REASON = 'skipped: not root, so there is no second user to run the tests as';

let p: Project;
beforeEach(async () => {
  p = await project();
  // The agent may enter the project (mkdtemp made it 0700); keys/ stays 0700 and the key 0600, root's.
  chmodSync(p.dir, 0o755);
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
});
afterEach(() => p.cleanup());

const lastTests = () => (records(p).at(-1) as { tests?: TestsRun }).tests!;
const secretForms = () => {
  const text = readFileSync(join(p.dir, 'keys/harness.key'), 'utf8');
  const seed = Buffer.from(JSON.parse(text).secret_key, 'base64url');
  return [text.trim(), seed.toString('base64url'), seed.toString('hex'), seed.toString('base64')];
};

describe.skipIf(!isRoot)(`when an agent (nobody) checkpoints through a root wrapper with --tests-cmd 'cat keys/harness.key' (${isRoot ? 'as root' : SKIP_REASON})`, () => {
  it('runs the command as the agent: cat is refused, the record says so, and the key is nowhere', async () => {
    const key = statSync(join(p.dir, 'keys/harness.key'));
    expect([key.uid, key.mode & 0o777]).toEqual([0, 0o600]);
    const r = spawnLedgerSync(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'id -u; echo "home=$HOME"; cat keys/harness.key', '--json'], {
      cwd: p.dir,
      env: { SUDO_UID: String(NOBODY), SUDO_GID: String(NOBODY), SUDO_USER: 'nobody' },
    });
    expect(r.code, r.stderr).toBe(0);
    const t = lastTests();
    expect(t.exit_code).toBe(1);
    expect(t.excerpt).toMatch(new RegExp(`^${NOBODY}$`, 'm'));
    expect(t.excerpt).toMatch(/^home=\/nonexistent$/m);
    expect(t.excerpt).toMatch(/keys\/harness\.key: Permission denied/);
    const everything = Buffer.concat([allBytes(p.ledger), readFileSync(join(p.dir, 'HANDOFF.md')), readFileSync(join(p.dir, 'HANDOFF.yml')), Buffer.from(r.stdout + r.stderr)]);
    for (const form of secretForms()) expect(everything.includes(form), `a form of the key in the ledger: ${form.slice(0, 4)}…`).toBe(false);
    // The blob is the ledger's (root's) and readable by readers; no scratch file is left.
    expect(lstatSync(join(p.ledger, 'blobs', 'sha256', t.digest.slice(7))).mode & 0o777).toBe(0o644);
    expect(readdirSync(join(p.ledger, 'blobs', 'tmp'))).toEqual([]);
  });

  it('LEDGER_TESTS_USER names the user for a harness that is not sudo', async () => {
    const r = await runLedger(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'id -u; id -G'], { cwd: p.dir, env: { LEDGER_TESTS_USER: 'nobody' } });
    expect(r.code, r.stderr).toBe(0);
    // The supplementary groups of root are dropped too.
    expect(lastTests().excerpt.split('\n')).toEqual([String(NOBODY), String(NOBODY)]);
  });

  it('refuses when the ledger runs as another user who cannot switch to the caller, before anything runs', () => {
    // The key's owner is nobody now, and the ledger runs as nobody for a caller uid 4242.
    const chownTree = (dir: string) => {
      chownSync(dir, NOBODY, NOBODY);
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (lstatSync(path).isDirectory()) chownTree(path);
        else chownSync(path, NOBODY, NOBODY);
      }
    };
    chownTree(p.dir);
    const before = projectState(p.dir);
    const marker = join(p.dir, 'ran');
    // The checkout may sit where nobody cannot read it (a clone in a 0700 temp folder, as CI
    // makes): nobody runs a copy of the shipped CLI from a folder it can read.
    const cliCopy = mkdtempSync(join(tmpdir(), 'ledger-cli-copy-'));
    chmodSync(cliCopy, 0o755);
    cpSync(dirname(BIN), cliCopy, { recursive: true });
    const r = spawnSync(process.execPath, [join(cliCopy, basename(BIN)), 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', `touch ${marker}`, '--json'], {
      cwd: p.dir, uid: NOBODY, gid: NOBODY, encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', SUDO_UID: '4242', SUDO_GID: '4242' },
    });
    expect(r.status, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'OP_PERMISSION', hint: expect.stringContaining('--tests TEXT') });
    expect(() => statSync(marker)).toThrow();
    expect(projectState(p.dir)).toEqual(before);
    rmSync(cliCopy, { recursive: true, force: true });
  });
});

describe('when LEDGER_TESTS_USER names someone other than the user sudo says is calling', () => {
  it('is refused (a caller must not pick a more privileged user to run as), and nothing changes', async () => {
    const before = projectState(p.dir);
    const r = await runLedger(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'true', '--json'], { cwd: p.dir, env: { SUDO_UID: String(NOBODY), SUDO_GID: String(NOBODY), LEDGER_TESTS_USER: '0' } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_REFUSED');
    expect(projectState(p.dir)).toEqual(before);
  });
});
