// The Ledger keeps the writer's rules: what `append` refuses (each refusal changes nothing), what
// it makes idempotent, and that the façade offers no way around them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditLedger, Ledger, type Draft } from '../../src/index.js';
import { initProject, runLedger, snapshot } from '../helpers/cli.js';
import { T0, expectRefused, handoff, intent, libraryProject, type LibraryProject } from './kit.js';

let p: LibraryProject;
beforeEach(() => {
  p = libraryProject();
});
afterEach(() => p.cleanup());

const audit = () => auditLedger({ dir: p.dir, trust: p.trust, now: p.clock.t, threads: 1 });

describe('when a genesis draft is appended', () => {
  it('is refused (a ledger has the one init wrote), the ledger is byte-identical, and it still audits clean', async () => {
    const e = await expectRefused(p, 'INPUT_REFUSED', () => p.ledger.append({ kind: 'genesis', agent: 'lib', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' } as Draft));
    expect(e.message).toContain('ledger init');
    const report = await audit();
    expect(report.ok, report.verdict).toBe(true);
    expect(report.checked).toBe(1);
  });
});

describe('when a record the gate or the workflow writes is appended directly', () => {
  const lease = new Date(T0 + 3_600_000).toISOString();
  const work = { logical_operation_id: 'fix-tz', execution_id: 'lib-1' };
  const drafts: [string, () => Draft][] = [
    ['consume', () => ({ kind: 'consume', agent: 'lib', logical_operation_id: 'op', consumer: 'deploy', handoff: p.ledger.head().tail, seen_head: { seq: 0, tail: p.ledger.head().tail } }) as Draft],
    ['start', () => ({ kind: 'start', agent: 'lib', ...work, summary: 'fix it', lease_until: lease }) as Draft],
    ['checkpoint', () => ({ kind: 'checkpoint', agent: 'lib', ...work, done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], lease_until: lease }) as Draft],
    ['finish', () => ({ kind: 'finish', agent: 'lib', ...work, done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) as Draft],
  ];

  it.each(drafts)('refuses a %s draft, alone or in a batch beside a good handoff, and changes nothing', async (kind, make) => {
    const e = await expectRefused(p, 'INPUT_REFUSED', () => p.ledger.append(make()));
    expect(e.data.kind).toBe(kind);
    await expectRefused(p, 'INPUT_REFUSED', () => p.ledger.append([handoff('op', 'e1'), make()]));
    expect(p.ledger.head().seq).toBe(0);
  });
});

describe('when the same handoff is appended twice', () => {
  it('gives one record: the second call returns it with existing: true and writes nothing', () => {
    const first = p.ledger.append(handoff('migrate', 'e1'));
    expect(first.records[0]).toMatchObject({ seq: 1, existing: false });
    const before = snapshot(p.dir);
    const again = p.ledger.append(handoff('migrate', 'e1'));
    expect(again.records[0]).toMatchObject({ id: first.records[0].id, seq: 1, offset: first.records[0].offset, existing: true });
    expect(again.records[0].record).toEqual(first.records[0].record);
    expect(again.appended).toBe(0);
    expect(again.head).toEqual(first.head);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('gives one record for a twin inside one batch, and one for an intent retried', () => {
    const res = p.ledger.append([intent('migrate', 'e1'), handoff('migrate', 'e1'), handoff('migrate', 'e1')]);
    expect(res.appended).toBe(2);
    expect(res.records[2]).toMatchObject({ id: res.records[1].id, existing: false });
    expect(p.ledger.append(intent('migrate', 'e1')).records[0]).toMatchObject({ id: res.records[0].id, existing: true });
  });

  it('refuses a retry that differs (another outcome, another agent) and changes nothing', async () => {
    p.ledger.append(handoff('migrate', 'e1'));
    await expectRefused(p, 'INPUT_CONFLICT', () => p.ledger.append(handoff('migrate', 'e1', 'failure')));
    await expectRefused(p, 'INPUT_CONFLICT', () => p.ledger.append(handoff('migrate', 'e1', 'success', 'someone-else')));
  });
});

describe('when a revoke is appended', () => {
  it('refuses a record that is not a handoff or finish, and an id not in the ledger', async () => {
    const i = p.ledger.append(intent('migrate', 'e1')).records[0];
    const s = (await p.ledger.start({ slug: 'fix-tz', agent: 'lib', summary: 'fix it', views: false })).record;
    for (const target of [p.ledger.get(0)!.id, i.id, s.id]) {
      const e = await expectRefused(p, 'INPUT_REFUSED', () => p.ledger.append({ kind: 'revoke', agent: 'lib', target, reason: 'wrong' } as Draft));
      expect(e.message).toContain('only a handoff or finish can be revoked');
    }
    await expectRefused(p, 'INPUT_NOT_FOUND', () => p.ledger.append({ kind: 'revoke', agent: 'lib', target: `sha256:${'0'.repeat(64)}`, reason: 'wrong' } as Draft));
  });

  it('revokes a handoff once: the same revocation again is the existing one, another reason is refused', async () => {
    const h = p.ledger.append(handoff('migrate', 'e1')).records[0];
    const revoke = { kind: 'revoke', agent: 'lib', target: h.id, reason: 'evidence from the wrong branch' } as Draft;
    const first = p.ledger.append(revoke).records[0];
    expect(p.ledger.append(revoke).records[0]).toMatchObject({ id: first.id, existing: true });
    await expectRefused(p, 'INPUT_CONFLICT', () => p.ledger.append({ ...revoke, reason: 'another reason' } as Draft));
  });
});

describe('when a consumer acts through the gate', () => {
  it('writes the consume record only when the gate passes, and once per consumer', async () => {
    const empty = snapshot(p.dir);
    const held = p.ledger.gate('migrate', { trust: p.trust, consumeAs: 'deploy' });
    expect(snapshot(p.dir)).toEqual(empty);
    expect(held).toMatchObject({ ok: false, consume: { consumer: 'deploy', id: null } });
    p.ledger.append(handoff('migrate', 'e1'));
    const passed = p.ledger.gate('migrate', { trust: p.trust, consumeAs: 'deploy' });
    expect(passed.ok, passed.reason).toBe(true);
    expect(p.ledger.get(passed.consume!.id!)?.record).toMatchObject({ kind: 'consume', agent: 'deploy', consumer: 'deploy', logical_operation_id: 'migrate' });
    const before = snapshot(p.dir);
    const duplicate = p.ledger.gate('migrate', { trust: p.trust, consumeAs: 'deploy' });
    expect(duplicate.ok).toBe(false);
    expect(snapshot(p.dir)).toEqual(before);
    expect((await audit()).ok).toBe(true);
  });
});

describe('the façade', () => {
  it('offers no transact (a caller-supplied decide could return any draft), and the methods that keep the rules', () => {
    const surface = Object.getOwnPropertyNames(Ledger.prototype);
    expect(surface).not.toContain('transact');
    expect(surface).toEqual(expect.arrayContaining(['append', 'start', 'checkpoint', 'finish', 'gate', 'pending', 'audit', 'get', 'log', 'records', 'head', 'recover']));
  });

  it('refuses every write without a key, before anything is touched', async () => {
    const reader = Ledger.open({ dir: p.dir });
    await expectRefused(p, 'USAGE', () => reader.append(handoff('migrate', 'e1')));
    await expectRefused(p, 'USAGE', () => reader.start({ slug: 'fix-tz', agent: 'lib', summary: 'fix it', views: false }));
  });

  it('lists the pending executions: an intent without its handoff', () => {
    p.ledger.append([intent('migrate', 'e1'), intent('deploy', 'e1')]);
    p.ledger.append(handoff('deploy', 'e1'));
    expect(p.ledger.pending({ now: p.clock.t }).map((e) => [e.logical_operation_id, e.kind])).toEqual([['migrate', 'intent']]);
  });
});

describe('when `ledger append --batch` is given a kind that append refuses', () => {
  it('applies the same rule (the CLI appends through the Ledger) and changes nothing', async () => {
    const cli = await initProject('batch');
    try {
      const before = snapshot(cli.ledger);
      const start = { kind: 'start', agent: 'codex', logical_operation_id: 'fix-tz', execution_id: 'codex-9', summary: 'around the verb', lease_until: '2000-01-01T00:00:00.000Z' };
      const r = await runLedger(['append', '--batch', '--json'], { cwd: cli.dir, stdin: JSON.stringify(start) + '\n' });
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'INPUT_REFUSED', message: expect.stringContaining('`ledger start`') });
      expect(snapshot(cli.ledger)).toEqual(before);
    } finally {
      cli.cleanup();
    }
  });
});
