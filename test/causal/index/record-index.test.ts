// src/causal/index/record-index.ts: the index must find exactly what a full scan finds, and stay
// right as the ledger grows (segments written and merged).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { opKey } from '../../../src/causal/index/keys.js';
import { DELTA_MAX_RECORDS } from '../../../src/causal/index/record-index.js';
import { scratchLedger } from './kit.js';

const t = scratchLedger();

describe('the index finds what a full scan finds', () => {
  it('for every key of a mixed ledger, in seq order, with offsets that start those lines', () => {
    t.write(400);
    const index = t.open();
    t.expectAgrees(index);
    const bytes = readFileSync(join(t.dir, 'records.jsonl'));
    for (const p of index.lookup(opKey('op-3'))) expect(JSON.parse(bytes.toString('utf8', p.offset, bytes.indexOf(0x0a, p.offset))).seq).toBe(p.seq);
    index.close();
  });

  it('while the ledger grows: small tails are scanned, larger ones become segments that merge', () => {
    t.write(50);
    let index = t.open();
    expect(index.stats().segments).toBe(0); // 50 records: below the threshold, kept in memory
    index.close();
    let next = 0;
    const seen = new Set<number>();
    for (let round = 0; round < 8; round++) {
      t.grow(DELTA_MAX_RECORDS + 7, next);
      next += DELTA_MAX_RECORDS + 7;
      index = t.open();
      t.expectAgrees(index);
      seen.add(index.stats().segments);
      expect(index.stats().tailRecords).toBe(0);
      index.close();
    }
    // Merging keeps the segment count logarithmic, not one per round.
    expect(Math.max(...seen)).toBeLessThanOrEqual(4);
    expect(readdirSync(join(t.dir, 'index')).filter((f) => f.endsWith('.seg')).length).toBeLessThanOrEqual(4);
  });
});
