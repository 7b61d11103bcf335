// Speed, paying for stated targets (issue 14: on a ledger of 200,000 CI records beside a few
// dozen work items, `start`, `checkpoint`, `resume` and `status` each <= 1.5x `node -e ''`): the
// work-log fold and the outcome fold (workitems.ts, unresolved.ts) without reading every record.
//
// The fold memo, `<ledger>/index/work-fold.json`, is derived data (SPEC 3) beside the record
// index: as of one record (seq, the byte offset where its line ends, its id) it locates every
// record the work-log fold took (the genesis and every start, checkpoint, finish, release and
// note, and the handoff, consume, consume_failed and revoke records of the work items' story:
// workitems.ts WorkLogFold) and the records the outcome fold still holds (intents still
// waiting, ambiguous and timed-out outcomes nothing resolved). A read then folds those records
// and every record after the memo, in seq order, which gives exactly the state a fold over the
// whole ledger gives: a record the work-log fold does not take changes nothing, and whether it
// takes one depends only on the records it took before; the outcome fold's state after any
// prefix is a function of the records it holds (re-adding them in seq order rebuilds it).
//
// What it is trusted for, and what not (as the record index, ../causal/index/README.md):
// - It only locates records. Every record it names is read again and verified from its bytes
//   (canonical, its seq, its id, and linked to by the record after it) before a fold
//   uses it (readLocated says how), and must be of a kind its list may hold (WORK_FOLD_KINDS,
//   OUTCOME_KINDS); the record that ends it must be the one it names. Any of that failing, or
//   a memo that does not parse, is of another version (MEMO_VERSION: a version-1 memo located
//   no story records), or is for another genesis, is no memo: the whole ledger is folded, as
//   without it, and a fresh memo replaces it. A record of a story kind that the fold would not
//   take (a CI's handoff named by a planted memo) is folded and left, as in a full fold.
// - Policy: it is trusted for completeness (that it leaves no work record out) as far as it
//   matches the ledger, like an index segment: someone who can rewrite files under the ledger
//   directory can hide a record from it (docs/guarantees.md). `ledger audit` never reads it.
// - Policy: it is rewritten (durably, ../fs/durable.ts) when more than MEMO_EVERY records lie
//   past it, by whichever command folds then, reader or writer; a ledger directory that refuses
//   the write costs the next command the same fold again, never a failure.
// - What it holds does not grow with what was resolved: an outcome a standing success resolved
//   is dropped. A revocation can take that back (a revoked success resolves nothing), so a fold
//   whose tail revokes a record that is not among its starting point's outcome records starts
//   over from the genesis (foldFrom), and writes a memo past the revocation.
//
// Two things make a command that folds more than once cheap (a checkpoint folds on its advisory
// check, under the writer lock and for the views; issue 14's targets):
// - The chain is checked first (store/read.ts assertPublishedChain, which readRecords makes
//   anyway, through the verified-chain memo): every line through HEAD is then known to be a
//   canonical record at its seq, linked to the one before. A located record is then only read,
//   parsed and its seq compared; its id is its line's hash. (Without that check first, each
//   located record would need its own canonical check and link to the next line.) The records
//   after the memo are read the same way, on the same open file: parsed, each id the next
//   line's prev_tail_hash, which the check found equal to its hash.
// - The fold a command ends with is kept by its Ledger (fold-kept.ts), with the id of each
//   record it holds and the record itself. A later fold believes a kept fold exactly as far as
//   the ledger still holds it: the line ending where it ends must be its record (seq and id), and
//   the chain through the new HEAD is checked as above, so by the hash chain every record before
//   it is the one it read. Then only the records after it are read from disk. A fold starts from
//   the later of the kept fold and the disk memo (startingPoint). Both are caches (../cache/):
//   without the Ledger's, every fold reads every record.
import { join } from 'node:path';
import { lineEndingAt, linesForward, openToRead } from '../fs/lines.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import { LedgerError, RUN_AUDIT } from '../errors.js';
import { PROGRESS_EVERY, reportProgress } from '../progress.js';
import type { Head, LedgerRecord } from '../record.js';
import type { LedgerPaths } from '../store/paths.js';
import { assertPublishedChain, type RecordAt } from '../store/read.js';
import { LineProblem, decodeRecordLine } from '../record-line.js';
import { OutcomeFold } from './unresolved.js';
import { WORK_FOLD_KINDS, WorkLogFold, foldWorkLog, type WorkLog } from './workitems.js';
import { KEEP_MAX, atOf, freeze as frozenRecordOf, keepInProcess, keptInProcess, type Kept, type Loaded } from './fold-kept.js';

export const MEMO_FILE = 'work-fold.json';
/** Version 2 (issue 26): `work` locates the story records too; a version-1 memo is not believed. */
export const MEMO_VERSION = 2;
/** Policy: past this many records after the memo, the command that folds writes a new one. */
export const MEMO_EVERY = 256;
/** Records are usually well under 4 KiB: the byte before a located record and the record, in one read. */
const LOCATED_READ = 8192;
/**
 * Policy: a fold whose tail (the records after its starting point) is longer than this keeps its
 * outcome records only where they are, not whole (every intent and handoff of a long CI batch
 * would cost memory); the few the outcome fold still holds at the end are read again.
 */
const PROCESS_TAIL_MAX = 4096;
/** A fold kept by this Ledger at most this many records behind HEAD is taken without reading the memo. */
const NEAR = 64;

const OUTCOME_KINDS: ReadonlySet<string> = new Set(['intent', 'handoff', 'finish']);

type Locator = [seq: number, offset: number];

interface Memo {
  v: typeof MEMO_VERSION;
  genesis: string;
  /** The memo is as of record `seq`, whose line ends at byte `end` and whose id is `id`. */
  seq: number;
  end: number;
  id: string;
  /** Every record the work-log fold took through `seq`, in seq order. */
  work: Locator[];
  /** The records the outcome fold holds after `seq`, in seq order. */
  outcomes: Locator[];
}

export interface Folds {
  log: WorkLog;
  outcomes: OutcomeFold;
}

export interface FoldOptions {
  ops?: FileOps;
  /** Whether this command may write a new memo (default true). */
  write?: boolean;
}

export function memoPath(paths: LedgerPaths): string {
  return join(paths.dir, 'index', MEMO_FILE);
}

type Source = 'process' | 'memo' | null;

const keyOf = (paths: LedgerPaths, head: Head) => `${paths.records}\0${head.genesis}`;

/**
 * Runs `body` with records.jsonl open, its chain through `head` checked (header), and where the
 * fold starts (startingPoint), or nothing (from the genesis).
 */
function withChecked<T>(paths: LedgerPaths, head: Head, ops: FileOps, body: (fd: number, start: Loaded | null, source: Source) => T): T {
  const fd = openToRead(ops, paths.records);
  try {
    // The chain first (header): what makes a located record's bytes enough to believe.
    assertPublishedChain(ops, paths, head, fd);
    const start = startingPoint(ops, fd, paths, head);
    return body(fd, start?.fold ?? null, start?.source ?? null);
  } finally {
    ops.close(fd);
  }
}

/**
 * Where a fold starts: the later of this Ledger's kept fold (fold-kept.ts) and the disk memo that
 * the ledger still holds. Policy (issue 22): the later, not the first found: a fold kept before
 * a long batch of records is far behind the memo the first fold after the batch wrote. A kept
 * fold at most NEAR records behind HEAD is taken without reading the memo (the records after it
 * cost less than the memo's).
 */
function startingPoint(ops: FileOps, fd: number, paths: LedgerPaths, head: Head): { fold: Loaded; source: Source } | null {
  const p = believed(ops, fd, paths, head, keptInProcess(paths.cache, keyOf(paths, head)));
  if (p && head.seq - p.seq <= NEAR) return { fold: p, source: 'process' };
  const m = memoFile(paths, head);
  if (m && m.seq > (p?.seq ?? -1)) {
    const loaded = loadMemo(ops, fd, paths, head, m);
    if (loaded) return { fold: loaded, source: 'memo' };
  }
  return p ? { fold: p, source: 'process' } : null;
}

/** A kept fold, if the ledger still holds it (header): it ends where it ended, at its record. */
function believed(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, k: Loaded | null): Loaded | null {
  if (!k || k.seq > head.seq || k.end > head.size) return null;
  // The genesis is a work-log record: a kept fold without it at seq 0 left something out.
  if (k.work[0]?.seq !== 0 || k.work[0].id !== head.genesis) return null;
  return endsAt(ops, fd, paths, head, k) ? k : null;
}

/**
 * The records after `start` (from the genesis without one) through HEAD, from the open `fd`
 * whose chain withChecked has checked: each line is parsed, and its id is the next line's
 * prev_tail_hash (HEAD's tail for the last), which the chain check found equal to its hash. A
 * line that does not parse, or is not at its seq, means the file changed under the check.
 */
function* verifiedTail(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, start: Loaded | null): Generator<RecordAt> {
  let pending: { seq: number; offset: number; record: LedgerRecord } | null = null;
  let seq = start ? start.seq + 1 : 0;
  for (const { bytes, offset } of linesForward(ops, fd, paths.records, start ? start.end : 0, head.size)) {
    const got = decodeRecordLine(bytes, { seq, chained: true, needId: false });
    if (got instanceof LineProblem) throw changedUnder(paths, offset);
    const record = got.record;
    if (pending) yield { ...pending, id: record.prev_tail_hash as string };
    pending = { seq, offset, record };
    seq++;
  }
  if (pending) yield { ...pending, id: head.tail };
}

const changedUnder = (paths: LedgerPaths, offset: number) =>
  new LedgerError('OP_CORRUPT', `${paths.records} changed while it was read: the line at byte ${offset} is not the record the chain check saw there`, { path: paths.records, offset }, RUN_AUDIT);

/**
 * The work log and the outcome fold of the published records through `head`, as a fold over
 * every record would give them, reading only the records where the fold starts (startingPoint)
 * and those after it. The fold it ends with is kept (fold-kept.ts), whatever the length of its
 * tail, and the disk memo is written past MEMO_EVERY records.
 */
export function readFolds(paths: LedgerPaths, head: Head, opts: FoldOptions = {}): Folds {
  const ops = opts.ops ?? realFileOps;
  // A starting point whose tail revokes a record it does not hold is left for the genesis (see
  // foldFrom): at most one fold over every record, which then writes a memo past the revocation.
  return withChecked(paths, head, ops, (fd, start) => foldFrom(ops, fd, paths, head, opts, start) ?? foldFrom(ops, fd, paths, head, opts, null)!);
}

/**
 * readFolds from `start` (null: the genesis); null, having kept and written nothing, when a
 * record after `start` revokes one before it that is not among the outcome records `start` holds.
 * Policy (a soak run found it: a timed-out outcome, a success that resolved it, a memo, then the
 * success revoked): the outcome fold drops what a standing success or cancel resolved, and a
 * later revocation of that resolver makes it unresolved again, which a fold from the memo, no
 * longer holding it, cannot see. Revocations are rare and name their target by id: any that
 * names a record from before the starting point that the starting point does not hold sends the
 * fold back to the genesis, rather than holding every resolved outcome and resolver for ever.
 */
function foldFrom(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, opts: FoldOptions, start: Loaded | null): Folds | null {
  const fromSeq = start ? start.seq + 1 : 0;
  // The ids a revocation in the tail may name without sending the fold back: the outcome records
  // the starting point holds, and the tail's own records as they are read. Not its work records:
  // the outcome fold is not rebuilt from them (a finish that resolved a timeout, revoked later,
  // is one; the work-log fold takes its revocation from what it holds itself).
  const known = start ? new Set(start.outcomes.map((k) => k.id)) : null;
  const outcomes = new OutcomeFold();
  for (const k of start?.outcomes ?? []) outcomes.add(atOf(k));
  const tailLength = head.seq - fromSeq + 1;
  const build = opts.write !== false && tailLength > MEMO_EVERY;
  // The work-log records are kept whole (the fold holds them anyway); the outcome records only
  // for a short tail: for a long one, where each is, and the few the outcome fold still holds
  // at the end are read again.
  const keepOutcomes = tailLength <= PROCESS_TAIL_MAX;
  const workFold = new WorkLogFold();
  // Only what the fold took is kept: a record a planted memo named that the fold left is not
  // named again.
  const work: Kept[] = start ? start.work.filter((k) => workFold.add(atOf(k))) : [];
  const outcomeAt = new Map<number, Kept | number>(start ? start.outcomes.map((k) => [k.seq, k]) : []);
  for (const r of verifiedTail(ops, fd, paths, head, start)) {
    if (known) {
      if (r.record.kind === 'revoke' && !known.has(String(r.record.target))) return null;
      known.add(r.id);
    }
    outcomes.add(r);
    if ((r.seq - fromSeq + 1) % PROGRESS_EVERY === 0) reportProgress('reading the work log', r.seq - fromSeq + 1, head.seq - fromSeq + 1);
    const isWork = workFold.add(r);
    const isOutcome = OUTCOME_KINDS.has(r.record.kind);
    if (!isWork && !isOutcome) continue;
    // Kept records are frozen (fold-kept.ts): the next fold of this Ledger shares them.
    const k: Kept = { seq: r.seq, offset: r.offset, id: r.id, ...(isWork || keepOutcomes ? { record: frozenRecordOf(r.record) } : {}) };
    if (isWork) work.push(k);
    if (isOutcome) outcomeAt.set(r.seq, k.record ? k : r.offset);
  }
  const log = workFold.log;
  const heldSeqs = [...outcomes.pendingIntents(), ...outcomes.unresolvedOutcomes()].map((x) => x.seq).sort((a, b) => a - b);
  const held: Locator[] = heldSeqs.map((seq) => {
    const k = outcomeAt.get(seq)!;
    return [seq, typeof k === 'number' ? k : k.offset];
  });
  if (build) writeMemo(ops, paths, { v: MEMO_VERSION, genesis: head.genesis, seq: head.seq, end: head.size, id: head.tail, work: work.map((k) => [k.seq, k.offset]), outcomes: held });
  // The held outcome records whole, for the fold kept: read again where only their place was
  // (Policy: not for more than KEEP_MAX of them; then no fold is kept, and the memo serves).
  const keptOutcomes = heldSeqs.every((seq) => typeof outcomeAt.get(seq) !== 'number')
    ? heldSeqs.map((seq) => outcomeAt.get(seq) as Kept)
    : held.length <= KEEP_MAX ? readLocated(ops, fd, paths, head, held, OUTCOME_KINDS) : null;
  const fold: Loaded | null = keptOutcomes ? { seq: head.seq, end: head.size, id: head.tail, work, outcomes: keptOutcomes } : null;
  keepInProcess(paths.cache, keyOf(paths, head), fold);
  return { log, outcomes };
}

/** The work log through `head` (for `maxSeq`, as of that seq: `render --check` of an older view). */
export function readWorkLogFast(paths: LedgerPaths, head: Head, maxSeq = Infinity, opts: FoldOptions = {}): WorkLog {
  if (maxSeq === Infinity) return readFolds(paths, head, opts).log;
  // The memo's work records are complete through its seq, and every record after it is read:
  // a fold that stops at maxSeq sees what a fold of the whole ledger would see up to there.
  const ops = opts.ops ?? realFileOps;
  return withChecked(paths, head, ops, (fd, start) => {
    function* all(): Generator<RecordAt> {
      if (start) for (const k of start.work) yield atOf(k);
      yield* verifiedTail(ops, fd, paths, head, start);
    }
    return foldWorkLog(all(), maxSeq);
  });
}

/** The disk memo as it says it is (what it locates not read yet); null when there is none to consider. */
function memoFile(paths: LedgerPaths, head: Head): Memo | null {
  const memo = parseMemo(paths.cache?.ledgerFile('fold-memo', realFileOps, join(paths.dir, 'index'), MEMO_FILE).get() ?? null);
  return memo && memo.genesis === head.genesis && memo.seq <= head.seq && memo.end <= head.size ? memo : null;
}

/**
 * The disk memo's records, read from the open records.jsonl `fd` whose chain through `head` is
 * checked already (withChecked); null when the memo is not to be believed.
 */
function loadMemo(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, memo: Memo): Loaded | null {
  if (!endsAt(ops, fd, paths, head, memo)) return null;
  const work = readLocated(ops, fd, paths, head, memo.work, WORK_FOLD_KINDS);
  const outcomes = work && readLocated(ops, fd, paths, head, memo.outcomes, OUTCOME_KINDS);
  // The genesis is a work-log record: a memo without it at seq 0 left something out.
  if (!work || !outcomes || work[0]?.seq !== 0 || work[0].id !== head.genesis) return null;
  return { seq: memo.seq, end: memo.end, id: memo.id, work, outcomes };
}

/**
 * The located records, each read from records.jsonl: a whole line that starts where the memo
 * says (byte 0, or the byte after a newline), a record of the seq it is located at and of a kind
 * the list holds; its id is the next line's link (linkedId) or its line's hash. null when any of them is not. That is enough
 * because the chain through HEAD is checked before (withChecked): every line there is a canonical
 * record at its seq, linked to the one before it, so a line at a seq is that record.
 * Policy: no signature is checked here, as none is by the forward scan the fold used before:
 * the chain binds each record to HEAD, the writer checks HEAD's key and the chain before it
 * builds on them, and signatures and pins are the auditor's (and the gate's, for the records it
 * relies on). Checking one costs about 0.15 ms, a fifth of `status` on a shared ledger.
 */
function readLocated(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, list: Locator[], kinds: ReadonlySet<string>): Kept[] | null {
  const out: Kept[] = [];
  for (const [seq, offset] of list) {
    let k: Kept | null;
    try {
      k = readOne(ops, fd, paths, head, seq, offset, kinds);
    } catch (e) {
      // Not a whole line there: the memo does not match this ledger.
      if (e instanceof LedgerError && e.code === 'OP_CORRUPT') return null;
      throw e;
    }
    if (k === null) return null;
    out.push(k);
  }
  return out;
}

// One buffer for every located read: the byte before the record, then the record.
const located = Buffer.allocUnsafe(LOCATED_READ + 1);

function readOne(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, seq: number, offset: number, kinds: ReadonlySet<string>): Kept | null {
  if (seq > head.seq || offset >= head.size) return null;
  const from = offset === 0 ? 0 : offset - 1;
  const got = ops.read(fd, located.subarray(0, Math.min(located.length, head.size - from)), from);
  if (offset > 0 && (got < 1 || located[0] !== 0x0a)) return null; // not where a line starts
  const lineStart = offset - from;
  const nl = located.subarray(0, got).indexOf(0x0a, lineStart);
  // A record longer than the buffer (rare: records are small) is read whole by the line reader.
  const bytes = nl >= 0 ? located.subarray(lineStart, nl) : linesForward(ops, fd, paths.records, offset, head.size).next().value?.bytes;
  if (!bytes) return null;
  // Its id from the chain (linkedId), when the line after it is in the buffer too; else hashed.
  const end = offset + bytes.length + 1;
  const nextNl = nl >= 0 ? located.subarray(0, got).indexOf(0x0a, nl + 1) : -1;
  const linked = end === head.size ? head.tail : nextNl >= 0 ? linkedId(located.subarray(nl + 1, nextNl), seq) : null;
  const line = decodeRecordLine(bytes, { seq, chained: true, ...(linked !== null ? { needId: false } : {}) });
  if (line instanceof LineProblem || !kinds.has(line.record.kind)) return null;
  // Parsed once: the record itself is kept (frozen, as every kept record is), not its text.
  return { seq, offset, id: linked ?? line.id, record: frozenRecordOf(line.record) };
}

/**
 * Speed (issue 22: `status`, `resume` and the hooks load no node:crypto for the memo's hundred
 * records): the id of the record at `seq`, read from the link of the line after it, `next`
 * (HEAD's tail for the last line). Only under withChecked: the chain through HEAD was checked on
 * this very open file, comparing each line's recomputed id with exactly that link. null when
 * `next` is not the record at the next seq with a link (the caller then hashes the line).
 */
function linkedId(next: Uint8Array, seq: number): string | null {
  const got = decodeRecordLine(next, { seq: seq + 1, chained: true, needId: false });
  if (got instanceof LineProblem) return null;
  const link = got.record.prev_tail_hash;
  return typeof link === 'string' ? link : null;
}

/** Whether the line ending at the memo's `end` is its record: that seq, that id (the next line's link, as readOne). */
function endsAt(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, memo: { seq: number; end: number; id: string }): boolean {
  if (memo.seq === head.seq) return memo.end === head.size && memo.id === head.tail;
  try {
    const { bytes } = lineEndingAt(ops, fd, paths.records, memo.end);
    const next = linesForward(ops, fd, paths.records, memo.end, head.size).next();
    const linked = next.done ? null : linkedId(next.value.bytes, memo.seq);
    if (linked !== null) return linked === memo.id && !(decodeRecordLine(bytes, { seq: memo.seq, needId: false }) instanceof LineProblem);
    return !(decodeRecordLine(bytes, { seq: memo.seq, id: memo.id }) instanceof LineProblem);
  } catch {
    return false; // no line ends there, or not a canonical record: the memo does not match
  }
}

const isLocators = (x: unknown): x is Locator[] => {
  if (!Array.isArray(x)) return false;
  let last = -1;
  for (const l of x) {
    if (!Array.isArray(l) || l.length !== 2 || !Number.isSafeInteger(l[0]) || !Number.isSafeInteger(l[1]) || l[0] <= last || l[1] < 0) return false;
    last = l[0];
  }
  return true;
};

function parseMemo(bytes: Buffer | null): Memo | null {
  if (bytes === null) return null;
  let m: Partial<Memo>;
  try {
    m = JSON.parse(bytes.toString('utf8')) as Partial<Memo>;
  } catch {
    return null;
  }
  if (m === null || typeof m !== 'object' || m.v !== MEMO_VERSION || typeof m.genesis !== 'string' || typeof m.id !== 'string') return null;
  if (!Number.isSafeInteger(m.seq) || m.seq! < 0 || !Number.isSafeInteger(m.end) || m.end! <= 0) return null;
  if (!isLocators(m.work) || !isLocators(m.outcomes)) return null;
  const seq = m.seq!;
  if (m.work.some((l) => l[0] > seq) || m.outcomes.some((l) => l[0] > seq)) return null;
  return m as Memo;
}

function writeMemo(ops: FileOps, paths: LedgerPaths, memo: Memo): void {
  // Policy (header): a memo the disk refuses is a cost, never a failure (../cache/ ledgerFile).
  paths.cache?.ledgerFile('fold-memo', ops, join(paths.dir, 'index'), MEMO_FILE).set(Buffer.from(JSON.stringify(memo) + '\n'));
}
