// One scenario per failure mode the causal-handoff essay asks to be attacked with
// (seeds/000: "What breaks this model first?"), each through the CLI as a script would use it.
import { appendFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import { digestSource } from '../../src/causal/evidence.js';
import type { Draft } from '../../src/record.js';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const OP = 'migrate_schema_17';

describe('retry after ambiguous completion (timeout, then success under a new execution)', () => {
  it('holds on the timeout, passes on the re-drive, and a retried append is the same record', async () => {
    p = await project();
    p.write('db/schema.sql', 'create table a (id int);\n');
    await p.id(handoff(OP, 'execution_001', 'timeout'));
    let g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('outcome_accepted');
    expect(g.r.reasons.outcome_accepted[0]).toContain('timeout');

    const args = handoff(OP, 'execution_002', 'success', '--evidence', 'schema=db/schema.sql', '--invariant', 'tests=ok:12 passed');
    const id = await p.id(args);
    g = await p.gate(OP);
    expect(g.code).toBe(0);
    expect(g.r.handoff?.id).toBe(id);
    expect(g.r.handoff?.execution_id).toBe('execution_002');

    // The producer did not hear back and sends the same handoff again: same id, nothing appended.
    const before = p.snap();
    const retry = await p.run([...args, '--json']);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ id, existing: true });
    expect(retry.stderr).toContain('nothing appended');
    expect(p.snap()).toEqual(before);

    // A "retry" that claims something else is not a retry: refused, naming the record that exists.
    const changed = await p.run(handoff(OP, 'execution_002', 'success', '--invariant', 'tests=ok:13 passed'));
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain(id);
    expect(p.snap()).toEqual(before);
  });

  it('the same intent retried is one intent, and a second execution is not a second operation', async () => {
    p = await project();
    const intent = ['append', 'intent', '--op', OP, '--exec', 'execution_002', '--action', 'apply migration 17'];
    const a = await p.id(intent);
    const b = await p.id(intent);
    expect(b).toBe(a);
    expect(p.records().filter((r) => r.kind === 'intent')).toHaveLength(1);
    await p.id(handoff(OP, 'execution_001', 'timeout'));
    await p.id(handoff(OP, 'execution_002', 'success'));
    const g = await p.gate(OP);
    expect(g.code).toBe(0);
    expect(g.r.conflicts).toEqual([]);
  });
});

describe('a torn handoff write', () => {
  it('bytes past HEAD are not a handoff: the gate holds, and the retry publishes it', async () => {
    p = await project();
    const args = handoff(OP, 'execution_002', 'success');
    // Write the handoff in a scratch ledger to get a real line, then tear it onto ours.
    const id = await p.id(['append', 'handoff', '--op', 'other', '--exec', 'e', '--outcome', 'success']);
    const records = join(p.ledger, 'records.jsonl');
    const full = readFileSync(records, 'utf8');
    const lastLine = full.trim().split('\n').pop()!;
    const torn = lastLine.replace('"other"', `"${OP}"`).slice(0, 120); // a crash mid-write
    appendFileSync(records, torn);
    const size = statSync(records).size;

    const g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reasons.handoff_valid.join(' ')).toContain('has no handoff');
    expect(statSync(records).size).toBe(size); // a reader never repairs or publishes

    // The producer retries: the torn bytes go to quarantine/ and the handoff is published once.
    const retried = await p.run([...args, '--json']);
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain('unpublished bytes');
    expect(JSON.parse(retried.stdout).existing).toBe(false);
    expect((await p.gate(OP)).code).toBe(0);
    expect(id).toMatch(/^sha256:/);
  });
});

describe('two agents producing conflicting successor states', () => {
  it('holds naming both handoffs, until one supersedes the other', async () => {
    p = await project();
    p.write('out/a.txt', 'state A\n');
    p.write('out/b.txt', 'state B\n');
    const a = await p.id(handoff(OP, 'exec_alice', 'success', '--evidence', 'result=out/a.txt'), { LEDGER_AGENT: 'alice' });
    const b = await p.id(handoff(OP, 'exec_bob', 'success', '--evidence', 'result=out/b.txt'), { LEDGER_AGENT: 'bob' });
    const g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('outcome_accepted');
    expect(g.r.conflicts).toHaveLength(1);
    expect([g.r.conflicts[0].a, g.r.conflicts[0].b].sort()).toEqual([a, b].sort());
    const text = await p.run(['gate', OP]);
    expect(text.stdout).toContain(a.slice(0, 19));
    expect(text.stdout).toContain(b.slice(0, 19));

    // Bob's execution reconciles: it supersedes Alice's, and the conflict is resolved.
    await p.id(handoff(OP, 'exec_bob_2', 'success', '--evidence', 'result=out/b.txt', '--supersedes', a), { LEDGER_AGENT: 'bob' });
    const after = await p.gate(OP);
    expect(after.r.conflicts).toEqual([]);
    expect(after.code).toBe(0);
  });

  it('two executions that agree are one state, not a conflict', async () => {
    p = await project();
    p.write('out/a.txt', 'same\n');
    await p.id(handoff(OP, 'e1', 'success', '--evidence', 'result=out/a.txt'));
    await p.id(handoff(OP, 'e2', 'success', '--evidence', 'result=out/a.txt'));
    expect((await p.gate(OP)).code).toBe(0);
  });

  it('refuses --supersedes naming a record that is not a handoff of the operation', async () => {
    p = await project();
    const other = await p.id(handoff('other_op', 'e1', 'success'));
    const before = p.snap();
    const r = await p.run(handoff(OP, 'e1', 'success', '--supersedes', other));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a handoff or finish of migrate_schema_17');
    expect(p.snap()).toEqual(before);
  });
});

describe('a consumer acting on superseded state', () => {
  it('holds when the handoff the consumer holds is no longer the latest, or the state moved on', async () => {
    p = await project();
    p.write('db/schema.sql', 'v1\n');
    const h1 = await p.id(handoff(OP, 'e1', 'success', '--evidence', 'schema=db/schema.sql'));
    expect((await p.gate(OP, '--handoff', h1)).code).toBe(0);

    p.write('db/schema.sql', 'v2\n');
    const h2 = await p.id(handoff(OP, 'e2', 'success', '--evidence', 'schema=db/schema.sql', '--supersedes', h1));
    const stale = await p.gate(OP, '--handoff', h1);
    expect(stale.code).toBe(20);
    expect(stale.r.failed_term).toBe('handoff_valid');
    expect(stale.r.reason).toContain('superseded');
    expect(stale.r.reason).toContain(h2.slice(0, 19));
    expect((await p.gate(OP, '--handoff', h2)).code).toBe(0);

    // Someone puts the old state back: the latest handoff no longer describes what is there.
    p.write('db/schema.sql', 'v1\n');
    const reverted = await p.gate(OP);
    expect(reverted.code).toBe(20);
    expect(reverted.r.failed_term).toBe('state_current');
  });
});

describe('crash recovery after an external side effect', () => {
  it('an intent with no outcome is pending and the gate holds; the outcome settles it', async () => {
    p = await project();
    await p.id(['append', 'intent', '--op', OP, '--exec', 'execution_001', '--action', 'apply migration 17 to production']);
    // ... the process crashes here, after the side effect and before any handoff.
    const pending = await p.run(['pending', '--json']);
    expect(pending.code).toBe(0);
    const list = JSON.parse(pending.stdout).pending;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ logical_operation_id: OP, execution_id: 'execution_001', kind: 'intent', what: 'apply migration 17 to production', problem: null });
    expect(list[0].age_ms).toBeGreaterThanOrEqual(0);
    expect((await p.run(['pending'])).stdout).toContain('execution_001');

    let g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reason).toContain('see `ledger pending`');

    // Recovery checks what happened and records it under a new execution of the same operation.
    await p.id(handoff(OP, 'execution_002', 'success', '--invariant', 'applied=ok:checked by hand'));
    expect(JSON.parse((await p.run(['pending', '--json'])).stdout).pending).toEqual([]);
    expect((await p.gate(OP)).code).toBe(0);

    // A later intent reopens the operation: the side effect is in flight again.
    await p.id(['append', 'intent', '--op', OP, '--exec', 'execution_003', '--action', 're-apply']);
    g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('state_current');
    expect(g.r.reason).toContain('reopened');
    expect(JSON.parse((await p.run(['pending', '--json', '--op', OP])).stdout).count).toBe(1);
  });
});

describe('revocation after publication', () => {
  it('a revoked handoff holds from then on; revoking again is idempotent or refused', async () => {
    p = await project();
    const h = await p.id(handoff(OP, 'e1', 'success'));
    expect((await p.gate(OP)).code).toBe(0);
    const rv = await p.id(['revoke', h, '--reason', 'tested against the wrong database']);
    const g = await p.gate(OP);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.revoked_by).toEqual([rv]);
    expect(g.r.reason).toContain('wrong database');

    const before = p.snap();
    const again = await p.run(['revoke', h, '--reason', 'tested against the wrong database', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: rv, existing: true });
    const other = await p.run(['revoke', h, '--reason', 'another story']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(rv);
    expect(p.snap()).toEqual(before);

    // A new handoff is a new claim: the gate judges it on its own.
    await p.id(handoff(OP, 'e2', 'success', '--supersedes', h));
    expect((await p.gate(OP)).code).toBe(0);
  });
});

describe('duplicate delivery', () => {
  it('a consumer consumes a handoff once; another consumer may consume it too', async () => {
    p = await project();
    const h = await p.id(handoff(OP, 'e1', 'success'));
    const first = await p.gate(OP, '--consume-as', 'deploy_api_18');
    expect(first.code).toBe(0);
    expect(first.r.consume?.id).toMatch(/^sha256:/);
    const consume = p.records().find((r) => r.kind === 'consume')!;
    expect(consume).toMatchObject({ consumer: 'deploy_api_18', handoff: h, logical_operation_id: OP });
    expect((consume.seen_head as { seq: number }).seq).toBe(first.r.head.seq);

    const before = p.snap();
    const second = await p.gate(OP, '--consume-as', 'deploy_api_18');
    expect(second.code).toBe(20);
    expect(second.r.failed_term).toBe('handoff_valid');
    expect(second.r.reason).toContain('duplicate delivery');
    expect(second.r.consume?.id).toBeNull();
    expect(p.snap()).toEqual(before);

    const other = await p.gate(OP, '--consume-as', 'audit_bot');
    expect(other.code).toBe(0);
    // Consuming is not a gate of its own: a plain gate still passes.
    expect((await p.gate(OP)).code).toBe(0);
  });

  it('a consume record cannot be appended around the gate', async () => {
    p = await project();
    const h = await p.id(handoff(OP, 'e1', 'success'));
    const before = p.snap();
    const line = JSON.stringify({ kind: 'consume', logical_operation_id: OP, consumer: 'x', handoff: h, seen_head: { seq: 1, tail: h } });
    const r = await p.run(['append', '--batch'], { stdin: line + '\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--consume-as');
    expect(p.snap()).toEqual(before);
  });
});

describe('a long-running consumer that outlives its state', () => {
  it('holds when the handoff is older than --max-age, or its evidence changed since', async () => {
    p = await project();
    // A ledger whose handoff was written three hours ago (the clock is injected, not waited for).
    const past = new Date(Date.now() - 3 * 3_600_000);
    rmSync(p.ledger, { recursive: true });
    const key = join(p.dir, 'keys/harness.key');
    const { ledger } = Ledger.init({ dir: p.ledger, key, agent: 'alice', now: () => past });
    p.write('db/schema.sql', 'v1\n');
    const schema = digestSource('db/schema.sql', { root: p.dir, ledgerDir: p.ledger });
    ledger.append({ kind: 'handoff', agent: 'alice', logical_operation_id: OP, execution_id: 'e1', outcome: 'success', evidence: { schema }, invariants: {}, depends_on: [] } as Draft);

    const old = await p.gate(OP, '--max-age', '1h');
    expect(old.code).toBe(20);
    expect(old.r.failed_term).toBe('state_current');
    expect(old.r.reason).toMatch(/3h old .*--max-age is 60m|3h old .*--max-age is 1h/);
    expect((await p.gate(OP, '--max-age', '24h')).code).toBe(0);

    // Within its age, but the state it was bootstrapped from is gone.
    p.write('db/schema.sql', 'v2\n');
    const changed = await p.gate(OP, '--max-age', '24h');
    expect(changed.code).toBe(20);
    expect(changed.r.failed_term).toBe('state_current');
    expect(changed.r.evidence[0]).toMatchObject({ name: 'schema', current: false });
  });
});
