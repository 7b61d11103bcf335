// src/causal/index/segments.ts: segments that no longer match the ledger are dropped and the
// ledger indexed again, and the index is never believed about what a record says (verified.ts
// reads the bytes).
import { openSync, readdirSync, readFileSync, rmSync, writeSync, closeSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CausalView } from '../../../src/causal/view.js';
import { Ledger } from '../../../src/ledger.js';
import { ledgerPaths } from '../../../src/store/paths.js';
import { buildLedger, serializeLedger, writeLedgerFiles } from '../../helpers/gen-ledger.js';
import { KINDS, scratchLedger } from './kit.js';

const t = scratchLedger();

describe('when the index does not match the ledger', () => {
  it('a truncated segment is dropped and rebuilt', () => {
    t.write(400);
    t.open().close();
    const seg = readdirSync(join(t.dir, 'index')).find((f) => f.endsWith('.seg'))!;
    truncateSync(join(t.dir, 'index', seg), 100);
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('a ledger replaced under it (another genesis) is indexed afresh', () => {
    t.write(400, 'first');
    t.open().close();
    rmSync(join(t.dir, 'records.jsonl'));
    t.write(300, 'second');
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('a segment whose last record changed is dropped', () => {
    t.write(400);
    t.open().close();
    // Another ledger with the same genesis but different later records (a fork).
    writeLedgerFiles(t.dir, serializeLedger(buildLedger({ count: 400, kinds: KINDS, edit: (u, seq) => (seq === 399 ? { ...u, agent: 'forked' } : u) })));
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('postings that point at the wrong line are caught when the record is read, not believed', () => {
    t.write(400);
    t.open().close();
    const segPath = join(t.dir, 'index', readdirSync(join(t.dir, 'index')).find((f) => f.endsWith('.seg'))!);
    // Overwrite every posting's offset with the offset of line 0 (the genesis).
    const buf = readFileSync(segPath);
    const buckets = buf.readDoubleLE(8 + 5 * 8);
    const entries = buf.readDoubleLE(8 + 6 * 8);
    const postings = buf.readDoubleLE(8 + 7 * 8);
    const at = 136 + (buckets + 1) * 4 + entries * 16;
    const fd = openSync(segPath, 'r+');
    for (let k = 0; k < postings; k++) writeSync(fd, Buffer.alloc(8), 0, 8, at + k * 12 + 4);
    closeSync(fd);
    expect(statSync(segPath).size).toBe(buf.length);
    const paths = ledgerPaths(t.dir);
    const view = CausalView.open(paths, Ledger.open({ dir: t.dir }).head(), { trust: null });
    expect(view.opRecords('op-3')).toEqual([]);
    expect(view.problems.length).toBeGreaterThan(0);
    expect(view.problems[0].message).toMatch(/says seq 0|is not the genesis|record at seq/);
    view.close();
  });
});
