// Speed, paying for issue 14's targets (`start`, `checkpoint`, `status`, `resume` <= 1.5x
// `node -e ''` on a 200,000-record ledger): the fold a command ends with, kept for the next one:
// in this process (a writer folds on its advisory check, under the lock and for the views), and
// in the per-user state directory for this user's next command, so that it reads neither the
// disk memo nor the records it locates, only the records after the kept fold.
//
// What is kept: as of record `seq` (its line ending at byte `end`, its id `id`), every record the
// work-log fold uses and every record the outcome fold still holds, each with its offset, id and
// the record itself. fold-memo.ts decides whether a kept fold is believed (the chain through HEAD checked, and
// the line ending at `end` still record `seq` with id `id`: by the hash chain, every record
// before it is then the one that was read); this file only keeps and finds it.
//
// Policy: the user's copy lives in the state directory (store/state-dir.ts: the user's own, never
// `.ledger/`, which anyone may have written), is written without fsync (a lost or torn copy is
// no copy: the disk memo is read instead), and only for a work log of at most KEEP_MAX records;
// it is rewritten when it is more than USER_EVERY records behind, so most commands only read it.
import type { LedgerRecord } from '../record.js';
import type { RecordAt } from '../store/read.js';
import { ledgerStateName } from '../store/state-dir.js';
import type { LedgerCache } from '../cache/ledger-cache.js';

/**
 * A record a fold read, with where it is: the record parsed once and frozen (deeply), so folds in
 * one process share it without a caller able to change it for another. Without it (a fold too
 * long to keep), only where it is, for the disk memo.
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

/** Policy: a work log longer than this is not copied to the state directory (the disk memo serves it). */
export const KEEP_MAX = 4096;
/** Policy: the user's copy is rewritten once it is more than this many records behind HEAD. */
export const USER_EVERY = 64;

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

// This Ledger's (../cache/ 'fold'): the fold, with the seq of the user's copy as this Ledger last
// read or wrote it.
interface InMemory { key: string; fold: Loaded | null; userSeq: number | null }

export function keptInProcess(cache: LedgerCache | undefined, key: string): Loaded | null {
  const m = cache?.inMemory<InMemory>('fold').get();
  return m?.key === key ? m.fold : null;
}

export function keepInProcess(cache: LedgerCache | undefined, key: string, fold: Loaded | null, userSeq: number | null): void {
  cache?.inMemory<InMemory>('fold').set({ key, fold, userSeq });
}

/** The seq of the user's copy as this Ledger last read or wrote it; null: never. */
export function userSeqKept(cache: LedgerCache | undefined, key: string): number | null {
  const m = cache?.inMemory<InMemory>('fold').get();
  return m?.key === key ? m.userSeq : null;
}

// This user's.
const userFile = (cache: LedgerCache, realDir: string, genesis: string) => cache.userFile('fold', 'fold', `${ledgerStateName(realDir, genesis)}.json`);

/** An entry of the user's copy: a record as parsed, with its seq, offset and id beside it. */
const isKept = (x: unknown): x is Kept & { record: LedgerRecord } => {
  const k = x as Kept;
  return k !== null && typeof k === 'object' && Number.isSafeInteger(k.seq) && Number.isSafeInteger(k.offset) && typeof k.id === 'string'
    && k.record !== null && typeof k.record === 'object' && !Array.isArray(k.record) && (k.record as { seq?: unknown }).seq === k.seq;
};
const inOrder = (list: Kept[]) => list.every((k, i) => i === 0 || k.seq > list[i - 1].seq);

/** The user's copy for this ledger directory and genesis, or null (none, torn, another ledger's, no caches). */
export function keptForUser(cache: LedgerCache | undefined, realDir: string, genesis: string): Loaded | null {
  if (!cache) return null;
  // Policy (header): a copy that cannot be read, or is not JSON, is no copy.
  const v = userFile(cache, realDir, genesis).get() as ({ v?: unknown; dir?: unknown; genesis?: unknown } & Partial<Loaded>) | null;
  if (v === null || typeof v !== 'object' || v.v !== 2 || v.dir !== realDir || v.genesis !== genesis) return null;
  if (!Number.isSafeInteger(v.seq) || !Number.isSafeInteger(v.end) || typeof v.id !== 'string') return null;
  if (!Array.isArray(v.work) || !Array.isArray(v.outcomes) || !v.work.every(isKept) || !v.outcomes.every(isKept) || !inOrder(v.work) || !inOrder(v.outcomes)) return null;
  const seq = v.seq!;
  if (v.work.some((k) => k.seq > seq) || v.outcomes.some((k) => k.seq > seq)) return null;
  // Speed: the records are in the copy as JSON values, parsed with it (one JSON.parse, not one
  // per record: 1.2 ms against 2 ms for the bench's fold), and frozen here.
  const keep = (list: Kept[]): Kept[] => list.map((k) => ({ seq: k.seq, offset: k.offset, id: k.id, record: deepFreeze(k.record!) }));
  return { seq, end: v.end!, id: v.id!, work: keep(v.work), outcomes: keep(v.outcomes) };
}

/** Writes the user's copy; best effort (a state directory that refuses it costs the next command a memo read). */
export function keepForUser(cache: LedgerCache | undefined, realDir: string, genesis: string, fold: Loaded): void {
  if (!cache || fold.work.length > KEEP_MAX) return;
  const strip = (list: Kept[]) => list.map(({ seq, offset, id, record }) => ({ seq, offset, id, record }));
  userFile(cache, realDir, genesis).set({ v: 2, dir: realDir, genesis, seq: fold.seq, end: fold.end, id: fold.id, work: strip(fold.work), outcomes: strip(fold.outcomes) });
}
