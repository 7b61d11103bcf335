// Issue 25, "Keys for a team", as new users lived it, in real git repositories with a bare
// remote, through the shipped binary as a shell runs it: a lost key, a teammate's clone, a second
// machine that joins (authorized by an admin's `key` record, no trust-file commit, no pull) and is
// retired by `trust revoke`. Each story ends with `ledger audit` passing on every clone. Every
// refusal is one line with its exit code, and the ledger and the views stay byte-identical.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, keep, scratch, withSuiteEnv } from '../helpers/cli.js';

interface Sh { code: number; stdout: string; stderr: string }

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

interface Clone { dir: string; env: Record<string, string>; ledger: (args: string[]) => Sh; must: (args: string[]) => string; git: (args: string[]) => string }

/** A bare remote and a way to make clones of it, each a machine with its own HOME and state. */
function team() {
  const s = scratch('ledger-team-keys-');
  cleanup = s.cleanup;
  const bare = join(s.dir, 'team.git');
  const baseEnv = (name: string): Record<string, string> => {
    const home = join(s.dir, name, 'home');
    mkdirSync(home, { recursive: true });
    return withSuiteEnv({
      PATH: process.env.PATH ?? '', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C',
      GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com',
      LEDGER_STATE_DIR: join(s.dir, name, 'state'),
    });
  };
  const run = (cmd: string, args: string[], cwd: string, env: Record<string, string>): Sh => {
    const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const clone = (name: string, first = false): Clone => {
    const env = baseEnv(name);
    const dir = join(s.dir, name, 'proj');
    const git = (args: string[]) => {
      const r = run('git', args, dir, env);
      if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    if (first) {
      const r = run('git', ['init', '-q', '--bare', '-b', 'main', bare], s.dir, env);
      if (r.code !== 0) throw new Error(r.stderr);
      mkdirSync(dir, { recursive: true });
      git(['init', '-q', '-b', 'main']);
      git(['remote', 'add', 'origin', bare]);
    } else {
      const r = run('git', ['clone', '-q', bare, dir], s.dir, env);
      if (r.code !== 0) throw new Error(r.stderr);
    }
    const ledger = (args: string[]) => run(process.execPath, [BIN, ...args], dir, env);
    const must = (args: string[]) => {
      const r = ledger(args);
      if (r.code !== 0) throw new Error(`ledger ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    return { dir, env, ledger, must, git };
  };
  return { root: s.dir, clone };
}

/** The ledger's two files, the views and the trust file, to prove a refusal changed nothing. */
function state(c: Clone): Record<string, string | null> {
  const read = (p: string) => (existsSync(join(c.dir, p)) ? readFileSync(join(c.dir, p)).toString('base64') : null);
  return Object.fromEntries(['.ledger/records.jsonl', '.ledger/HEAD', 'HANDOFF.md', 'HANDOFF.yml', 'keys/trust.json', 'keys/harness.key'].map((p) => [p, read(p)]));
}

/** A refusal: the exit code, exactly one line on stderr, and nothing changed. */
function refused(c: Clone, args: string[], code: number): string {
  const before = state(c);
  const r = c.ledger(args);
  expect(r.code, r.stderr + r.stdout).toBe(code);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(state(c)).toEqual(before);
  return r.stderr;
}

function auditPasses(...clones: Clone[]): void {
  for (const c of clones) {
    c.must(['sync']);
    const r = c.ledger(['audit', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).ok).toBe(true);
  }
}

/**
 * The team and its first machine: m1 joins the empty remote (its key becomes the admin), commits
 * the trust file and starts an item. Every story begins here: built once per file and put back
 * before each test (`keep`: the remote, the clone, its HOME and state directory, at the same
 * paths), so each story still starts from a team no other test has touched.
 */
const firstTeam = keep(() => {
  const t = team();
  return { root: t.root, t, m1: firstMachine(t) };
});

/** The first machine: joins the empty remote (its key becomes the admin), commits the trust file. */
function firstMachine(t: ReturnType<typeof team>): Clone {
  const m1 = t.clone('m1', true);
  m1.must(['init', '--remote', 'origin', '--agent', 'claude']);
  const trust = JSON.parse(readFileSync(join(m1.dir, 'keys', 'trust.json'), 'utf8'));
  expect(trust.keys).toEqual([expect.objectContaining({ admin: true, agents: ['*'] })]);
  m1.git(['add', 'keys/trust.json', '.gitignore']);
  m1.git(['commit', '-q', '-m', 'pin the admin key']);
  m1.git(['push', '-q', 'origin', 'main']);
  m1.must(['start', 'fix-a', '--agent', 'claude', '--summary', 'first item']);
  return m1;
}

describe('when the key file is moved away (a lost key)', () => {
  it('the writer refuses a new, unauthorized key before anything is written, and the restored key writes on', async () => {
    const { t, m1 } = await firstTeam();
    const other = t.clone('reader');
    other.must(['init', '--remote', 'origin', '--agent', 'codex']);
    renameSync(join(m1.dir, 'keys', 'harness.key'), join(m1.dir, 'harness.key.moved'));

    // The hint says to restore the key first, and how a new one would be authorized.
    const missing = refused(m1, ['checkpoint', 'fix-a', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n'], 2);
    expect(missing).toMatch(/restore the key file/);
    expect(missing).toMatch(/ledger trust add/);

    // A new key, made as the old hint once said: the next write is refused (13), nothing written.
    m1.must(['keygen', '--out', 'keys/harness.key']);
    const err = refused(m1, ['note', 'fix-a', '--agent', 'claude', '--text', 'with the new key'], 13);
    expect(err).toMatch(/refusing to sign seq \d+ as agent "claude"/);
    expect(err).toMatch(/restore it first/);
    expect(err).toMatch(/ledger trust add \S+ --name machine-\S+ --agents claude --reason "new machine"/);

    // doctor names the key and how to authorize it (no record was signed by it).
    const doc = m1.ledger(['doctor', '--json', '--agent', 'claude']);
    const pin = JSON.parse(doc.stdout).checks.find((c: { name: string }) => c.name === 'signing key pinned');
    expect(pin.status).toBe('fail');
    expect(pin.fix).toMatch(/ledger trust add/);

    // The key restored: the writer goes on, and every clone audits clean.
    renameSync(join(m1.dir, 'keys', 'harness.key'), join(m1.dir, 'new.key'));
    renameSync(join(m1.dir, 'harness.key.moved'), join(m1.dir, 'keys', 'harness.key'));
    m1.must(['note', 'fix-a', '--agent', 'claude', '--text', 'with the restored key']);
    auditPasses(m1, other);
  });
});

describe("when a teammate clones the project (the committed trust file, no .ledger/)", () => {
  it('no hint suggests a new ledger, init refuses a second genesis, and the join prints the line an admin runs', async () => {
    const { t, m1 } = await firstTeam();
    const m2 = t.clone('m2');
    const trustBefore = readFileSync(join(m2.dir, 'keys', 'trust.json'));

    const st = m2.ledger(['status']);
    expect(st.code).toBe(2);
    expect(st.stderr).not.toMatch(/run `ledger init`(?! --remote)/);
    expect(st.stderr).toMatch(/ledger init --remote/);

    const no = refused(m2, ['init'], 2);
    expect(no).toMatch(/not making a new ledger/);
    expect(no).toMatch(/--new-ledger/);
    expect(existsSync(join(m2.dir, '.ledger'))).toBe(false);

    // Joining: the key is made, the trust file is left as committed, the line is printed.
    const joined = m2.must(['init', '--remote', 'origin', '--agent', 'codex']);
    const line = /^\s*(ledger trust add \S+ --name \S+ --agents codex --reason "new machine")$/m.exec(joined)?.[1];
    expect(line, joined).toBeDefined();
    expect(readFileSync(join(m2.dir, 'keys', 'trust.json'))).toEqual(trustBefore);
    expect(m2.git(['status', '--porcelain'])).toBe('');
    auditPasses(m1, m2);
  });
});

describe('when a second machine joins and is later retired', () => {
  it('its writes wait for the admin\'s record (no trust-file commit, no pull), the first machine keeps writing, and trust revoke retires it', async () => {
    const { t, m1 } = await firstTeam();
    const m2 = t.clone('m2');
    const joined = m2.must(['init', '--remote', 'origin', '--agent', 'codex']);
    const line = /^\s*ledger (trust add \S+ --name (\S+) --agents codex --reason "new machine")$/m.exec(joined)!;
    const name = line[2];
    const key = line[1].split(' ')[2];

    // Until an admin authorizes it, the new machine's writes are refused with that line.
    const waiting = refused(m2, ['start', 'fix-b', '--agent', 'codex', '--summary', 'second item'], 13);
    expect(waiting).toContain(line[0].trim());

    // Bad input to trust: one line, its exit code, nothing written.
    refused(m2, ['trust', 'add', 'not-a-key', '--name', 'x', '--agents', 'codex', '--reason', 'r'], 2);
    refused(m1, ['trust', 'add', key, '--name', 'x', '--agents', '*', '--reason', 'r'], 2);
    refused(m1, ['trust', 'revoke', 'nobody', '--reason', 'r'], 2);
    // A non-admin cannot authorize anyone (its own key is not even accepted yet): 13.
    refused(m2, ['trust', 'add', key, '--name', 'self', '--agents', 'codex', '--reason', 'r', '--agent', 'codex'], 13);

    // The admin runs the printed line on its own machine; m2 writes at its next command.
    expect(line[0].trim()).toBe(`ledger trust add ${key} --name ${name} --agents codex --reason "new machine"`);
    m1.must(['trust', 'add', key, '--name', name, '--agents', 'codex', '--reason', 'new machine']);
    m2.must(['start', 'fix-b', '--agent', 'codex', '--summary', 'second item']);
    expect(m2.git(['status', '--porcelain', 'keys'])).toBe('');
    // Its key signs only for its agents.
    refused(m2, ['note', 'fix-b', '--agent', 'claude', '--text', 'as another agent'], 13);

    // The first machine is not blocked by the second one's records.
    m1.must(['note', 'fix-a', '--agent', 'claude', '--text', 'after m2 joined']);
    const doc = JSON.parse(m1.ledger(['doctor', '--json']).stdout);
    expect(doc.checks.filter((c: { status: string }) => c.status === 'fail')).toEqual([]);
    const listed = JSON.parse(m1.must(['trust', 'list', '--json'])).keys;
    expect(listed.find((k: { name: string }) => k.name === name)).toMatchObject({ source: 'record', agents: ['codex'], added: { by: 'harness' } });

    // Retired: from the revocation on, its writes are refused; the first machine goes on.
    m1.must(['trust', 'revoke', name, '--reason', 'machine retired']);
    // (A refused write in a joined ledger still brings the local copy to the remote's: synced
    // first, so that the refusal can be shown to change nothing at all.)
    m2.must(['sync']);
    const retired = refused(m2, ['checkpoint', 'fix-b', '--agent', 'codex', '--done', 'd', '--state', 's', '--next', 'n'], 13);
    expect(retired).toMatch(/revoked at seq \d+/);
    m1.must(['note', 'fix-a', '--agent', 'claude', '--text', 'after m2 retired']);
    auditPasses(m1, m2);
  });
});

describe('when a clone makes a second ledger on purpose (--new-ledger)', () => {
  it('doctor does not call the project healthy', async () => {
    const { t, m1 } = await firstTeam();
    const m3 = t.clone('m3');
    m3.must(['init', '--new-ledger']);
    const doc = m3.ledger(['doctor', '--json']);
    expect(doc.code).not.toBe(0);
    const one = JSON.parse(doc.stdout).checks.find((c: { name: string }) => c.name === 'one ledger');
    expect(one).toMatchObject({ status: 'fail' });
    expect(one.fix).toMatch(/ledger init --remote origin/);
    auditPasses(m1);
  });
});
