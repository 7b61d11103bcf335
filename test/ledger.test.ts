// The library API from src/index.ts: what a Node program uses instead of the CLI. (The rules
// it applies are in test/library/; the store's transact under it is tested here too.)
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, LedgerError, type Draft } from '../src/index.js';
import { createSigner } from '../src/formats.js';
import { transact } from '../src/store/append.js';
import { scratch } from './helpers/cli.js';

const handoff = (exec: string, outcome = 'success'): Draft =>
  ({ kind: 'handoff', agent: 'lib', logical_operation_id: 'op', execution_id: exec, outcome, evidence: {}, invariants: {}, depends_on: [] }) as Draft;

let s: ReturnType<typeof scratch>;
afterEach(() => s?.cleanup());

describe('the library API', () => {
  it('initialises, appends, reads back by id and seq, logs newest first, and reports HEAD', () => {
    s = scratch();
    const signer = createSigner(new Uint8Array(randomBytes(32)));
    const dir = join(s.dir, '.ledger');
    const { ledger, result } = Ledger.init({ dir, key: signer, agent: 'lib', name: 'api' });
    expect(result.records[0].seq).toBe(0);
    const one = ledger.append(handoff('e1', 'timeout'));
    const two = ledger.append([handoff('e2'), handoff('e3')]);
    expect(two.records.map((r) => r.seq)).toEqual([2, 3]);
    expect(ledger.head()).toMatchObject({ seq: 3, tail: two.records[1].id, genesis: result.records[0].id });
    expect(ledger.get(one.records[0].id)?.record).toMatchObject({ execution_id: 'e1', outcome: 'timeout' });
    expect(ledger.get(2)?.id).toBe(two.records[0].id);
    expect(ledger.get(99)).toBeNull();
    expect(ledger.log({ limit: 2 }).map((r) => r.seq)).toEqual([3, 2]);
    expect(ledger.log({ kind: 'genesis' }).map((r) => r.seq)).toEqual([0]);
    expect([...ledger.records()].map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    // a second reader opened without a key reads the same, and cannot write
    const reader = Ledger.open({ dir });
    expect(reader.head().seq).toBe(3);
    expect(() => reader.append(handoff('e4'))).toThrow(LedgerError);
  });

  it('the store\'s transact decides on the current HEAD under the lock; [] appends nothing, a throw refuses', () => {
    s = scratch();
    const dir = join(s.dir, '.ledger');
    const signer = createSigner(new Uint8Array(randomBytes(32)));
    const { ledger } = Ledger.init({ dir, key: signer, agent: 'lib' });
    const seen: number[] = [];
    const none = transact({ dir }, signer, (view) => {
      seen.push(view.head.seq);
      return [];
    });
    expect(none.records).toEqual([]);
    expect(() => transact({ dir }, signer, () => {
      throw new LedgerError('INPUT_REFUSED', 'no');
    })).toThrow(/no/);
    const res = transact({ dir }, signer, (view) => [handoff(`after-${view.head.seq}`)]);
    expect(res.records[0].record).toMatchObject({ execution_id: 'after-0' });
    expect(seen).toEqual([0]);
    expect(ledger.head().seq).toBe(1);
  });

  it('refuses a bad draft with every problem listed, and appends nothing', () => {
    s = scratch();
    const dir = join(s.dir, '.ledger');
    const { ledger } = Ledger.init({ dir, key: new Uint8Array(randomBytes(32)), agent: 'lib' });
    const bad = { ...handoff('e1'), outcome: 'done', extra: 1 } as unknown as Draft;
    try {
      ledger.append(bad);
      expect.unreachable();
    } catch (e) {
      expect((e as LedgerError).code).toBe('INPUT_SCHEMA');
      expect((e as LedgerError).data.problems).toEqual(expect.arrayContaining([expect.stringMatching(/\$\.outcome/), expect.stringMatching(/\$\.extra: unknown field/)]));
    }
    expect(ledger.head().seq).toBe(0);
  });

  it('the store\'s transact skips the second schema check only for the very drafts it was given as checked', () => {
    s = scratch();
    const dir = join(s.dir, '.ledger');
    const signer = createSigner(new Uint8Array(randomBytes(32)));
    const { ledger } = Ledger.init({ dir, key: signer, agent: 'lib' });
    const good = [handoff('e1'), handoff('e2')];
    const bad = { ...handoff('e3'), outcome: 'done' } as unknown as Draft;
    // A draft decide returns that is not among the checked ones is validated as ever.
    expect(() => transact({ dir }, signer, () => [good[0], bad], good)).toThrow(expect.objectContaining({ code: 'INPUT_SCHEMA' }));
    // An equal copy is not the checked object either.
    expect(() => transact({ dir }, signer, () => [{ ...bad }], [bad])).toThrow(expect.objectContaining({ code: 'INPUT_SCHEMA' }));
    expect(ledger.head().seq).toBe(0);
    const res = transact({ dir }, signer, () => [good[1]], good);
    expect(res.records.map((r) => r.record)).toMatchObject([{ execution_id: 'e2', seq: 1 }]);
  });

  it('gives every record of one batch the same ts, never earlier than the record before', () => {
    s = scratch();
    const dir = join(s.dir, '.ledger');
    let clock = Date.parse('2030-01-01T00:00:00.000Z');
    const { ledger } = Ledger.init({ dir, key: new Uint8Array(randomBytes(32)), agent: 'lib', now: () => new Date(clock) });
    clock -= 60_000; // the clock steps back: records keep the genesis time
    const back = ledger.append([handoff('e1'), handoff('e2'), handoff('e3')]);
    expect(back.records.map((r) => r.record.ts)).toEqual(Array(3).fill('2030-01-01T00:00:00.000Z'));
    clock += 120_000;
    const on = ledger.append([handoff('e4'), handoff('e5')]);
    expect(on.records.map((r) => r.record.ts)).toEqual(Array(2).fill('2030-01-01T00:01:00.000Z'));
    expect(ledger.head().ts >= on.records[1].record.ts).toBe(true);
  });
});
