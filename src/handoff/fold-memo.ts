// Speed, paying for stated targets (issue 14: on a ledger of 200,000 CI records beside a few
// dozen work items, `start`, `checkpoint`, `resume` and `status` each <= 1.5x `node -e ''`): the
// work-log fold and the outcome fold (workitems.ts, unresolved.ts) without reading every record.
//
// The fold memo, `<ledger>/index/work-fold.json`, is derived data (SPEC 3) beside the record
// index: as of one record (seq, the byte offset where its line ends, its id) it locates every
// record the work-log fold uses (the genesis and every start, checkpoint, finish, release and
// note) and the records the outcome fold still holds (intents still waiting, ambiguous and
// timed-out outcomes nothing resolved). A read then folds those records and every record after
// the memo, in seq order, which gives exactly the state a fold over the whole ledger gives:
// the work-log fold skips every other kind, and the outcome fold's state after any prefix is a
// function of the records it holds (re-adding them in seq order rebuilds it).
//
// What it is trusted for, and what not (as the record index, ../causal/index/README.md):
// - It only locates records. Every record it names is read again and verified from its bytes
//   (canonical, its seq, its id, and linked to by the record after it) before a fold
//   uses it (readLocated says how); the record that ends it must be the one it names. Any of that failing, or a memo
//   that does not parse, or one for another genesis, is no memo: the whole ledger is folded, as
//   without it, and a fresh memo replaces it.
// - Policy: it is trusted for completeness (that it leaves no work record out) as far as it
//   matches the ledger, like an index segment: someone who can rewrite files under the ledger
//   directory can hide a record from it (README, Guarantees). `ledger audit` never reads it.
// - Policy: it is rewritten (durably, ../fs/durable.ts) when more than MEMO_EVERY records lie
//   past it, by whichever command folds then, reader or writer; a ledger directory that refuses
//   the write costs the next command the same fold again, never a failure.
import { constants, closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { isUtf8 } from 'node:buffer';
import { replaceFileDurable } from '../fs/durable.js';
import { lineEndingAt, linesForward, openToRead } from '../fs/lines.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import { LedgerError } from '../errors.js';
import { PROGRESS_EVERY, reportProgress } from '../progress.js';
import type { Head, LedgerRecord } from '../record.js';
import type { LedgerPaths } from '../store/paths.js';
import { parseRecordLine, readRecords, type RecordAt } from '../store/read.js';
import { OutcomeFold } from './unresolved.js';
import { foldWorkLog, type WorkLog } from './workitems.js';

export const MEMO_FILE = 'work-fold.json';
/** Policy: past this many records after the memo, the command that folds writes a new one. */
export const MEMO_EVERY = 256;
/** A memo larger than this is not read (a planted file must not cost memory). */
const MEMO_MAX_BYTES = 16 << 20;
/** Records are usually well under 4 KiB: a located record and the one after it, in one read. */
const LOCATED_READ = 8192;

const WORK_LOG_KINDS: ReadonlySet<string> = new Set(['genesis', 'start', 'checkpoint', 'finish', 'release', 'note']);
const OUTCOME_KINDS: ReadonlySet<string> = new Set(['intent', 'handoff', 'finish']);

type Locator = [seq: number, offset: number];

interface Memo {
  v: 1;
  genesis: string;
  /** The memo is as of record `seq`, whose line ends at byte `end` and whose id is `id`. */
  seq: number;
  end: number;
  id: string;
  /** Every record the work-log fold uses through `seq`, in seq order. */
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

/**
 * The work log and the outcome fold of the published records through `head`, as a fold over
 * every record would give them, reading only the records the memo names and those after it.
 */
export function readFolds(paths: LedgerPaths, head: Head, opts: FoldOptions = {}): Folds {
  const ops = opts.ops ?? realFileOps;
  const start = loadMemo(paths, head, ops);
  const fromSeq = start ? start.seq + 1 : 0;
  const outcomes = new OutcomeFold();
  for (const r of start?.outcomes ?? []) outcomes.add(r);
  const build = opts.write !== false && head.seq - fromSeq + 1 > MEMO_EVERY;
  const work: Locator[] = build && start ? start.work.map((r) => [r.seq, r.offset]) : [];
  const offsets = new Map<number, number>(build && start ? start.outcomes.map((r) => [r.seq, r.offset]) : []);
  function* tail(): Generator<RecordAt> {
    for (const r of readRecords(paths, head, start ? start.end : 0, fromSeq, ops)) {
      outcomes.add(r);
      if ((r.seq - fromSeq + 1) % PROGRESS_EVERY === 0) reportProgress('reading the work log', r.seq - fromSeq + 1, head.seq - fromSeq + 1);
      if (build) {
        if (WORK_LOG_KINDS.has(r.record.kind)) work.push([r.seq, r.offset]);
        if (OUTCOME_KINDS.has(r.record.kind)) offsets.set(r.seq, r.offset);
      }
      yield r;
    }
  }
  function* all(): Generator<RecordAt> {
    if (start) yield* start.work;
    yield* tail();
  }
  const log = foldWorkLog(all());
  if (build) {
    const held = [...outcomes.pendingIntents(), ...outcomes.unresolvedOutcomes()].map((x): Locator => [x.seq, offsets.get(x.seq)!]).sort((a, b) => a[0] - b[0]);
    writeMemo(ops, paths, { v: 1, genesis: head.genesis, seq: head.seq, end: head.size, id: head.tail, work, outcomes: held });
  }
  return { log, outcomes };
}

/** The work log through `head` (for `maxSeq`, as of that seq: `render --check` of an older view). */
export function readWorkLogFast(paths: LedgerPaths, head: Head, maxSeq = Infinity, opts: FoldOptions = {}): WorkLog {
  if (maxSeq === Infinity) return readFolds(paths, head, opts).log;
  // The memo's work records are complete through its seq, and every record after it is read:
  // a fold that stops at maxSeq sees what a fold of the whole ledger would see up to there.
  const ops = opts.ops ?? realFileOps;
  const start = loadMemo(paths, head, ops);
  function* all(): Generator<RecordAt> {
    if (start) yield* start.work;
    yield* readRecords(paths, head, start ? start.end : 0, start ? start.seq + 1 : 0, ops);
  }
  return foldWorkLog(all(), maxSeq);
}

interface Loaded {
  seq: number;
  end: number;
  work: RecordAt[];
  outcomes: RecordAt[];
}

/** The memo's records, each verified from its bytes; null when there is no memo to believe. */
function loadMemo(paths: LedgerPaths, head: Head, ops: FileOps): Loaded | null {
  const memo = parseMemo(readSmallFile(memoPath(paths)));
  if (!memo || memo.genesis !== head.genesis || memo.seq > head.seq || memo.end > head.size) return null;
  const fd = openToRead(ops, paths.records);
  try {
    if (!endsAt(ops, fd, paths, head, memo)) return null;
    const work = readLocated(ops, fd, paths, head, memo.work, WORK_LOG_KINDS);
    const outcomes = work && readLocated(ops, fd, paths, head, memo.outcomes, OUTCOME_KINDS);
    // The genesis is a work-log record: a memo without it at seq 0 left something out.
    if (!work || !outcomes || work[0]?.seq !== 0 || work[0].id !== head.genesis) return null;
    return { seq: memo.seq, end: memo.end, work, outcomes };
  } finally {
    ops.close(fd);
  }
}

/**
 * The located records, each read from records.jsonl and verified from its bytes as the forward
 * scan verifies every record it folds (UTF-8, canonical JSON, the seq it is located at, its id
 * recomputed: store/read.ts parseRecordLine), and bound into the chain: the line after it names
 * its id as prev_tail_hash (for HEAD's seq: it is HEAD's tail, ending at HEAD's size). null when
 * any of them fails, or is of a kind the list does not hold.
 * Policy: no signature is checked here, as none is by the forward scan the fold used before:
 * the chain binds each record to HEAD, the writer checks HEAD's key and the chain before it
 * builds on them, and signatures and pins are the auditor's (and the gate's, for the records it
 * relies on). Checking one costs about 0.15 ms, a fifth of `status` on a shared ledger.
 */
function readLocated(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, list: Locator[], kinds: ReadonlySet<string>): RecordAt[] | null {
  const out: RecordAt[] = [];
  for (const [seq, offset] of list) {
    let at: RecordAt | null;
    try {
      at = readOne(ops, fd, paths, head, seq, offset);
    } catch (e) {
      // Not a whole line there, not a canonical record: the memo does not match this ledger.
      if (e instanceof LedgerError && e.code === 'OP_CORRUPT') return null;
      throw e;
    }
    if (at === null || !kinds.has(at.record.kind)) return null;
    out.push(at);
  }
  return out;
}

// This process's located records, by their exact bytes: a writer folds on its advisory check,
// under the lock and again for the views, and identical bytes parse to an identical record with
// the same id (as store/read.ts's tail memo), so only the first read pays for the canonical
// check and the hash. A hit is parsed afresh: no caller shares a record object with another.
const parsed = new Map<string, { bytes: Buffer; id: string }>();

function parseLocated(paths: LedgerPaths, offset: number, bytes: Buffer): { record: LedgerRecord; id: string } {
  const key = `${paths.records}\0${offset}`;
  const hit = parsed.get(key);
  if (hit && hit.bytes.equals(bytes)) return { record: JSON.parse(bytes.toString('utf8')) as LedgerRecord, id: hit.id };
  if (!isUtf8(bytes)) throw new LedgerError('OP_CORRUPT', 'a record the fold memo names is not UTF-8');
  const out = parseRecordLine(bytes.toString('utf8'), 'a record the fold memo names');
  if (parsed.size > 65_536) parsed.clear();
  parsed.set(key, { bytes: Buffer.from(bytes), id: out.id });
  return out;
}

function readOne(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, seq: number, offset: number): RecordAt | null {
  if (seq > head.seq || offset >= head.size) return null;
  const lines = linesForward(ops, fd, paths.records, offset, head.size, LOCATED_READ);
  const first = lines.next();
  if (first.done) return null;
  const bytes = first.value.bytes;
  const { record, id } = parseLocated(paths, offset, bytes);
  if (record.seq !== seq) return null;
  const end = offset + bytes.length + 1;
  if (seq === head.seq) return id === head.tail && end === head.size ? { seq, offset, id, record } : null;
  const next = lines.next();
  if (next.done) return null;
  let linked: boolean;
  try {
    const v = JSON.parse(next.value.bytes.toString('utf8')) as { seq?: unknown; prev_tail_hash?: unknown } | null;
    linked = v !== null && typeof v === 'object' && v.seq === seq + 1 && v.prev_tail_hash === id;
  } catch {
    linked = false;
  }
  return linked ? { seq, offset, id, record } : null;
}

/** Whether the line ending at the memo's `end` is its record: that seq, that id. */
function endsAt(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, memo: Memo): boolean {
  if (memo.seq === head.seq) return memo.end === head.size && memo.id === head.tail;
  try {
    const { bytes } = lineEndingAt(ops, fd, paths.records, memo.end);
    if (!isUtf8(bytes)) return false;
    const { record, id } = parseRecordLine(bytes.toString('utf8'), 'the fold memo');
    return record.seq === memo.seq && id === memo.id;
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
  if (m === null || typeof m !== 'object' || m.v !== 1 || typeof m.genesis !== 'string' || typeof m.id !== 'string') return null;
  if (!Number.isSafeInteger(m.seq) || m.seq! < 0 || !Number.isSafeInteger(m.end) || m.end! <= 0) return null;
  if (!isLocators(m.work) || !isLocators(m.outcomes)) return null;
  const seq = m.seq!;
  if (m.work.some((l) => l[0] > seq) || m.outcomes.some((l) => l[0] > seq)) return null;
  return m as Memo;
}

/**
 * The memo's bytes, or null: only a regular file (never a link, FIFO or device: opened
 * non-blocking and without following a link, so a planted FIFO cannot hang a command), at most
 * MEMO_MAX_BYTES.
 */
function readSmallFile(path: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MEMO_MAX_BYTES) return null;
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n <= 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function writeMemo(ops: FileOps, paths: LedgerPaths, memo: Memo): void {
  const dir = join(paths.dir, 'index');
  try {
    ops.mkdir(dir, 0o755);
    replaceFileDurable(ops, dir, MEMO_FILE, Buffer.from(JSON.stringify(memo) + '\n'));
  } catch (e) {
    // Policy (header): a memo the disk refuses is a cost, never a failure.
    if (!(e instanceof LedgerError) && !(e as NodeJS.ErrnoException).code) throw e;
  }
}

