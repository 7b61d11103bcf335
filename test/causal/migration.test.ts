// The essay's migration example, end to end through the CLI:
//
//   logical_operation_id: migrate_schema_17
//   execution_001 -> timeout
//   execution_002 -> success -> verified handoff -> deploy_api_18
import { afterEach, describe, expect, it } from 'vitest';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

describe('the migration example of the essay', () => {
  it('timeout, success, deploy gate; schema change holds it; restore passes; revoke holds', async () => {
    p = await project('migrator');
    p.write('db/schema.sql', 'create table accounts (id bigint primary key);\n');

    await p.id(handoff('migrate_schema_17', 'execution_001', 'timeout', '--note', 'lost the connection after 30s'));
    const h = await p.id(handoff('migrate_schema_17', 'execution_002', 'success', '--evidence', 'schema=file:db/schema.sql', '--invariant', 'tests=ok:212 passed'));

    // deploy_api_18 asks whether it may act on the migration.
    const deploy = ['--require-invariant', 'tests', '--max-age', '24h'];
    let g = await p.gate('migrate_schema_17', ...deploy);
    expect(g.code).toBe(0);
    expect(g.r).toMatchObject({ ok: true, failed_term: null, handoff: { id: h, execution_id: 'execution_002', outcome: 'success' } });
    expect(g.r.terms).toEqual({ handoff_valid: true, outcome_accepted: true, invariants_satisfied: true, state_current: true, dependencies_true: true });
    const text = await p.run(['gate', 'migrate_schema_17', ...deploy]);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^proceed: migrate_schema_17/);

    // Another session changes the schema again: the event is genuine, the state is stale.
    p.write('db/schema.sql', 'create table accounts (id bigint primary key, email text);\n');
    g = await p.gate('migrate_schema_17', ...deploy);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('state_current');
    expect(g.r.terms.state_current).toBe(false);
    const held = await p.run(['gate', 'migrate_schema_17', ...deploy]);
    expect(held.code).toBe(20);
    expect(held.stdout).toMatch(/^hold: migrate_schema_17: state_current: evidence schema: file:db\/schema\.sql has changed/);
    // Every term is listed with its reason, not only the failing one.
    for (const t of ['handoff_valid', 'outcome_accepted', 'invariants_satisfied', 'state_current', 'dependencies_true']) expect(held.stdout).toContain(t);
    expect(held.stdout).toContain('FAIL state_current');

    // The schema is put back: the handoff describes what is there again.
    p.write('db/schema.sql', 'create table accounts (id bigint primary key);\n');
    expect((await p.gate('migrate_schema_17', ...deploy)).code).toBe(0);

    // deploy_api_18 records its own handoff, which depends on the migration.
    await p.id(handoff('deploy_api_18', 'deploy_001', 'success', '--depends-on', 'migrate_schema_17'));
    expect((await p.gate('deploy_api_18')).code).toBe(0);

    // The migration's handoff is revoked: both gates hold.
    await p.id(['revoke', h, '--reason', 'the migration ran against staging, not production']);
    g = await p.gate('migrate_schema_17', ...deploy);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    const dep = await p.gate('deploy_api_18');
    expect(dep.code).toBe(20);
    expect(dep.r.failed_term).toBe('dependencies_true');
    expect(dep.r.reason).toContain('migrate_schema_17:success does not hold: handoff_valid');
  });
});
