// src/causal/index/tail-memo.ts: a process that opens the index again and again reuses its last
// scan of the tail past the last segment. It must answer exactly what a fresh scan answers, and
// must not be believed once the line that ended its range is no longer there (SPEC 3: the index
// is derived, and trusted no further than a segment is).
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityKey } from '../../../src/causal/index/keys.js';
import { Ledger } from '../../../src/ledger.js';
import type { Draft } from '../../../src/record.js';
import { signerFor } from '../../helpers/gen-ledger.js';
import { runs } from '../../helpers/runs.js';
import { scratchLedger } from './kit.js';

const t = scratchLedger();
const intent = (op: string, exec: string) => ({ kind: 'intent', agent: 'grower', logical_operation_id: op, execution_id: exec, action: 'a' }) as Draft;

describe('when the index is opened again after a few appends in the same process', () => {
  it('answers every key as a full scan does, whatever the appends and opens (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }), (growths) => {
        rmSync(t.dir, { recursive: true, force: true });
        t.freshProcess();
        t.write(20);
        let next = 0;
        for (const n of growths) {
          t.grow(n, next);
          next += n;
          const index = t.open();
          t.expectAgrees(index);
          index.close();
        }
      }),
      { numRuns: runs(8, 200) },
    );
  });
});

describe('when the line that ended the remembered range was replaced', () => {
  it('scans afresh and finds the record that is there now, not the one remembered', () => {
    t.write(10);
    const twin = `${t.dir}-twin`;
    cpSync(t.dir, twin, { recursive: true });
    try {
      // The same ledger up to seq 10, then two different records at seq 10.
      Ledger.open({ dir: t.dir, key: signerFor('harness') }).append(intent('op-a', 'exec-a'));
      Ledger.open({ dir: twin, key: signerFor('harness') }).append(intent('op-b', 'exec-b'));
      t.freshProcess();
      const first = t.open(); // remembers the tail ending with exec-a
      expect(first.lookup(identityKey('intent', 'op-a', 'exec-a')).length).toBe(1);
      first.close();
      // Someone puts the twin's files in place (same genesis, same first lines).
      for (const f of ['records.jsonl', 'HEAD']) cpSync(join(twin, f), join(t.dir, f));
      const again = t.open();
      expect(again.lookup(identityKey('intent', 'op-b', 'exec-b')).map((p) => p.seq)).toEqual([10]);
      expect(again.lookup(identityKey('intent', 'op-a', 'exec-a'))).toEqual([]);
      t.expectAgrees(again);
      again.close();
      expect(readFileSync(join(t.dir, 'records.jsonl'))).toEqual(readFileSync(join(twin, 'records.jsonl')));
    } finally {
      rmSync(twin, { recursive: true, force: true });
    }
  });
});
