// `ledger doctor` says what to fix, changes nothing, and exits 3 only when something must be fixed.
import { appendFileSync, chmodSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toBase64url } from '../src/canonical.js';
import { readSecretKey } from '../src/keys/key-file.js';
import { createSigner } from '../src/sign.js';
import { initProject, keep, runLedger, scratch, snapshot, spawnLedgerSync } from './helpers/cli.js';
import { git, gitRepo, statusPaths } from './helpers/git-repo.js';
import { withTorsion } from './helpers/curve.js';

let p: Awaited<ReturnType<typeof initProject>>;

async function doctor(extra: string[] = []) {
  const before = snapshot(p.ledger);
  const r = await runLedger(['doctor', '--json', ...extra], { cwd: p.dir });
  expect(snapshot(p.ledger)).toEqual(before); // read-only, always
  const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; status: string; detail: string; fix?: string }[] };
  return { code: r.code, report, byName: (n: string) => report.checks.filter((c) => c.name === n) };
}

describe('ledger doctor', () => {
  // Its own project per test (the git repository's tests below make theirs).
  beforeEach(async () => {
    p = await initProject();
  });
  afterEach(() => p.cleanup());

  it('calls a fresh project healthy (exit 0)', async () => {
    const d = await doctor();
    expect(d.code).toBe(0);
    expect(d.report.checks.every((c) => c.status === 'ok')).toBe(true);
    expect(d.report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['key file', 'trust file', 'HEAD', 'unpublished bytes', 'HEAD key pinned', 'signing key pinned']));
  });

  it('fails a key file others can read, with the chmod to run (exit 3)', async () => {
    chmodSync(join(p.dir, 'keys/harness.key'), 0o640);
    const d = await doctor();
    expect(d.code).toBe(3);
    expect(d.byName('key file')[0]).toMatchObject({ status: 'fail', fix: expect.stringMatching(/chmod 600/) });
  });

  it('warns about unpublished bytes past HEAD and names ledger recover (exit 0)', async () => {
    appendFileSync(join(p.ledger, 'records.jsonl'), '{"torn":');
    const d = await doctor();
    expect(d.code).toBe(0);
    expect(d.byName('unpublished bytes')[0]).toMatchObject({ status: 'warn', fix: expect.stringMatching(/ledger recover/) });
  });

  it('fails a signing key that the trust file does not pin, and prints the entry to add', async () => {
    const keygen = await runLedger(['keygen', '--out', 'keys/other.key', '--json'], { cwd: p.dir });
    expect(keygen.code).toBe(0);
    const d = await doctor(['--key', 'keys/other.key']);
    expect(d.code).toBe(3);
    expect(d.byName('signing key pinned')[0]).toMatchObject({ status: 'fail', fix: expect.stringMatching(/"valid_from_seq":1/) });
  });

  it('suggests an entry from the first seq a key signed, when a writer from before its own check used it (issue 25)', async () => {
    expect((await runLedger(['keygen', '--out', 'keys/other.key'], { cwd: p.dir })).code).toBe(0);
    // Written under another trust file that pinned it (as a writer before its own check would
    // have written with no pin at all): seq 1 and 2.
    const trust = JSON.parse(readFileSync(join(p.dir, 'keys/trust.json'), 'utf8'));
    const otherKey = createSigner(readSecretKey(join(p.dir, 'keys/other.key')).seed).publicKey;
    trust.keys.push({ name: 'other', alg: 'ed25519', key: otherKey, agents: ['*'], valid_from_seq: 0, revoked_at_seq: null });
    writeFileSync(join(p.dir, 'loose.json'), JSON.stringify(trust));
    for (const slug of ['a', 'b']) {
      const w = await runLedger(['start', slug, '--summary', 's', '--agent', 'claude', '--key', 'keys/other.key', '--trust', 'loose.json'], { cwd: p.dir });
      expect(w.code, w.stderr).toBe(0);
    }
    const d = await doctor(['--key', 'keys/other.key']);
    expect(d.code).toBe(3);
    const pin = d.byName('signing key pinned')[0];
    expect(pin.detail).toMatch(/signed records from seq 1 already/);
    expect(pin.fix).toMatch(/"valid_from_seq":1/);
    expect(pin.fix).not.toMatch(/ledger trust add/);
  });

  it('fails a pinned key that is not in the prime-order subgroup (the check the trust parser leaves to doctor)', async () => {
    const trustPath = join(p.dir, 'keys/trust.json');
    const trust = JSON.parse(readFileSync(trustPath, 'utf8'));
    const raw = Buffer.from(trust.keys[0].key, 'base64url');
    trust.keys.push({ ...trust.keys[0], name: 'mixed', key: toBase64url(withTorsion(new Uint8Array(raw), 1)) });
    writeFileSync(trustPath, JSON.stringify(trust));
    const d = await doctor();
    expect(d.code).toBe(3);
    expect(d.byName('trust file').find((c) => c.status === 'fail')?.detail).toMatch(/"mixed" is not in the prime-order subgroup/);
  });

  it('fails when there is no trust file', async () => {
    const d = await doctor(['--trust', 'nowhere.json']);
    expect(d.code).toBe(3);
    expect(d.byName('trust file')[0].detail).toMatch(/no trust file/);
  });

  it('fails a HEAD whose tail is not the last line, and points at ledger audit', async () => {
    const r = await runLedger(['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--agent', 'a'], { cwd: p.dir });
    expect(r.code).toBe(0);
    const lines = readFileSync(join(p.ledger, 'records.jsonl'), 'utf8').split('\n');
    writeFileSync(join(p.ledger, 'records.jsonl'), [lines[1], lines[0], ''].join('\n'));
    const d = await doctor();
    expect(d.code).toBe(3);
    expect(d.byName('HEAD')[0]).toMatchObject({ status: 'fail', fix: expect.stringMatching(/ledger audit/) });
  });

  it('warns when a view was edited by hand, and names ledger render', async () => {
    const env = { LEDGER_AGENT: 'claude' };
    const s = await runLedger(['start', 'fix-tz', '--summary', 'fix toLocal()'], { cwd: p.dir, env });
    expect(s.code, s.stderr).toBe(0);
    appendFileSync(join(p.dir, 'HANDOFF.md'), '\nall done, trust me\n');
    const d = await doctor();
    expect(d.code).toBe(0);
    expect(d.byName('views')[0]).toMatchObject({ status: 'warn', detail: expect.stringMatching(/HANDOFF.md is edited/), fix: expect.stringMatching(/ledger render/) });
  });

  it('prints one line per check and a verdict line in text mode', async () => {
    const r = await runLedger(['doctor'], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('healthy');
  });
});

// Issue 14.2: one `git add -A` must never commit the signing key. Real repositories, real git.
describe('when the project is a git repository', () => {
  let repo: string;
  // The repository with its ledger, made once (git, then `ledger init`, which asks git about the
  // key and the ledger) and put back at the same path before each test (helpers/cli.ts `keep`):
  // each test still starts from a project no other test has touched.
  const initialised = keep(async () => {
    const root = realpathSync(scratch('ledger-doctor-git-').dir);
    const made = gitRepo(join(root, 'repo'));
    const r = await runLedger(['init'], { cwd: made });
    expect(r.code, r.stderr).toBe(0);
    return { root, repo: made };
  });
  beforeEach(async () => {
    ({ repo } = await initialised());
  });

  async function doctorIn(cwd: string) {
    const before = { ledger: snapshot(join(repo, '.ledger')), status: git(repo, 'status', '--porcelain=v1') };
    const r = await runLedger(['doctor', '--json'], { cwd });
    expect({ ledger: snapshot(join(repo, '.ledger')), status: git(repo, 'status', '--porcelain=v1') }).toEqual(before);
    const report = JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string; fix?: string }[] };
    return { code: r.code, check: (n: string) => report.checks.find((c) => c.name === n) };
  }

  it('after init, `git add -A` stages the trust file and the ignore rules but not the key or the ledger; doctor is healthy', async () => {
    git(repo, 'add', '-A');
    expect(statusPaths(repo).sort()).toEqual(['.gitignore', 'keys/trust.json']);
    const d = await doctorIn(join(repo, 'src'));
    expect(d.code).toBe(0);
    expect(d.check('key in git')).toMatchObject({ status: 'ok', detail: 'git ignores keys/harness.key' });
    expect(d.check('ledger in git')).toMatchObject({ status: 'ok' });
  });

  it('fails (exit 3) when the secret key is committed, and says to rotate it', async () => {
    git(repo, 'add', '-f', 'keys/harness.key');
    git(repo, 'commit', '-q', '-m', 'oops');
    const d = await doctorIn(repo);
    expect(d.code).toBe(3);
    expect(d.check('key in git')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/git tracks the secret key keys\/harness.key/), fix: expect.stringMatching(/git rm --cached keys\/harness.key.*new key/) });
  });

  it('fails (exit 3) when the next `git add -A` would commit the key (the ignore rules were taken out)', async () => {
    writeFileSync(join(repo, '.gitignore'), '');
    const d = await doctorIn(repo);
    expect(d.code).toBe(3);
    expect(d.check('key in git')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/would commit the secret key/), fix: expect.stringContaining('/keys/*.key') });
    expect(d.check('ledger in git')).toMatchObject({ status: 'warn', fix: expect.stringContaining('/.ledger/') });
  });

  it('warns (exit 0) on a tracked ledger directory: merge conflicts and rollbacks by checkout', async () => {
    git(repo, 'add', '-f', '.ledger');
    git(repo, 'commit', '-q', '-m', 'commit the ledger');
    const d = await doctorIn(repo);
    expect(d.code).toBe(0);
    expect(d.check('ledger in git')).toMatchObject({ status: 'warn', detail: expect.stringMatching(/git tracks files in \.ledger\/.*merge conflicts.*git checkout/), fix: expect.stringMatching(/git rm -r --cached \.ledger/) });
  });

  it('fails closed (exit 3) when git cannot be run to say whether the key would be committed', () => {
    const noGit = join(repo, '..', 'empty-path');
    mkdirSync(noGit);
    const r = spawnLedgerSync(['doctor', '--json'], { cwd: repo, env: { PATH: noGit } });
    expect(r.code).toBe(3);
    const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
    expect(checks.find((c) => c.name === 'key in git')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/cannot tell whether git would commit/) });
  });
});
