// The operations' story (src/handoff/operations.ts, issue 26 item 6): which records the work-log
// fold takes into a work item's story, and how HANDOFF.md tells it. Pure: records in, views out.
import { describe, expect, it } from 'vitest';
import type { LedgerRecord } from '../../src/record.js';
import type { RecordAt } from '../../src/store/read.js';
import { WorkLogFold, foldWorkLog } from '../../src/handoff/workitems.js';
import { renderViews } from '../../src/handoff/views.js';

const TS = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
const LEASE = '2030-01-01T00:00:00.000Z';
const id = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const rec = (seq: number, r: Record<string, unknown>): RecordAt => ({ seq, offset: 0, id: id(seq), record: { v: 1, ts: TS(seq), agent: 'claude', ...r } as unknown as LedgerRecord });
const op = { logical_operation_id: 'fix-tz' };
const body = { done: 'did', state: 'now', next: 'then', verified: [], attempted: [], blockers: [] };
const terminal = { evidence: {}, invariants: {}, depends_on: [] };

/** A story with every rule in it; `taken` says, per seq, whether the fold should take the record. */
const records: [RecordAt, boolean][] = [
  [rec(0, { kind: 'genesis', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }), true],
  [rec(1, { kind: 'handoff', ...op, execution_id: 'ci-0', outcome: 'success', ...terminal }), false], // before the first start
  [rec(2, { kind: 'start', ...op, execution_id: 'e1', summary: 'fix it', lease_until: LEASE }), true],
  [rec(3, { kind: 'finish', ...op, execution_id: 'e1', ...body, outcome: 'timeout', ...terminal }), true],
  [rec(4, { kind: 'handoff', logical_operation_id: 'ci-9', execution_id: 'r', outcome: 'success', ...terminal, agent: 'ci' }), false], // never a work item
  [rec(5, { kind: 'consume', agent: 'deployer', logical_operation_id: 'ci-9', consumer: 'prod', handoff: id(4), seen_head: { seq: 4, tail: id(4) } }), false], // names a CI record
  [rec(6, { kind: 'handoff', ...op, execution_id: 'ci-1', outcome: 'success', ...terminal, supersedes: [id(3)], agent: 'ci', note: 'the job re-ran it' }), true],
  [rec(7, { kind: 'consume', agent: 'deployer', ...op, consumer: 'prod', handoff: id(6), seen_head: { seq: 6, tail: id(6) } }), true],
  [rec(8, { kind: 'consume_failed', agent: 'eve', ...op, consumer: 'prod', consume: id(7), handoff: id(6), reason: 'not mine' }), false], // not the consumer's agent
  [rec(9, { kind: 'consume_failed', agent: 'deployer', ...op, consumer: 'prod', consume: id(7), handoff: id(6), reason: 'the deploy failed' }), true],
  [rec(10, { kind: 'consume_failed', agent: 'deployer', ...op, consumer: 'prod', consume: id(7), handoff: id(6), reason: 'again' }), false], // already reported
  [rec(11, { kind: 'revoke', agent: 'alice', target: id(4), reason: 'a CI record' }), false],
  [rec(12, { kind: 'revoke', agent: 'alice', target: id(6), reason: 'ran against staging' }), true],
  [rec(13, { kind: 'intent', ...op, execution_id: 'e2', action: 'deploy' }), false],
];

describe('when the work-log fold meets the records of an operation\'s story', () => {
  it('takes exactly the records of work items\' outcomes, and one it leaves changes nothing', () => {
    const fold = new WorkLogFold();
    for (const [at, taken] of records) {
      const before = JSON.stringify({ ...fold.log, items: [...fold.log.items], operations: [...fold.log.operations] });
      expect(fold.add(at), `seq ${at.seq} (${at.record.kind})`).toBe(taken);
      if (!taken) expect(JSON.stringify({ ...fold.log, items: [...fold.log.items], operations: [...fold.log.operations] })).toBe(before);
    }
    // A fold over only the records taken gives the same state (what the fold memo relies on).
    const all = foldWorkLog(records.map(([at]) => at));
    const takenOnly = foldWorkLog(records.filter(([, t]) => t).map(([at]) => at));
    expect(JSON.stringify([...takenOnly.operations])).toBe(JSON.stringify([...all.operations]));
    expect(takenOnly.through).toEqual({ seq: 12, id: id(12) });
    const [story] = all.operations.values();
    expect(story.attempts.map((a) => [a.seq, a.kind, a.outcome])).toEqual([[3, 'finish', 'timeout'], [6, 'handoff', 'success']]);
    expect(story.attempts[1].consumed).toEqual([expect.objectContaining({ seq: 7, consumer: 'prod', failed: { seq: 9, id: id(9), ts: TS(9), reason: 'the deploy failed' } })]);
    expect(story.attempts[1].revoked).toEqual([{ seq: 12, id: id(12), ts: TS(12), agent: 'alice', reason: 'ran against staging' }]);
    expect(story.last_seq).toBe(12);
  });

  it('HANDOFF.md says which outcome superseded which, who consumed the latest, that its action failed, and that it was revoked', () => {
    const view = renderViews(foldWorkLog(records.map(([at]) => at)))['HANDOFF.md'];
    const section = view.slice(view.indexOf('## Operations'), view.indexOf('## Log, newest first'));
    expect(section).toContain('- **Latest outcome:** **success** (handoff by ci, seq 6), consumed by prod (its action failed); **REVOKED** by alice at 2026-01-01T00:00:12.000Z, so a gate on it holds\n');
    expect(section).toContain(`  - **timeout**, finished by claude at ${TS(3)}, execution e1 (seq 3, sha256:000000000000…); superseded by the success at seq 6\n`);
    expect(section).toContain(`  - **success**, handed off by ci at ${TS(6)}, execution ci-1 (seq 6, sha256:000000000000…); supersedes sha256:000000000000…\n    - **Note:** the job re-ran it\n`);
    expect(section).toContain(`      - **Its action failed**, reported by deployer at ${TS(9)} (seq 9, sha256:000000000000…): the deploy failed\n`);
    expect(section).toContain(`    - **REVOKED** by alice at ${TS(12)} (seq 12, sha256:000000000000…): ran against staging\n`);
    expect(section).not.toMatch(/ci-9|not mine|\bagain\b|a CI record/);
  });
});
