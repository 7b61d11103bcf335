// Issue 27's hostile review, replayed against the documented CI job (docs/across-machines.md):
// three clones of a bare remote (the laptop that writes, a clone with push access and no key,
// fresh CI runners), a real witness on 127.0.0.1 named in the committed keys/tlog-policy. The
// laptop finishes a handoff and then revokes it; every publication goes to the witness. Someone
// with push access and no key moves refs/handoff/ledger back to before the revocation. A fresh
// runner with only the trust file and the policy runs the job: refused (exit 14) at its first
// ledger step, nothing deployed, no ledger left on the runner, the remote not written. Before the
// rewind, and after the ref is put back, the same job behaves as it always did.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ciSteps, team } from './ci-team.js';

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

const REF = 'refs/handoff/ledger';

describe('when someone with push access and no key moves the shared ref back to before a revocation', () => {
  it('a fresh runner\'s CI job is refused at the join (exit 14): nothing deployed, nothing written; the true ref still holds at the gate', async () => {
    const t = await team();
    cleanup = t.cleanup;
    const refOf = () => t.must(t.bare, t.lenv, `git --git-dir=${t.bare} rev-parse ${REF}`).trim();
    t.must(t.laptop, t.lenv, 'ledger start migrate_schema_17 --summary "migrate the schema to 17"');
    const fin = JSON.parse(t.must(t.laptop, t.lenv, 'ledger finish migrate_schema_17 --done "migration written" --state "applied on staging" --next "deploy it" --outcome success --invariant tests=ok --json'));
    // Each publication went to the witness, and its cosignature was published beside the checkpoint.
    const published = t.must(t.bare, t.lenv, `git --git-dir=${t.bare} cat-file blob ${REF}:checkpoint`);
    expect(published.split('\n').filter((l) => l.startsWith('— witness.test/w1 '))).toHaveLength(1);
    const beforeRevoke = refOf();

    t.must(t.laptop, t.lenv, `ledger revoke ${fin.id} --reason "ran against staging, not prod"`);
    const truth = refOf();
    expect(truth).not.toBe(beforeRevoke);

    // The attacker's clone: push access, no key, plain git.
    const attacker = join(t.laptop, '..', '..', 'attacker');
    t.must(t.bare, t.lenv, `git clone -q ${t.bare} ${attacker}`);
    t.must(attacker, t.lenv, `git fetch -q origin ${REF}:${REF} && git push -q --force origin ${beforeRevoke}:${REF}`);
    expect(refOf()).toBe(beforeRevoke);

    const r = t.runner();
    const job = r.job();
    expect(job.code, JSON.stringify(job.last)).toBe(14);
    expect(job.last.step).toMatch(/^ledger init --remote .*--policy keys\/tlog-policy/);
    const err = job.last.r.stderr.trim().split('\n');
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/not witnessed: witness w1 has cosigned \d+ records of this ledger, more than the \d+ here/);
    expect(t.deploys(r.home)).toBe('');
    expect(existsSync(join(r.dir, '.ledger'))).toBe(false);
    expect(existsSync(join(r.env.LEDGER_STATE_DIR, 'remote'))).toBe(false);
    expect(refOf()).toBe(beforeRevoke);
    // The gate step alone on that runner (a recipe without the join) has no ledger to pass.
    const gate = ciSteps().find((s) => /^ledger gate /.test(s))!;
    expect(t.sh(r.dir, r.env, gate).code).not.toBe(0);
    expect(t.deploys(r.home)).toBe('');

    // The ref put back: the next fresh runner joins, and holds at the gate for the revocation.
    t.must(attacker, t.lenv, `git push -q --force origin ${truth}:${REF}`);
    const r2 = t.runner();
    const held = r2.job();
    expect(held.code, JSON.stringify(held.last)).toBe(20);
    expect(held.last.r.stdout.split('\n')[0]).toMatch(/revoked/);
    expect(t.deploys(r2.home)).toBe('');
  });

  it('a runner that joined earlier is refused by its gate (14) when the ref is moved back to the state it joined at', async () => {
    const t = await team();
    cleanup = t.cleanup;
    const refOf = () => t.must(t.bare, t.lenv, `git --git-dir=${t.bare} rev-parse ${REF}`).trim();
    t.must(t.laptop, t.lenv, 'ledger start migrate_schema_17 --summary "migrate the schema to 17"');
    const fin = JSON.parse(t.must(t.laptop, t.lenv, 'ledger finish migrate_schema_17 --done d --state s --next n --outcome success --invariant tests=ok --json'));
    const joinedAt = refOf();
    const r = t.runner();
    const [joinStep, gateStep] = ciSteps().filter((s) => /^ledger (init|gate) /.test(s));
    expect(t.sh(r.dir, r.env, joinStep).code).toBe(0);
    t.must(t.laptop, t.lenv, `ledger revoke ${fin.id} --reason "withdrawn"`);
    t.must(t.bare, t.lenv, `git --git-dir=${t.bare} update-ref ${REF} ${joinedAt}`);
    const records = readFileSync(join(r.dir, '.ledger', 'records.jsonl'));
    const gate = t.sh(r.dir, r.env, gateStep);
    expect(gate.code, gate.stderr + gate.stdout).toBe(14);
    expect(gate.stderr).toMatch(/not witnessed/);
    expect(readFileSync(join(r.dir, '.ledger', 'records.jsonl'))).toEqual(records);
    expect(refOf()).toBe(joinedAt);
    expect(t.deploys(r.home)).toBe('');
  });
});
