// The causal-handoff essay's migration story, end to end, as a reader can follow it (issue 14,
// "Tests that must exist"; SPEC 9):
//
//   logical_operation_id: migrate_schema_17
//   execution_001 -> timeout
//   execution_002 -> success  -> verified handoff -> deploy_api_18
//
// In a real git repository with the shipped binary. The migrator records an intent before each
// side effect, a timeout, then the re-drive's success with its evidence (`file:db/schema.sql`) and
// invariants. The deployer gates on the migration: it proceeds; another session commits a schema
// change, and the gate holds on state_current; the change is reverted, and it proceeds; the
// deployer consumes it exactly once, deploys, and records deploy_api_18, which depends on it. A
// revocation after publication holds both. Then each bullet of the essay's "what breaks this
// model first", where the tool addresses it, as its own short scenario.
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, scenario, type Scenario } from './kit.js';

let sc: Scenario;
afterEach(() => sc?.cleanup());

const OP = 'migrate_schema_17';
const SCHEMA = 'create table accounts (id bigint primary key);\n';
const FILES = {
  'db/schema.sql': SCHEMA,
  'db/seed.sql': 'insert into accounts values (1);\n',
  'api/server.js': 'export const version = 18;\n',
};
const records = () => readFileSync(join(sc.ledgerDir, 'records.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
const TERMS = ['handoff_valid', 'outcome_accepted', 'invariants_satisfied', 'state_current', 'dependencies_true'];

/** `ledger gate ...--json`: exit 0 (proceed) or 20 (hold), and the decision. */
function gate(...args: string[]): { code: number; r: Record<string, any> } {
  const run = sc.ledger(['gate', ...args, '--json']);
  expect([0, 20], `gate ${args.join(' ')}: ${run.stderr}`).toContain(run.code);
  const r = JSON.parse(run.stdout);
  expect(r.ok).toBe(run.code === 0);
  return { code: run.code, r };
}

const migrator = (exec: string, outcome: string, ...more: string[]) =>
  sc.ok(['append', 'handoff', '--op', OP, '--exec', exec, '--outcome', outcome, '--agent', 'migrator', ...more]);
const intent = (exec: string, action: string) =>
  sc.ok(['append', 'intent', '--op', OP, '--exec', exec, '--action', action, '--agent', 'migrator']);
const SUCCESS = ['--evidence', 'schema=file:db/schema.sql', '--invariant', 'tests=ok:212 passed', '--invariant', 'accounts_pk=ok:id is the primary key'];
const DEPLOYER = ['--require-invariant', 'tests', '--max-age', '24h'];

describe('the migration story: migrate_schema_17, then deploy_api_18', () => {
  it('proceeds only while every term holds, consumes once, and holds after a revocation', () => {
    sc = scenario('billing', FILES);

    // execution_001: an intent before the side effect, then a timeout. Nothing may act on it yet.
    intent('execution_001', 'apply db/schema.sql to production');
    migrator('execution_001', 'timeout', '--note', 'lost the connection after 30s');
    let g = gate(OP, ...DEPLOYER);
    expect([g.code, g.r.failed_term]).toEqual([20, 'outcome_accepted']);
    expect(g.r.reason).toContain('the latest outcome of migrate_schema_17 is timeout (execution_001');
    // an arriving agent sees the timeout that nothing has resolved
    expect(sc.ok(['status']).unresolved_outcomes).toMatchObject([{ logical_operation_id: OP, execution_id: 'execution_001', outcome: 'timeout' }]);

    // execution_002: the scheduler re-drives the same intent under a new execution id, and it succeeds.
    intent('execution_002', 'apply db/schema.sql to production (re-drive)');
    const h = migrator('execution_002', 'success', ...SUCCESS);
    expect(records().at(-1)).toMatchObject({ kind: 'handoff', logical_operation_id: OP, execution_id: 'execution_002', outcome: 'success',
      evidence: { schema: { source: 'file:db/schema.sql' } }, invariants: { tests: { ok: true, detail: '212 passed' }, accounts_pk: { ok: true } }, depends_on: [] });
    expect(sc.ok(['status']).unresolved_outcomes).toEqual([]);

    // The deployer asks whether it may act: every term holds.
    g = gate(OP, ...DEPLOYER);
    expect(g.code).toBe(0);
    expect(g.r).toMatchObject({ failed_term: null, handoff: { id: h.id, execution_id: 'execution_002', outcome: 'success' } });
    expect(Object.keys(g.r.terms)).toEqual(TERMS);
    expect(Object.values(g.r.terms)).toEqual([true, true, true, true, true]);

    // Before it acts, another session changes the schema and commits it: the event is genuine,
    // the state it represented is stale.
    sc.write('db/schema.sql', SCHEMA + 'alter table accounts add column email text;\n');
    const other = sc.commit('schema: accounts.email (another session)');
    g = gate(OP, ...DEPLOYER);
    expect([g.code, g.r.failed_term]).toEqual([20, 'state_current']);
    expect(g.r.terms).toEqual({ handoff_valid: true, outcome_accepted: true, invariants_satisfied: true, state_current: false, dependencies_true: true });
    expect(g.r.reason).toMatch(/^state_current: evidence schema: file:db\/schema\.sql has changed/);
    const text = sc.ledger(['gate', OP, ...DEPLOYER]);
    expect(text.code).toBe(20);
    expect(text.stdout.split('\n')[0]).toMatch(/^hold: migrate_schema_17: state_current: evidence schema: file:db\/schema\.sql has changed/);
    expect(text.stdout).toContain('FAIL state_current');
    // a consumer that asks to consume now is refused the same way, and nothing is recorded
    const before = readFileSync(join(sc.ledgerDir, 'records.jsonl'));
    expect(sc.ledger(['gate', OP, ...DEPLOYER, '--consume-as', 'deployer']).code).toBe(20);
    expect(readFileSync(join(sc.ledgerDir, 'records.jsonl'))).toEqual(before);

    // The change is reverted (a real `git revert`): the handoff describes what is there again.
    git(sc.root, 'revert', '--no-edit', other);
    expect(sc.read('db/schema.sql')).toBe(SCHEMA);
    expect(gate(OP, ...DEPLOYER).code).toBe(0);

    // The deployer consumes it: a consume record, at the HEAD it decided on.
    const c = gate(OP, ...DEPLOYER, '--consume-as', 'deployer');
    expect(c.code).toBe(0);
    expect(c.r.consume).toMatchObject({ consumer: 'deployer', seq: c.r.head.seq + 1 });
    expect(records().at(-1)).toMatchObject({ kind: 'consume', agent: 'deployer', logical_operation_id: OP, consumer: 'deployer', handoff: h.id,
      seen_head: { seq: c.r.head.seq, tail: c.r.head.tail } });
    // The same delivery again is not permission again.
    const dup = gate(OP, ...DEPLOYER, '--consume-as', 'deployer');
    expect([dup.code, dup.r.failed_term]).toEqual([20, 'handoff_valid']);
    expect(records().filter((r) => r.kind === 'consume')).toHaveLength(1);

    // The deployer deploys and hands over deploy_api_18, which depends on the migration.
    const d = sc.ok(['append', 'handoff', '--op', 'deploy_api_18', '--exec', 'deploy_001', '--outcome', 'success', '--agent', 'deployer',
      '--evidence', 'api=file:api/server.js', '--invariant', 'smoke=ok:GET /health 200', '--depends-on', `${OP}:success`]);
    g = gate('deploy_api_18');
    expect(g.code).toBe(0);
    expect(g.r.handoff.id).toBe(d.id);
    expect(g.r.reasons.dependencies_true).toEqual(['its one dependency holds']);

    // A revocation after publication: the migration ran against staging, not production.
    const rev = sc.ok(['revoke', h.id, '--reason', 'the migration ran against staging, not production', '--agent', 'migrator']);
    expect(records().at(-1)).toMatchObject({ kind: 'revoke', target: h.id, reason: 'the migration ran against staging, not production' });
    g = gate(OP, ...DEPLOYER);
    expect([g.code, g.r.failed_term]).toEqual([20, 'handoff_valid']);
    expect(g.r.revoked_by).toEqual([rev.id]);
    const dep = gate('deploy_api_18');
    expect([dep.code, dep.r.failed_term]).toEqual([20, 'dependencies_true']);
    expect(dep.r.reason).toContain('migrate_schema_17:success does not hold: handoff_valid');

    // Through it all the chain audits clean: every decision was made on a verified ledger.
    expect(sc.ok(['audit']).failed_layer).toBeNull();
  });

  it('exactly once per operation: an identical re-drive is not consumed again; a failed deploy can be retried', () => {
    sc = scenario('billing', FILES);
    migrator('execution_001', 'timeout');
    const h = migrator('execution_002', 'success', ...SUCCESS);
    const first = gate(OP, ...DEPLOYER, '--consume-as', 'deployer');
    expect(first.code).toBe(0);

    // The scheduler did not hear back and re-drives the operation: same state, new execution.
    // A retry never invents new intent, so the deployer is not handed it again.
    const again = migrator('execution_003', 'success', ...SUCCESS);
    expect(again.id).not.toBe(h.id);
    const redrive = gate(OP, ...DEPLOYER, '--consume-as', 'deployer');
    expect([redrive.code, redrive.r.failed_term]).toEqual([20, 'handoff_valid']);
    expect(redrive.r.reason).toContain(`deployer already consumed ${OP} at seq ${first.r.consume.seq}`);
    expect(records().filter((r) => r.kind === 'consume')).toHaveLength(1);

    // The deploy itself failed (issue 14.13): the deployer says so, and may consume it again.
    const failed = sc.ok(['consume-failed', OP, '--consumer', 'deployer', '--reason', 'helm upgrade exited 1']);
    expect(failed).toMatchObject({ consume: { id: first.r.consume.id }, consumer: 'deployer', logical_operation_id: OP });
    expect(records().at(-1)).toMatchObject({ kind: 'consume_failed', consumer: 'deployer', consume: first.r.consume.id, reason: 'helm upgrade exited 1' });
    const retry = gate(OP, ...DEPLOYER, '--consume-as', 'deployer');
    expect(retry.code).toBe(0);
    // and then it is spent again
    expect(gate(OP, ...DEPLOYER, '--consume-as', 'deployer').code).toBe(20);
    // nobody else may report the deployer's failure
    sc.refused(['consume-failed', OP, '--consumer', 'deployer', '--reason', 'not mine', '--agent', 'mallory'], 2, 'INPUT_REFUSED');
  });
});

describe('what breaks this model first (the essay\'s bullets, where the tool addresses them)', () => {
  it('retry after ambiguous completion: held until a re-drive settles it; a retried append is the same record', () => {
    sc = scenario('billing', FILES);
    intent('execution_001', 'apply db/schema.sql to production');
    migrator('execution_001', 'ambiguous', '--note', 'the connection dropped after COMMIT was sent');
    expect(gate(OP).r.failed_term).toBe('outcome_accepted');
    expect(sc.ok(['status']).unresolved_outcomes).toMatchObject([{ execution_id: 'execution_001', outcome: 'ambiguous' }]);
    // the producer did not hear back and sends the same record again: same id, nothing appended
    const again = sc.ledger(['append', 'handoff', '--op', OP, '--exec', 'execution_001', '--outcome', 'ambiguous', '--agent', 'migrator',
      '--note', 'the connection dropped after COMMIT was sent', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).existing).toBe(true);
    // a "retry" that claims another outcome under the same execution is not a retry
    sc.refused(['append', 'handoff', '--op', OP, '--exec', 'execution_001', '--outcome', 'success', '--agent', 'migrator', ...SUCCESS], 2, 'INPUT_CONFLICT');
    migrator('execution_002', 'success', ...SUCCESS);
    expect(gate(OP).code).toBe(0);
    expect(sc.ok(['status']).unresolved_outcomes).toEqual([]);
  });

  it('two agents producing conflicting successor states: held naming both, until one supersedes the other', () => {
    sc = scenario('billing', FILES);
    const a = migrator('execution_002', 'success', ...SUCCESS);
    // another agent, on its own, also "completes" the migration, with other evidence
    const b = sc.ok(['append', 'handoff', '--op', OP, '--exec', 'execution_b1', '--outcome', 'success', '--agent', 'migrator-b',
      '--evidence', 'schema=file:db/schema.sql', '--evidence', 'seed=file:db/seed.sql']);
    const g = gate(OP);
    expect([g.code, g.r.failed_term]).toEqual([20, 'outcome_accepted']);
    expect(g.r.reason).toContain(a.id.slice(0, 19));
    expect(g.r.reason).toContain(b.id.slice(0, 19));
    // the migrator settles it with a handoff that supersedes both
    migrator('execution_003', 'success', ...SUCCESS, '--supersedes', a.id, '--supersedes', b.id);
    const settled = gate(OP);
    expect(settled.code).toBe(0);
    expect(settled.r.conflicts).toEqual([]);
  });

  it('a consumer acting on superseded state: the handoff it holds is no longer the latest', () => {
    sc = scenario('billing', FILES);
    const old = migrator('execution_002', 'success', ...SUCCESS);
    expect(gate(OP, '--handoff', old.id).code).toBe(0);
    // the schema moves on with a new migration, recorded as superseding the old handoff
    sc.write('db/schema.sql', SCHEMA + 'alter table accounts add column email text;\n');
    sc.commit('schema: accounts.email');
    const next = migrator('execution_003', 'success', ...SUCCESS, '--supersedes', old.id);
    const held = gate(OP, '--handoff', old.id);
    expect([held.code, held.r.failed_term]).toEqual([20, 'handoff_valid']);
    expect(held.r.handoff.id).toBe(next.id);
    expect(gate(OP, '--handoff', next.id).code).toBe(0);
  });

  it('revocation after a handoff was published: held from then on, and the revocation is final', () => {
    sc = scenario('billing', FILES);
    const h = migrator('execution_002', 'success', ...SUCCESS);
    expect(gate(OP).code).toBe(0);
    sc.ok(['revoke', h.id, '--reason', 'wrong database', '--agent', 'migrator']);
    expect(gate(OP).r.failed_term).toBe('handoff_valid');
    // a revocation is not taken back by another reason
    sc.refused(['revoke', h.id, '--reason', 'never mind', '--agent', 'migrator'], 2, 'INPUT_CONFLICT');
    expect(gate(OP).code).toBe(20);
  });

  it('a partial or torn handoff write: bytes past HEAD are no handoff, and recover moves them aside', () => {
    sc = scenario('billing', FILES);
    migrator('execution_001', 'timeout');
    const size = statSync(join(sc.ledgerDir, 'records.jsonl')).size;
    // a writer died mid-line: half a success record past the published end
    appendFileSync(join(sc.ledgerDir, 'records.jsonl'), '{"depends_on":[],"evidence":{},"execution_id":"execution_002","invariants":{},"kind":"handoff","logical_oper');
    const g = gate(OP);
    expect([g.code, g.r.failed_term]).toEqual([20, 'outcome_accepted']);
    const rec = sc.ledger(['recover']);
    expect(rec.code, rec.stderr).toBe(0);
    expect(statSync(join(sc.ledgerDir, 'records.jsonl')).size).toBe(size);
    expect(sc.ok(['audit']).warnings).toEqual([]);
  });

  it('crash recovery after an external side effect: an intent with no outcome holds the gate and is listed', () => {
    sc = scenario('billing', FILES);
    migrator('execution_002', 'success', ...SUCCESS);
    expect(gate(OP).code).toBe(0);
    // the migrator starts another run, performs its side effect and crashes before any outcome
    const i = intent('execution_003', 're-apply db/schema.sql after the index rebuild');
    const g = gate(OP);
    expect([g.code, g.r.failed_term]).toEqual([20, 'state_current']);
    expect(g.r.reopened_by).toEqual([i.id]);
    expect(sc.ok(['status']).pending_intents).toMatchObject([{ logical_operation_id: OP, execution_id: 'execution_003' }]);
    // whoever recovers it records what happened, and the gate decides on that
    migrator('execution_003', 'success', ...SUCCESS);
    expect(gate(OP).code).toBe(0);
  });
});
