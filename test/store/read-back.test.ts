// `ledger log --limit N` reads backwards from HEAD's tail (src/store/read-back.ts): the newest
// records, exactly as a forward scan through HEAD would show them, each bound to HEAD by the
// chain (its id is what the record after it names); a line on the way that is not that record
// is OP_CORRUPT, and nothing is written.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ledger } from '../../src/ledger.js';
import { recordsBackward } from '../../src/store/read-back.js';
import { readRecords } from '../../src/store/read.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { realFileOps } from '../../src/fs/ops.js';
import { buildLedger, serializeLedger, writeLedgerFiles } from '../helpers/gen-ledger.js';
import { scratch, snapshot } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';

let s: { dir: string; cleanup: () => void };
let dir: string;
beforeEach(() => {
  s = scratch('read-back-');
  dir = join(s.dir, '.ledger');
});
afterEach(() => s.cleanup());

const KINDS = ['start', 'checkpoint', 'handoff', 'intent', 'finish'] as const;

describe('when a user asks for the newest records of a ledger', () => {
  it('backwards from the tail gives the forward scan reversed, with any limit and filter', () => {
    writeLedgerFiles(dir, serializeLedger(buildLedger({ count: 300 })));
    const paths = ledgerPaths(dir);
    const head = readHead(realFileOps, paths)!;
    const forward = [...readRecords(paths, head)];
    expect([...recordsBackward(paths, head)]).toEqual([...forward].reverse());
    const ledger = Ledger.open({ dir });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.option(fc.constantFrom(...KINDS)), fc.option(fc.integer({ min: 0, max: 70 })), (limit, kind, op) => {
        const want = forward
          .filter((r) => (kind === null || r.record.kind === kind) && (op === null || (r.record as { logical_operation_id?: string }).logical_operation_id === `op-${op}`))
          .reverse()
          .slice(0, limit);
        const got = ledger.log({ limit, ...(kind !== null ? { kind } : {}), ...(op !== null ? { op: `op-${op}` } : {}) });
        expect(got).toEqual(want);
      }),
      { numRuns: runs(60, 2000) },
    );
    expect(ledger.log({ limit: 0 })).toEqual([]);
  });

  it('the newest three lines are all the backward read reads; the log still finds damage further back (the chain check)', () => {
    const led = buildLedger({ count: 400 });
    const files = serializeLedger(led);
    // The first record after the genesis is made unreadable: the backward read of the newest
    // three never reaches it, but `log` checks the whole chain first (issue 13 finding 9;
    // the verified-chain memo makes that the new bytes only) and refuses.
    files.records[led.offsets[1] + 1] = 0x00;
    writeLedgerFiles(dir, files);
    const paths = ledgerPaths(dir);
    const back = recordsBackward(paths, readHead(realFileOps, paths)!);
    expect([back.next(), back.next(), back.next()].map((r) => (r.value as { seq: number }).seq)).toEqual([399, 398, 397]);
    expect(() => Ledger.open({ dir }).log({ limit: 3 })).toThrow(expect.objectContaining({ code: 'OP_CORRUPT' }));
  });
});

describe('when a line near the tail is not the record the chain names', () => {
  const cases: [string, (b: Buffer, start: number) => void][] = [
    ['a byte of its text changed (its id no longer matches the next record\'s link)', (b, start) => {
      const at = b.indexOf('"ts":"2026-', start) + '"ts":"2026-'.length;
      b[at + 1] = b[at + 1] === 0x31 ? 0x32 : 0x31;
    }],
    ['it is not JSON', (b, start) => void (b[start] = 0x78)],
    ['it is not UTF-8', (b, start) => void (b[start + 2] = 0xff)],
  ];
  for (const [name, damage] of cases) {
    it(`${name}: log refuses with OP_CORRUPT and changes nothing`, () => {
      const led = buildLedger({ count: 50 });
      const files = serializeLedger(led);
      damage(files.records, led.offsets[47]);
      writeLedgerFiles(dir, files);
      const before = snapshot(dir);
      expect(() => Ledger.open({ dir }).log({ limit: 5 })).toThrow(expect.objectContaining({ code: 'OP_CORRUPT' }));
      expect(snapshot(dir)).toEqual(before);
      // The newest two are intact and linked to HEAD: the backward read of those still reads
      // them, and only the log's chain check refuses.
      const paths = ledgerPaths(dir);
      const back = recordsBackward(paths, readHead(realFileOps, paths)!);
      expect([back.next(), back.next()].map((r) => (r.value as { seq: number }).seq)).toEqual([49, 48]);
      expect(() => Ledger.open({ dir }).log({ limit: 2 })).toThrow(expect.objectContaining({ code: 'OP_CORRUPT' }));
    });
  }

  it('a line swapped for another valid record of the same seq from another ledger: refused, not shown', () => {
    const a = buildLedger({ count: 20 });
    const b = buildLedger({ count: 20, nonce: 'other' });
    const lines = [...a.lines];
    lines[17] = b.lines[17];
    writeLedgerFiles(dir, { records: Buffer.from(lines.join('')), head: Buffer.from(a.headLine), trust: JSON.stringify(a.trust) });
    expect(() => Ledger.open({ dir }).log({ limit: 5 })).toThrow(expect.objectContaining({ code: 'OP_CORRUPT' }));
    expect(readFileSync(join(dir, 'HEAD'), 'utf8')).toBe(a.headLine);
  });
});
