// The derived index (src/causal/record-index.ts): it must find exactly what a full scan finds,
// stay right as the ledger grows (segments written and merged), drop segments that no longer
// match the ledger, and never be believed about what a record says (verified.ts reads bytes).
import { openSync, readFileSync, readdirSync, rmSync, writeSync, closeSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordId } from '../../src/canonical.js';
import { DELTA_MAX_RECORDS, RecordIndex, consumeKey, idKey, identityKey, keysOf, lineId, lineIdFast, opKey, revokeKey } from '../../src/causal/record-index.js';
import { CausalView } from '../../src/causal/view.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft, LedgerRecord } from '../../src/record.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { DEFAULT_KINDS, buildLedger, serializeLedger, signerFor, writeLedgerFiles } from '../helpers/gen-ledger.js';
import { scratch } from '../helpers/cli.js';

let s: { dir: string; cleanup: () => void };
let dir: string;
beforeEach(() => {
  s = scratch('causal-index-');
  dir = join(s.dir, '.ledger');
});
afterEach(() => s.cleanup());

const KINDS = [...DEFAULT_KINDS, 'revoke', 'consume'] as const;

function write(count: number, nonce = 'nonce') {
  writeLedgerFiles(dir, serializeLedger(buildLedger({ count, kinds: KINDS, nonce })));
}

/** key -> seqs, from a full scan of records.jsonl. */
function scan(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const lines = readFileSync(join(dir, 'records.jsonl'), 'utf8').trim().split('\n');
  for (const line of lines) {
    const r = JSON.parse(line) as LedgerRecord;
    for (const k of keysOf(r, recordId(r))) {
      if (!out.has(k)) out.set(k, []);
      out.get(k)!.push(r.seq);
    }
  }
  return out;
}

function expectAgrees(index: RecordIndex): void {
  const truth = scan();
  for (const [k, seqs] of truth) expect(index.lookup(k).map((p) => p.seq), JSON.stringify(k)).toEqual(seqs);
  expect(index.lookup(opKey('no-such-op'))).toEqual([]);
}

function open(): RecordIndex {
  const paths = ledgerPaths(dir);
  return RecordIndex.open(paths, Ledger.open({ dir }).head());
}

function grow(n: number, from: number) {
  const ledger = Ledger.open({ dir, key: signerFor('harness') });
  const drafts = Array.from({ length: n }, (_, i) => ({ kind: 'intent', agent: 'grower', logical_operation_id: `grown-${(from + i) % 7}`, execution_id: `x${from + i}`, action: 'a' }) as Draft);
  ledger.append(drafts);
}

describe('the index finds what a full scan finds', () => {
  it('for every key of a mixed ledger, in seq order, with offsets that start those lines', () => {
    write(400);
    const index = open();
    expectAgrees(index);
    const bytes = readFileSync(join(dir, 'records.jsonl'));
    for (const p of index.lookup(opKey('op-3'))) expect(JSON.parse(bytes.toString('utf8', p.offset, bytes.indexOf(0x0a, p.offset))).seq).toBe(p.seq);
    index.close();
  });

  it('while the ledger grows: small tails are scanned, larger ones become segments that merge', () => {
    write(50);
    let index = open();
    expect(index.stats().segments).toBe(0); // 50 records: below the threshold, kept in memory
    index.close();
    let next = 0;
    const seen = new Set<number>();
    for (let round = 0; round < 8; round++) {
      grow(DELTA_MAX_RECORDS + 7, next);
      next += DELTA_MAX_RECORDS + 7;
      index = open();
      expectAgrees(index);
      seen.add(index.stats().segments);
      expect(index.stats().tailRecords).toBe(0);
      index.close();
    }
    // Merging keeps the segment count logarithmic, not one per round.
    expect(Math.max(...seen)).toBeLessThanOrEqual(4);
    expect(readdirSync(join(dir, 'index')).filter((f) => f.endsWith('.seg')).length).toBeLessThanOrEqual(4);
  });
});

describe('when the index does not match the ledger', () => {
  it('a truncated segment is dropped and rebuilt', () => {
    write(400);
    open().close();
    const seg = readdirSync(join(dir, 'index')).find((f) => f.endsWith('.seg'))!;
    truncateSync(join(dir, 'index', seg), 100);
    const index = open();
    expectAgrees(index);
    index.close();
  });

  it('a ledger replaced under it (another genesis) is indexed afresh', () => {
    write(400, 'first');
    open().close();
    rmSync(join(dir, 'records.jsonl'));
    write(300, 'second');
    const index = open();
    expectAgrees(index);
    index.close();
  });

  it('a segment whose last record changed is dropped', () => {
    write(400);
    open().close();
    // Another ledger with the same genesis but different later records (a fork).
    writeLedgerFiles(dir, serializeLedger(buildLedger({ count: 400, kinds: KINDS, edit: (u, seq) => (seq === 399 ? { ...u, agent: 'forked' } : u) })));
    const index = open();
    expectAgrees(index);
    index.close();
  });

  it('postings that point at the wrong line are caught when the record is read, not believed', () => {
    write(400);
    open().close();
    const segPath = join(dir, 'index', readdirSync(join(dir, 'index')).find((f) => f.endsWith('.seg'))!);
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
    const paths = ledgerPaths(dir);
    const view = CausalView.open(paths, Ledger.open({ dir }).head(), { trust: null });
    expect(view.opRecords('op-3')).toEqual([]);
    expect(view.problems.length).toBeGreaterThan(0);
    expect(view.problems[0].message).toMatch(/says seq 0|is not the genesis|record at seq/);
    view.close();
  });
});

describe('keys', () => {
  it('file each kind where the causal layer looks for it', () => {
    const base = { v: 1, seq: 1, prev_tail_hash: null, ts: '', agent: 'a', sig: {} };
    const id = 'sha256:' + 'a'.repeat(64);
    const t = 'sha256:' + 'b'.repeat(64);
    expect(keysOf({ ...base, kind: 'intent', logical_operation_id: 'o', execution_id: 'e', action: 'x' } as unknown as LedgerRecord, id)).toEqual([idKey(id), opKey('o'), identityKey('intent', 'o', 'e')]);
    expect(keysOf({ ...base, kind: 'revoke', target: t, reason: 'r' } as unknown as LedgerRecord, id)).toEqual([idKey(id), revokeKey(t)]);
    expect(keysOf({ ...base, kind: 'consume', handoff: t } as unknown as LedgerRecord, id)).toEqual([idKey(id), consumeKey(t)]);
    expect(keysOf({ ...base, kind: 'checkpoint', logical_operation_id: 'o' } as unknown as LedgerRecord, id)).toEqual([idKey(id)]);
  });
});

describe('lineId, the id computed from a canonical line without re-canonicalising', () => {
  it('equals recordId for every kind, and falls back when the line has no sig of that shape', () => {
    const led = buildLedger({ count: 60, kinds: KINDS });
    for (const line of led.lines) {
      const text = line.trimEnd();
      const parsed = JSON.parse(text);
      expect(lineId(text, parsed)).toBe(recordId(parsed));
      // ...and the fast path itself is taken for every record a writer of ours makes.
      expect(lineIdFast(text), text.slice(0, 60)).toBe(recordId(parsed));
    }
    const odd = { agent: 'a', kind: 'x', sig: { alg: 'other' } };
    expect(lineId(JSON.stringify(odd), odd)).toBe(recordId(odd));
  });
});
