// The gate's five terms one by one (SPEC 9) against a real ledger: what makes each false, that all
// are evaluated and reported, dependencies with cycles, finish records as outcomes, and the chain
// audit. The same terms from tables of inputs built in code: test/causal/gate/terms.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Draft } from '../../src/record.js';
import { readSecretKey } from '../../src/keys/key-file.js';
import { createSigner } from '../../src/sign.js';
import { appendDrafts } from '../../src/store/append.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

describe('when the operation has no handoff at all', () => {
  it('holds with every term false and a reason for each', async () => {
    p = await project();
    const g = await p.gate('never_ran');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(Object.values(g.r.terms)).toEqual([false, false, false, false, false]);
    for (const reasons of Object.values(g.r.reasons)) expect(reasons.length).toBeGreaterThan(0);
  });
});

describe('outcome accepted', () => {
  it('--accept widens what passes; the latest terminal outcome over all executions decides', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success'));
    await p.id(handoff('op', 'e2', 'cancelled'));
    const g = await p.gate('op');
    expect(g.r.failed_term).toBe('outcome_accepted');
    expect((await p.gate('op', '--accept', 'success,cancelled')).code).toBe(0);
    expect((await p.gate('op', '--accept', 'success', '--accept', 'cancelled')).code).toBe(0);
  });
});

describe('invariants satisfied', () => {
  it('holds on an invariant that is not ok and on a required one that is missing', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success', '--invariant', 'tests=ok', '--invariant', 'lint=fail:3 warnings'));
    let g = await p.gate('op');
    expect(g.r.failed_term).toBe('invariants_satisfied');
    expect(g.r.reason).toContain('lint is not ok: 3 warnings');
    await p.id(handoff('op', 'e2', 'success', '--invariant', 'tests=ok'));
    expect((await p.gate('op', '--require-invariant', 'tests')).code).toBe(0);
    g = await p.gate('op', '--require-invariant', 'tests', '--require-invariant', 'coverage');
    expect(g.code).toBe(20);
    expect(g.r.reason).toContain('required invariant coverage is missing');
  });
});

describe('every term is evaluated, not only up to the first failure', () => {
  it('reports the first failing term and the later ones too', async () => {
    p = await project();
    p.write('a.txt', 'one\n');
    await p.id(handoff('op', 'e1', 'failure', '--evidence', 'a=a.txt', '--invariant', 't=fail', '--depends-on', 'missing_op'));
    p.write('a.txt', 'two\n');
    const g = await p.gate('op');
    expect(g.r.failed_term).toBe('outcome_accepted');
    expect(g.r.terms).toEqual({ handoff_valid: true, outcome_accepted: false, invariants_satisfied: false, state_current: false, dependencies_true: false });
    const text = (await p.run(['gate', 'op'])).stdout;
    expect(text.match(/FAIL/g)).toHaveLength(4);
  });
});

describe('dependency conditions', () => {
  it('are evaluated recursively, with the outcome each one names', async () => {
    p = await project();
    await p.id(handoff('build', 'b1', 'success'));
    await p.id(handoff('test', 't1', 'failure', '--depends-on', 'build'));
    await p.id(handoff('report', 'r1', 'success', '--depends-on', 'test:failure'));
    await p.id(handoff('release', 'x1', 'success', '--depends-on', 'report'));
    expect((await p.gate('release')).code).toBe(0);
    // The base of the chain is revoked: everything built on it holds.
    const id = JSON.parse((await p.run(['log', '--op', 'build', '--json'])).stdout).records[0].id;
    await p.id(['revoke', id, '--reason', 'bad build']);
    const g = await p.gate('release');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('dependencies_true');
    expect(g.r.reason).toContain('report:success does not hold');
    expect(g.r.reason).toContain('build:success does not hold: handoff_valid');
  });

  it('detects and reports a cycle', async () => {
    p = await project();
    await p.id(handoff('a', 'e', 'success', '--depends-on', 'b'));
    await p.id(handoff('b', 'e', 'success', '--depends-on', 'c'));
    await p.id(handoff('c', 'e', 'success', '--depends-on', 'a'));
    const g = await p.gate('a');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('dependencies_true');
    expect(g.r.reason).toContain('dependency cycle: a -> b -> c -> a');
  });

  it('holds on a dependency that has no handoff', async () => {
    p = await project();
    await p.id(handoff('a', 'e', 'success', '--depends-on', 'ghost'));
    const g = await p.gate('a');
    expect(g.r.reason).toContain('ghost:success does not hold: handoff_valid: ghost has no handoff');
  });
});

describe('a finish record of the handoff log', () => {
  it('counts as a terminal outcome of its operation, and a later start reopens it', async () => {
    p = await project();
    // Written around the workflow, straight through the store: the gate reads what is there.
    const signer = createSigner(readSecretKey(join(p.dir, 'keys/harness.key')).seed);
    const ledger = { append: (d: Draft) => appendDrafts({ dir: p.ledger }, signer, [d]) };
    const base = { logical_operation_id: 'slug', execution_id: 's1', done: 'did it', state: 'done', next: 'nothing', verified: [], attempted: [], blockers: [] };
    ledger.append({ kind: 'finish', agent: 'alice', ...base, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '' } }, depends_on: [] } as Draft);
    const g = await p.gate('slug');
    expect(g.code).toBe(0);
    expect(g.r.handoff?.kind).toBe('finish');
    const lease = new Date(Date.now() + 3_600_000).toISOString();
    ledger.append({ kind: 'start', agent: 'bob', logical_operation_id: 'slug', execution_id: 's2', summary: 'again', lease_until: lease } as Draft);
    const again = await p.gate('slug');
    expect(again.r.failed_term).toBe('state_current');
    expect(again.r.reopened_by).toHaveLength(1);
  });
});

describe('handoff valid: the chain must audit clean', () => {
  it('holds when the records are signed by a key the trust file does not pin', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success'));
    const trust = JSON.parse(readFileSync(join(p.dir, 'keys/trust.json'), 'utf8'));
    trust.keys[0].key = signerFor('someone-else').publicKey; // a real key, but not this ledger's
    const other = join(p.dir, 'other-trust.json');
    writeFileSync(other, JSON.stringify(trust));
    const res = await p.run(['gate', 'op', '--trust', other, '--json']);
    expect(res.code).toBe(20);
    const r = JSON.parse(res.stdout);
    expect(r.failed_term).toBe('handoff_valid');
    expect(r.reason).toContain('key-pin');
  });

  it('with a floor, a record relied on below the floor is still verified from its bytes', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success', '--invariant', 'tests=ok:12 passed'));
    await p.id(handoff('other', 'e1', 'success'));
    const floor = join(p.dir, 'floor.json');
    expect((await p.run(['audit', '--floor', floor, '--advance'])).code).toBe(0);
    expect((await p.gate('op', '--floor', floor)).code).toBe(0);
    // Rewrite the handoff below the floor, same length: the floor audit does not read it again.
    const file = join(p.ledger, 'records.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('12 passed', '13 passed'));
    const g = await p.gate('op', '--floor', floor);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reasons.handoff_valid.join(' ')).toMatch(/signature that does not verify|does not link/);
  });
});

describe('state current, for each evidence source form', () => {
  it('dir: holds when a file in the tree changes, is added or removed, and passes when it is restored', async () => {
    p = await project();
    p.write('out/a.txt', 'a\n');
    p.write('out/sub/b.txt', 'b\n');
    await p.id(handoff('op', 'e1', 'success', '--evidence', 'out=dir:out'));
    expect((await p.gate('op')).code).toBe(0);
    p.write('out/sub/c.txt', 'new\n');
    const g = await p.gate('op');
    expect(g.r.failed_term).toBe('state_current');
    expect(g.r.evidence[0]).toMatchObject({ source: 'dir/v2:out', current: false });
    const { rmSync } = await import('node:fs');
    rmSync(join(p.dir, 'out/sub/c.txt'));
    expect((await p.gate('op')).code).toBe(0);
    rmSync(join(p.dir, 'out'), { recursive: true });
    expect((await p.gate('op')).r.reason).toContain('cannot be digested now');
  });

  it('a bare path is recorded by what it is, and a file turned directory is not current', async () => {
    p = await project();
    p.write('thing', 'file\n');
    await p.id(handoff('op', 'e1', 'success', '--evidence', 'x=thing'));
    const g = await p.gate('op');
    expect(g.r.evidence[0]).toMatchObject({ source: 'file:thing', current: true });
    const { rmSync, mkdirSync } = await import('node:fs');
    rmSync(join(p.dir, 'thing'));
    mkdirSync(join(p.dir, 'thing'));
    expect((await p.gate('op')).r.failed_term).toBe('state_current');
  });

  it('sha256: is opaque: it holds unless the consumer accepts opaque digests', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success', '--evidence', `log=sha256:${'ab'.repeat(32)}`));
    const g = await p.gate('op');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('state_current');
    expect(g.r.reason).toContain('--allow-opaque-evidence');
    const ok = await p.gate('op', '--allow-opaque-evidence');
    expect(ok.code).toBe(0);
    expect(ok.r.evidence[0]).toMatchObject({ name: 'log', current: true });
  });
});

describe('when the ledger itself cannot be read', () => {
  it('the gate holds (exit 20) with the auditor\'s reason, and so does --consume-as', async () => {
    p = await project();
    await p.id(handoff('op', 'e1', 'success'));
    const { truncateSync, statSync } = await import('node:fs');
    const file = join(p.ledger, 'records.jsonl');
    truncateSync(file, statSync(file).size - 10); // shorter than HEAD's size
    const g = await p.gate('op');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reason).toContain('does not audit clean');
    expect(Object.values(g.r.terms).every((t) => t === false)).toBe(true);
    const c = await p.gate('op', '--consume-as', 'deployer');
    expect(c.code).toBe(20);
    expect(c.r.consume).toEqual({ consumer: 'deployer', id: null, seq: null });
  });
});
