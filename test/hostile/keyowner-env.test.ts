// Issue 23 finding 5 and the last of finding 10, for real as two users. A `--tests-cmd` run as the
// caller got the key owner's whole environment but LEDGER_*: a harness token was signed into the
// record and HANDOFF.md. And under a setuid wrapper (real uid the agent, effective uid root), a
// caller-set LEDGER_TESTS_USER=0 decided "no switch": the test command ran as root. Now a child
// of a process acting for another user gets sudo's env_reset allow-list (src/fs/boundary.ts
// callerEnv), and a setuid caller's environment cannot name anyone but the real uid.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keep, withSuiteEnv } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';
import { AGENT, agentProjectRoot, asKeyOwner, isRoot, oneLine, readableCli, SKIP } from '../helpers/two-users.js';
import { SAFE_PATH } from '../../src/fs/boundary.js';

let project: { dir: string };
let cli: ReturnType<typeof readableCli>;
let stateEnv: Record<string, string>;
const CP = ['--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n'];

/**
 * The agent's project (0755, the agent's) with a ledger the key owner made and one work item
 * started, and the key owner's state directory: built once, put back byte for byte (owners and
 * modes too) before each test (helpers/cli.ts `keep`).
 */
const fixture = keep(() => {
  const { root, dir, env } = agentProjectRoot('ledger-env-');
  expect(asKeyOwner(['init', '--name', 'env'], dir, env).code).toBe(0);
  expect(asKeyOwner(['start', 'fix-tz', '--agent', 'claude', '--summary', 's'], dir, env).code).toBe(0);
  return { root, dir, env };
});

// The CLI's copy is only read: one for the file.
beforeAll(() => {
  if (isRoot) cli = readableCli();
});
afterAll(() => cli?.cleanup());
beforeEach(async () => {
  if (!isRoot) return;
  const f = await fixture();
  project = { dir: f.dir };
  stateEnv = f.env;
});

const lastTests = () => {
  const lines = readFileSync(join(project.dir, '.ledger', 'records.jsonl'), 'utf8').trim().split('\n');
  return (JSON.parse(lines[lines.length - 1]) as { tests: { excerpt: string } }).tests;
};

describe.skipIf(!isRoot)(`the key owner's environment, when root runs a test command for the agent (${isRoot ? 'root and nobody' : SKIP})`, () => {
  it('never reaches the command: it gets the agent\'s HOME and name, a safe PATH, the locale, and nothing else', () => {
    const harness = { HARNESS_TOKEN: 'tok-3f9a0c1e', AWS_SECRET_ACCESS_KEY: 'aws-7d1e', LANG: 'C.UTF-8', TERM: 'dumb' };
    const r = asKeyOwner(['checkpoint', 'fix-tz', ...CP, '--tests-cmd', 'id -u; env | sort'], project.dir, { ...stateEnv, ...harness });
    expect(r.code, r.stderr).toBe(0);
    const seen = lastTests().excerpt.split('\n');
    expect(seen[0]).toBe(String(AGENT));
    const vars = Object.fromEntries(seen.slice(1).filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(vars.PATH).toBe(SAFE_PATH);
    expect(vars.USER).toBe('nobody');
    expect(vars.LANG).toBe('C.UTF-8');
    for (const name of ['HARNESS_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'SUDO_UID', 'LEDGER_STATE_DIR']) expect(vars[name], name).toBeUndefined();
    const everywhere = readFileSync(join(project.dir, '.ledger', 'records.jsonl'), 'utf8') + readFileSync(join(project.dir, 'HANDOFF.md'), 'utf8') + readFileSync(join(project.dir, 'HANDOFF.yml'), 'utf8');
    for (const secret of Object.values(harness).slice(0, 2)) expect(everywhere).not.toContain(secret);
  });
});

/** The CLI as a setuid-root wrapper would run it: real uid the agent, effective uid root. */
function setuid(args: string[], env: Record<string, string>) {
  const r = spawnSync('setpriv', ['--ruid', String(AGENT), '--euid', '0', '--', process.execPath, cli.bin, ...args], {
    cwd: project.dir, env: { PATH: process.env.PATH ?? '', ...withSuiteEnv({ ...stateEnv, ...env }) }, encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const haveSetpriv = isRoot && spawnSync('setpriv', ['--version']).status === 0;

describe.skipIf(!haveSetpriv)(`a setuid wrapper (${haveSetpriv ? 'real uid nobody, effective uid root' : 'skipped: not root, or no setpriv'})`, () => {
  it('runs the test command as the real uid: the caller', () => {
    const r = setuid(['checkpoint', 'fix-tz', ...CP, '--tests-cmd', 'id -u'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(lastTests().excerpt.trim()).toBe(String(AGENT));
  });

  it('refuses a caller-set LEDGER_TESTS_USER=0 (or SUDO_UID=0): exit 2, one line, nothing run, nothing changed', () => {
    const marker = join(project.dir, 'ran-as-root');
    const envs: Record<string, string>[] = [{ LEDGER_TESTS_USER: '0' }, { LEDGER_TESTS_USER: 'root' }, { SUDO_UID: '0', SUDO_GID: '0' }];
    for (const env of envs) {
      const before = projectState(project.dir);
      const r = setuid(['checkpoint', 'fix-tz', ...CP, '--tests-cmd', `touch ${marker}`, '--json'], env);
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe('INPUT_REFUSED');
      expect(oneLine(r)).toMatch(/names uid 0, but ledger runs setuid for the real uid 65534; the caller is the real uid/);
      expect(existsSync(marker)).toBe(false);
      expect(projectState(project.dir)).toEqual(before);
    }
  });
});
