// Shared by the index tests (test/causal/index/): a scratch ledger with every kind of record,
// the truth from a full scan, and the index opened on it.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { recordId } from '../../../src/canonical.js';
import { keysOf, opKey } from '../../../src/causal/index/keys.js';
import { RecordIndex, type IndexOptions } from '../../../src/causal/index/record-index.js';
import { Ledger } from '../../../src/ledger.js';
import { LedgerCache } from '../../../src/cache/ledger-cache.js';
import type { Draft, LedgerRecord } from '../../../src/record.js';
import { ledgerPaths } from '../../../src/store/paths.js';
import { DEFAULT_KINDS, buildLedger, serializeLedger, signerFor, writeLedgerFiles } from '../../helpers/gen-ledger.js';
import { scratch } from '../../helpers/cli.js';

export const KINDS = [...DEFAULT_KINDS, 'revoke', 'consume'] as const;

/**
 * A fresh ledger directory per test (registers beforeEach/afterEach), and the helpers on it:
 * `dir` is the `.ledger` directory of the current test.
 */
export function scratchLedger() {
  let s: { dir: string; cleanup: () => void };
  let dir = '';
  // The caches of the test's one Ledger (src/cache/): a new one is a fresh process.
  let cache: LedgerCache;
  beforeEach(() => {
    s = scratch('causal-index-');
    dir = join(s.dir, '.ledger');
    cache = new LedgerCache(true, stateOf(dir));
  });
  afterEach(() => s.cleanup());
  return {
    get dir() {
      return dir;
    },
    /**
     * A generated ledger of `count` records of every kind. It is generated afresh, byte for byte
     * the same each time, so the writer marks of the one it replaces (a per-test state
     * directory beside it) go with it: they would see the regenerated one as a rollback.
     */
    write: (count: number, nonce = 'nonce') => {
      rmSync(stateOf(dir), { recursive: true, force: true });
      writeLedgerFiles(dir, serializeLedger(buildLedger({ count, kinds: KINDS, nonce })));
    },
    open: (opts?: IndexOptions) => RecordIndex.open(ledgerPaths(dir, stateOf(dir), cache), Ledger.open({ dir }).head(), opts),
    /** The ledger's paths with this test's caches (the index's segments are one). */
    paths: () => ledgerPaths(dir, stateOf(dir), cache),
    /** What this test's Ledger keeps is forgotten, as by a fresh process. */
    freshProcess: () => void (cache = new LedgerCache(true, stateOf(dir))),
    /** The index answers every key exactly as a full scan does, and nothing for an unknown key. */
    expectAgrees: (index: RecordIndex) => {
      for (const [k, seqs] of scan(dir)) expect(index.lookup(k).map((p) => p.seq), JSON.stringify(k)).toEqual(seqs);
      expect(index.lookup(opKey('no-such-op'))).toEqual([]);
    },
    /** Appends `n` intents through the library. */
    grow: (n: number, from: number) => {
      const ledger = Ledger.open({ dir, key: signerFor('harness'), stateDir: stateOf(dir) });
      const drafts = Array.from({ length: n }, (_, i) => ({ kind: 'intent', agent: 'grower', logical_operation_id: `grown-${(from + i) % 7}`, execution_id: `x${from + i}`, action: 'a' }) as Draft);
      ledger.append(drafts);
    },
  };
}

const stateOf = (ledgerDir: string) => join(dirname(ledgerDir), 'state');

/** key -> seqs, from a full scan of records.jsonl. */
function scan(dir: string): Map<string, number[]> {
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
