// Issue 13 finding 2: `append --batch --agent mallory` let a payload's own "agent":"bob" win, so
// mallory finished bob's live work item as bob, and batch took start/checkpoint/finish (a lease
// to 2999 locked a slug for good). --agent (or LEDGER_AGENT) is the caller; the whole batch is
// refused when one payload names another agent or a kind that has its own verb.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CP, ok, project, records, workLog, type Project } from '../handoff/helpers.js';
import { projectState } from '../helpers/project-state.js';
import { runLedger } from '../helpers/cli.js';
import { Ledger } from '../../src/ledger.js';
import { LedgerError } from '../../src/errors.js';
import type { Draft } from '../../src/record.js';
import { join } from 'node:path';

let p: Project;
beforeEach(async () => {
  p = await project();
  await ok(p, 'start', 'fix-tz', '--agent', 'bob', '--summary', 'bob\'s work');
});
afterEach(() => p.cleanup());

const handoff = (exec: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: 'handoff', logical_operation_id: 'deploy', execution_id: exec, outcome: 'success', evidence: {}, invariants: {}, depends_on: [], ...extra });
const batch = (lines: string[], ...args: string[]) => runLedger(['append', '--batch', '--json', ...args], { cwd: p.dir, stdin: lines.join('\n') + '\n' });

async function refusedBatch(lines: string[], args: string[], code: string, env: Record<string, string> = {}): Promise<string> {
  const before = projectState(p.dir);
  const r = await runLedger(['append', '--batch', '--json', ...args], { cwd: p.dir, stdin: lines.join('\n') + '\n', env });
  expect(r.code, r.stdout).toBe(2);
  expect(JSON.parse(r.stdout).error.code).toBe(code);
  expect(projectState(p.dir)).toEqual(before);
  return JSON.parse(r.stdout).error.message as string;
}

describe('when mallory sends a batch whose payloads name bob', () => {
  it('refuses the whole batch, the good payloads too, and writes nothing', async () => {
    const msg = await refusedBatch([handoff('e1'), handoff('e2', { agent: 'bob' })], ['--agent', 'mallory'], 'INPUT_REFUSED');
    expect(msg).toBe('stdin line 2: the payload names agent "bob", but the caller is "mallory" (--agent or LEDGER_AGENT); a batch writes only as its caller');
  });

  it('takes the caller from LEDGER_AGENT the same way', async () => {
    await refusedBatch([handoff('e1', { agent: 'bob' })], [], 'INPUT_REFUSED', { LEDGER_AGENT: 'mallory' });
  });

  it('accepts payloads that name the caller or no agent, and writes them as the caller', async () => {
    const r = await batch([handoff('e1'), handoff('e2', { agent: 'mallory' })], '--agent', 'mallory');
    expect(r.code, r.stdout).toBe(0);
    expect(records(p).slice(-2).map((x) => x.agent)).toEqual(['mallory', 'mallory']);
  });

  it('without a caller, refuses a batch that names two agents (a batch is one writer\'s)', async () => {
    await refusedBatch([handoff('e1', { agent: 'mallory' }), handoff('e2', { agent: 'bob' })], [], 'INPUT_REFUSED');
    const r = await batch([handoff('e1', { agent: 'ci' }), handoff('e2', { agent: 'ci' })]);
    expect(r.code, r.stdout).toBe(0);
  });
});

describe('when a batch carries a kind that has its own verb (finish of bob\'s live item, a lease to 2999)', () => {
  const finish = JSON.stringify({ kind: 'finish', agent: 'mallory', logical_operation_id: 'fix-tz', execution_id: 'bob-1', done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], outcome: 'success', evidence: {}, invariants: {}, depends_on: [] });
  const start = JSON.stringify({ kind: 'start', agent: 'mallory', logical_operation_id: 'fix-db', execution_id: 'mallory-9', summary: 'mine forever', lease_until: '2999-01-01T00:00:00.000Z' });
  const checkpoint = JSON.stringify({ kind: 'checkpoint', agent: 'mallory', logical_operation_id: 'fix-tz', execution_id: 'bob-1', done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], lease_until: '2999-01-01T00:00:00.000Z' });
  const consume = JSON.stringify({ kind: 'consume', agent: 'mallory', logical_operation_id: 'deploy', consumer: 'x', handoff: `sha256:${'0'.repeat(64)}`, seen_head: { seq: 1, tail: `sha256:${'0'.repeat(64)}` } });

  for (const [kind, line] of [['finish', finish], ['start', start], ['checkpoint', checkpoint], ['consume', consume]] as const) {
    it(`refuses a ${kind} payload with the rest of the batch, and bob still owns fix-tz`, async () => {
      const msg = await refusedBatch([handoff('e1'), line], ['--agent', 'mallory'], 'INPUT_REFUSED');
      expect(msg).toContain(`stdin line 2: append --batch writes handoff, intent, revoke records; a ${kind} record`);
      const item = workLog(p).items.get('fix-tz')!;
      expect([item.status, item.owner]).toEqual(['open', 'bob']);
    });
  }

  it('refuses a genesis payload too', async () => {
    await refusedBatch(['{"kind":"genesis","nonce":"AAAAAAAAAAAAAAAAAAAAAA"}'], ['--agent', 'mallory'], 'INPUT_SCHEMA');
  });

  it('the library\'s batch entry (Ledger.append) refuses the same kinds, before anything is written', async () => {
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key') });
    const before = projectState(p.dir);
    for (const line of [finish, start, checkpoint, consume]) {
      const e = (() => {
        try {
          ledger.append([{ ...JSON.parse(handoff('e1')), agent: 'mallory' } as Draft, JSON.parse(line) as Draft]);
        } catch (x) {
          return x;
        }
      })();
      expect(e).toBeInstanceOf(LedgerError);
      expect((e as LedgerError).code).toBe('INPUT_REFUSED');
      expect((e as LedgerError).message).toMatch(/^payload 2: a \w+ record is written only by `ledger /);
    }
    expect(projectState(p.dir)).toEqual(before);
  });

  it('bob, the owner, still finishes through the workflow', async () => {
    await ok(p, 'finish', 'fix-tz', '--agent', 'bob', ...CP, '--invariant', 'review=ok');
    expect(workLog(p).items.get('fix-tz')?.status).toBe('finished');
  });
});
