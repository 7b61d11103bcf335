// Speed (issue 22's targets: `checkpoint` and the other writers <= 1.8x `node -e ''` on a
// 200,000-record ledger): the fold a Ledger ends a fold with, kept by that Ledger (../cache/
// 'fold', in memory) for its next fold: a writer folds on its advisory check, under the writer
// lock and for the views, and the second and third read only the records after the first.
// Measured (npm run bench -- caches): without it a `checkpoint` costs 1.09x the CPU time, its
// three folds each starting from the disk memo (fold-memo.ts).
//
// What is kept: as of record `seq` (its line ending at byte `end`, its id `id`), every record the
// work-log fold uses and every record the outcome fold still holds, each with its offset, id and
// the record itself. fold-memo.ts decides whether a kept fold is believed (the chain through HEAD
// checked, and the line ending at `end` still record `seq` with id `id`: by the hash chain, every
// record before it is then the one that was read); this file only keeps and finds it.
import type { LedgerRecord } from '../record.js';
import type { RecordAt } from '../store/read.js';
import type { LedgerCache } from '../cache/ledger-cache.js';

/**
 * A record a fold read, with where it is: the record parsed once and frozen (deeply), so the
 * folds of one Ledger share it without a caller able to change it for another. Without it (an
 * outcome record of a long tail), only where it is, for the disk memo.
 */
export interface Kept {
  seq: number;
  offset: number;
  id: string;
  record?: LedgerRecord;
}

/** A fold's starting point: every work-log record and held outcome through `seq`. */
export interface Loaded {
  seq: number;
  end: number;
  id: string;
  work: Kept[];
  outcomes: Kept[];
}

/** Policy: a fold whose outcome fold holds more records than this, not read whole, is not kept (the disk memo serves). */
export const KEEP_MAX = 4096;

/**
 * Freezes a parsed record and everything in it (JSON: objects and arrays). Speed: frozen before
 * its members are walked, with for-in (no array of values made per object): 0.3 ms for the 160
 * records of the bench's fold, against 0.5-0.8 ms walking Object.values first.
 */
function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/** A record, frozen in place (one this fold parsed itself, shared with nobody yet). */
export const freeze = (r: LedgerRecord): LedgerRecord => deepFreeze(r);

export const atOf = (k: Kept): RecordAt => {
  if (k.record === undefined) throw new Error(`kept fold: record seq ${k.seq} was not kept`); // a fold never starts from one that was not kept
  return { seq: k.seq, offset: k.offset, id: k.id, record: k.record };
};

// This Ledger's (../cache/ 'fold').
interface InMemory { key: string; fold: Loaded | null }

export function keptInProcess(cache: LedgerCache | undefined, key: string): Loaded | null {
  const m = cache?.inMemory<InMemory>('fold').get();
  return m?.key === key ? m.fold : null;
}

export function keepInProcess(cache: LedgerCache | undefined, key: string, fold: Loaded | null): void {
  cache?.inMemory<InMemory>('fold').set({ key, fold });
}
