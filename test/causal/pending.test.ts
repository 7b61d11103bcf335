// src/causal/pending.ts: what `ledger pending` (and, through unresolvedOutcomes, `ledger status`)
// lists: executions left open, and ambiguous or timed-out outcomes that no later success or
// cancel resolved (SPEC 10; issue 14 item 4: pending missed these).
import { describe, expect, it, afterEach } from 'vitest';
import { unresolvedOutcomes } from '../../src/causal/pending.js';
import type { RecordAt } from '../../src/store/read.js';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const NOW = Date.parse('2026-11-29T17:00:00.000Z');
let seq = 0;
const at = (record: Record<string, unknown>): RecordAt => {
  seq++;
  return { seq, offset: seq * 100, id: `sha256:${seq.toString(16).padStart(64, '0')}`, record: { ts: '2026-11-29T16:00:00.000Z', agent: 'a', ...record } as unknown as RecordAt['record'] };
};
const out = (op: string, exec: string, outcome: string) => at({ kind: 'handoff', logical_operation_id: op, execution_id: exec, outcome });

describe('unresolvedOutcomes (pure)', () => {
  it('lists ambiguous and timed-out outcomes until a later success or cancel of the same operation', () => {
    seq = 0;
    const rs = [
      out('a', 'e1', 'timeout'), out('a', 'e2', 'failure'), // a failure resolves nothing
      out('b', 'e1', 'ambiguous'), out('b', 'e2', 'success'), // resolved
      out('c', 'e1', 'ambiguous'), out('c', 'e2', 'cancelled'), out('c', 'e3', 'timeout'), // the last one is open again
      out('d', 'e1', 'success'), out('d', 'e2', 'ambiguous'),
    ];
    const u = unresolvedOutcomes(rs, NOW);
    expect(u.map((x) => `${x.logical_operation_id}/${x.execution_id}:${x.outcome}`)).toEqual(['a/e1:timeout', 'c/e3:timeout', 'd/e2:ambiguous']);
    expect(u[0]).toMatchObject({ seq: 1, kind: 'handoff', age_ms: 3_600_000 });
    expect(unresolvedOutcomes(rs, NOW, 'c').map((x) => x.execution_id)).toEqual(['e3']);
  });

  it('a revoked success resolves nothing, and a revoked ambiguous outcome is withdrawn', () => {
    seq = 0;
    const amb = out('a', 'e1', 'ambiguous');
    const ok = out('a', 'e2', 'success');
    const amb2 = out('b', 'e1', 'timeout');
    const rs = [amb, ok, amb2, at({ kind: 'revoke', target: ok.id, reason: 'wrong' }), at({ kind: 'revoke', target: amb2.id, reason: 'never ran' })];
    expect(unresolvedOutcomes(rs, NOW).map((x) => x.id)).toEqual([amb.id]);
  });
});

describe('ledger pending', () => {
  it('shows an ambiguous outcome that nothing resolved, with --json ok: true, and drops it once a success comes', async () => {
    p = await project();
    await p.id(handoff('migrate', 'e1', 'ambiguous'));
    let r = await p.run(['pending', '--json']);
    expect(r.code).toBe(0);
    let j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ ok: true, count: 0, unresolved: [{ logical_operation_id: 'migrate', execution_id: 'e1', outcome: 'ambiguous', problem: null }] });
    const text = await p.run(['pending']);
    expect(text.stdout).toContain('unresolved outcomes');
    expect(text.stdout).toContain('migrate/e1');
    await p.id(handoff('migrate', 'e2', 'success'));
    r = await p.run(['pending', '--json']);
    j = JSON.parse(r.stdout);
    expect(j.unresolved).toEqual([]);
  });
});
