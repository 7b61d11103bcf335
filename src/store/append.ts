// The durable append protocol (SPEC 3-5), the only code that writes records. One write, in
// this order, each step a function below:
//
//    1. validate every draft (assertDrafts: nothing is touched for a bad one)
//    2. take the cross-process writer lock (lock.ts)
//    3. refresh, in a ledger joined to a remote (publisher.ts): a new attempt of the write; the
//       local copy takes what the remote published (adopt.ts, by step 9's write)
//    4. read HEAD; check that it is one this writer may build on (buildableTail; head-guard.ts:
//       its key is pinned or the writer's own, it is not below this writer's mark), that the
//       chain through it links (read.ts assertPublishedChain) and that its tail is really the
//       last published line; remove temp files a killed writer left
//    5. let the caller decide, on that HEAD, what to append (idempotency, ownership, the gate)
//    6. place and sign (placeDrafts, closingHead): each draft's seq, link and ts, its id and its
//       signature; then the new HEAD over them, signed; and the checkpoint of the tree through
//       them (checkpoint.ts, SPEC 13: O(log n) hashes), written after step 9
//    7. move bytes past HEAD's size into quarantine/ (recover.ts: they were never published)
//    8. publish, in a joined ledger (publisher.ts): the push built on what step 3 found;
//       'moved' (another machine published first): back to step 3 in a new attempt, bounded;
//       'queued' (--offline): kept in the outbox, not published, nothing written here
//    9. write the new lines at `size`, fdatasync; then HEAD to a temp file, fsync, rename, fsync
//       the directory (writeLinesThenHead)
//   10. remember: raise this writer's mark and the verified-chain memo (per-user state, outside
//       the ledger directory)
//   11. release the lock
//
// An append returns only after step 9: a record is published exactly when a durable HEAD covers
// it (in a joined ledger, when step 8's push succeeded; step 9 is then the local copy taking
// it, and a writer killed between the two is repaired by the next refresh). If anything fails
// before the rename, the new bytes are cut back off, so a refused or failed append leaves
// records.jsonl and HEAD as they were. `initLedger` is steps 1, 2, 6, 7, 9 and 10 for the
// genesis record; `recoverLedger` is step 7 on its own, after step 4's checks other than the
// chain's; the adoption of a joined ledger (adopt.ts) is steps 7 and 9 for records the remote
// published.
import { PROGRESS_EVERY, reportProgress } from '../progress.js';
import { nodeCrypto } from '../node-crypto.js';
import { dirname } from 'node:path';
import { ed25519SigParts, textsAroundSig, toBase64url, writeAroundSig } from '../canonical.js';
import { LedgerError, ioError, RUN_AUDIT } from '../errors.js';
import { MAX_LINE_BYTES, draftProblems, type Draft, type Head, type LedgerRecord } from '../record.js';
import { signingMessage, type Sig, type Signer } from '../sign.js';
import { fsyncDir, mkdirDurable, removeStaleTemps, writeAll } from '../fs/durable.js';
import { assertStrictRoot } from '../fs/confine.js';
import { fsError, realFileOps, type FileOps, type FileStat } from '../fs/ops.js';
import { checkedRoot, rememberChain } from './chain-memo.js';
import { readHead, readHeadWithBytes, signHead, writeHead, type SignedHead } from './head.js';
import { assertTrustedHead, checkMark, prepareMarks, raiseMark, readAllMarks, readMark, type Mark, type WriterGuard } from './head-guard.js';
import { acquireLock } from './lock.js';
import { grantsAt } from './grants.js';
import { writerTrust } from './head-guard.js';
import { acceptProblem, applyKeyRecord, authorizeCommand, hasAdmin, keyRecordProblem, pinOf, type Grants } from '../keys/grants.js';
import type { Trust } from '../keys/trust.js';
import { CHECKPOINT_FILE, TREE_FILE, assertCheckpointWritable, extendTree, growTree, signCheckpoint, writeCheckpoint } from './checkpoint.js';
import { ledgerPaths, type LedgerPaths } from './paths.js';
import { nearestLedger } from './discover.js';
import { assertPublishedChain, assertTailIsLastLine, type RecordAt } from './read.js';
import { openToRead } from '../fs/lines.js';
import { quarantineUnpublished, QUARANTINE_NAME_RE, type RecoverReport } from './recover.js';
import { stateDirFrom } from './state-dir.js';
import type { Attempt, Publisher } from './publisher.js';
import type { LedgerCache } from '../cache/ledger-cache.js';

export interface StoreOptions {
  dir: string;
  ops?: FileOps;
  /** How long to wait for a live lock holder (ms); default 10 s. */
  waitMs?: number;
  /** The clock; records never go back in time even if it does. */
  now?: () => Date;
  /**
   * What HEAD is checked against before anything is built on it (head-guard.ts): the per-user
   * state directory and the trust file. Default: the state directory process.env names, and no
   * trust file (only a HEAD signed by the writer's own key is built on).
   */
  guard?: WriterGuard;
  /** Where the ledger is published beyond this disk (SPEC 11, src/remote/); see publisher.ts. */
  publisher?: Publisher;
  /** The Ledger's caches (../cache/): what the steps below believe, after their own checks; none without it. */
  cache?: LedgerCache;
  /**
   * A write that counts only once published (a consume: SPEC 9's exactly once needs every
   * machine to see it): with --offline and no remote, it is refused, never queued (publisher.ts).
   */
  mustPublish?: boolean;
  /**
   * The bench's stopwatch (issue 27's target: the append with the tree <= 1.1x the append
   * without it): each append adds to `treeMs` the time it spent on the tree and checkpoint
   * (steps 4's check, 6's share and the write after 9), read by `clock` (ms) inside that append.
   */
  measure?: { clock: () => number; treeMs: number };
}

export interface Appended {
  id: string;
  seq: number;
  offset: number;
  record: LedgerRecord;
}

export interface AppendResult {
  records: Appended[];
  head: Head;
  recovered: RecoverReport | null;
  /** --offline: the records wait in the publisher's outbox; not published, not written here. */
  queued?: boolean;
}

/** What a transaction sees under the lock: the published HEAD and its last record. */
export interface LockedView {
  paths: LedgerPaths;
  head: Head;
  tail: { id: string; record: LedgerRecord };
}

export const DEFAULT_WAIT_MS = 10_000;

function resolve(opts: StoreOptions) {
  const guard = opts.guard ?? { stateDir: stateDirFrom(process.env), trust: null };
  return {
    paths: ledgerPaths(opts.dir, guard.stateDir, opts.cache),
    ops: opts.ops ?? realFileOps,
    waitMs: opts.waitMs ?? DEFAULT_WAIT_MS,
    now: opts.now ?? (() => new Date()),
    guard,
  };
}

/** One write as `transact` was given it: who writes, where, and the caller's decision. */
interface Write {
  ops: FileOps;
  paths: LedgerPaths;
  guard: WriterGuard;
  now: () => Date;
  signer: Signer;
  decide: (view: LockedView) => readonly Draft[];
  /** See transact. */
  checkedDrafts: readonly Draft[] | undefined;
  mustPublish: boolean;
  measure: StoreOptions['measure'];
}

// ---------------------------------------------------------------------------------------------
// The protocol.

/**
 * Runs `decide` under the writer lock on the current HEAD and appends what it returns, in the
 * same critical section. `decide` may throw to refuse; then nothing is written at all.
 * `checkedDrafts`: drafts the caller validated with assertDrafts (step 1) just before, in this
 * same synchronous call; what `decide` returns is validated again unless every draft is one of
 * them. With a publisher, each attempt reads: refresh, decide, publish, then the local copy
 * takes the records, or, when another machine published first, a new attempt.
 */
export function transact(
  opts: StoreOptions,
  signer: Signer,
  decide: (view: LockedView) => readonly Draft[],
  checkedDrafts?: readonly Draft[],
): AppendResult {
  const { paths, ops, waitMs, now, guard } = resolve(opts);
  // StrictModes first (issue 23): nothing is read from a ledger directory someone else could write.
  assertStrictRoot(paths.dir);
  if (!ops.exists(paths.head)) throw notALedger(paths, ops);
  // Before the lock: a state directory that cannot hold the mark refuses the append up front.
  prepareMarks(guard.stateDir);
  const write: Write = { ops, paths, guard, now, signer, decide, checkedDrafts, mustPublish: opts.mustPublish === true, measure: opts.measure };
  // 2. the lock
  const lock = acquireLock(ops, paths.lock, waitMs);
  try {
    const pub = opts.publisher;
    if (!pub) return appendOnce(write, null)!; // null only when a publisher says 'moved'
    // 3. refresh, a new attempt each time; then 4-10; after 'moved', again or give up
    for (let attempt = pub.refresh(ops, paths, null); ; attempt = pub.refresh(ops, paths, attempt)) {
      const done = appendOnce(write, { pub, attempt });
      if (done) return done;
      if (!pub.again(attempt)) throw contended(attempt);
    }
  } catch (e) {
    throw fsError(e, 'append to', paths.records);
  } finally {
    // 11. unlock
    lock.release();
  }
}

function contended(attempt: Attempt): LedgerError {
  return new LedgerError('OP_REMOTE_CONTENDED', `the remote moved ${attempt.n} times while this write was being published; nothing was published`, { attempts: attempt.n }, 'try again: other machines are writing right now');
}

/**
 * Steps 4-10, once: on the HEAD on disk now (brought to the remote's by step 3, in a joined
 * ledger). Null when the publisher says another machine published first: nothing was written.
 */
function appendOnce(w: Write, remote: { pub: Publisher; attempt: Attempt } | null): AppendResult | null {
  const { ops, paths } = w;
  // 4. HEAD, and whether this writer may build on it
  const current = readHeadWithBytes(ops, paths);
  if (!current) throw notALedger(paths, ops);
  const { head } = current;
  const { tail, records } = buildableTail(ops, paths, w.guard, head, w.signer.publicKey);
  // The tree and checkpoint are written after HEAD: a link or other non-file planted there is
  // refused now, before anything is written (checkpoint.ts, Policy), never silently skipped.
  const clock = w.measure?.clock;
  let treeMs = 0;
  let t0 = clock?.() ?? 0;
  assertCheckpointWritable(ops, paths);
  if (clock) treeMs += clock() - t0;
  // 5. the caller's decision on it
  const drafts = w.decide({ paths, head, tail: { id: tail.id, record: tail.record } });
  if (drafts.length === 0) return { records: [], head, recovered: null };
  if (!allChecked(drafts, w.checkedDrafts)) assertDrafts(drafts);
  // 5b. the writer's own trust: it signs nothing the audit would reject (SPEC 7)
  try {
    assertOwnKeyAccepted(ops, paths, w.guard, head, w.signer.publicKey, drafts);
  } catch (e) {
    // On a guess (no fetch yet), the admin's record that authorizes this key may be on the
    // remote already: the next attempt fetches it, and decides again (issue 25 item 3).
    if (remote && remote.attempt.basis === 'guessed' && e instanceof LedgerError && e.code === 'KEY_NOT_ACCEPTED') return null;
    throw e;
  }
  // 6. place and sign; each line goes into the tree as its signature is made (growTree), and
  // the measure, when asked for, counts that too
  t0 = clock?.() ?? 0;
  const tree = growTree(ops, paths, head, checkedRoot(paths, head, records));
  if (clock) treeMs += clock() - t0;
  const addLine = clock
    ? (line: Uint8Array) => {
        const t = clock();
        tree.add(line);
        treeMs += clock() - t;
      }
    : tree.add;
  const placed = placeDrafts(drafts, head, w.now(), w.signer, addLine);
  const newHead = closingHead(head, placed, w.now(), w.signer);
  t0 = clock?.() ?? 0;
  const checkpoint = signCheckpoint(tree.done(), newHead.head, w.signer);
  if (clock) treeMs += clock() - t0;
  // 7. quarantine
  const recovered = quarantineUnpublished(ops, paths, head);
  // 8. publish (a joined ledger)
  if (remote) {
    const outcome = remote.pub.publish(remote.attempt, { base: head, lines: placed.data, head: newHead, drafts, checkpoint: Buffer.from(checkpoint.note!, 'utf8'), ...(w.mustPublish ? { mustPublish: true } : {}) });
    if (outcome === 'moved') return null;
    if (outcome === 'queued') return { records: placed.appended, head, recovered: null, queued: true };
  }
  // 9. lines, then HEAD
  const st = writeLinesThenHead(ops, paths, { at: head.size, lines: placed.data, headBefore: current.bytes, head: newHead });
  t0 = clock?.() ?? 0;
  writeCheckpoint(ops, paths, checkpoint);
  if (clock) w.measure!.treeMs += treeMs + clock() - t0;
  // 10. remember
  const last = placed.appended[placed.appended.length - 1];
  remember(paths, w.guard, w.signer.publicKey, newHead.head, last.offset, st, checkpoint.root);
  return { records: placed.appended, head: newHead.head, recovered: recovered.unpublished ? recovered : null };
}

/** Appends drafts as one all-or-nothing batch under one lock and one HEAD update. */
export function appendDrafts(opts: StoreOptions, signer: Signer, drafts: readonly Draft[]): AppendResult {
  assertDrafts(drafts);
  if (drafts.length === 0) throw new LedgerError('INPUT_SCHEMA', 'nothing to append');
  return transact(opts, signer, () => drafts, drafts);
}

/**
 * Creates a ledger: the directory, its genesis record and HEAD. Refuses when a ledger (a HEAD)
 * is already there. Bytes of a records.jsonl without HEAD (a crash during an earlier init) were
 * never published and go to quarantine/ first.
 */
export function initLedger(opts: StoreOptions, signer: Signer, agent: string, name?: string): AppendResult {
  const { paths, ops, waitMs, now, guard } = resolve(opts);
  assertStrictRoot(paths.dir);
  if (ops.exists(paths.head)) throw ledgerExists(paths);
  prepareMarks(guard.stateDir);
  // 1. validate
  const draft = genesisDraft(agent, name);
  try {
    // A directory's entry lives in its parent: fsync the parent of the ledger directory and of
    // every directory made here, or a power cut after init returned can lose the whole ledger.
    mkdirDurable(ops, paths.dir, 0o755);
  } catch (e) {
    throw ioError(e, 'create', paths.dir);
  }
  // 2. the lock
  const lock = acquireLock(ops, paths.lock, waitMs);
  try {
    assertNoHead(ops, paths);
    assertCheckpointWritable(ops, paths);
    // 6. place and sign
    const genesis = placeGenesis(draft, now, signer);
    // 7. quarantine (bytes of an earlier init that never published), and a killed one's temp files
    const recovered = quarantineUnpublished(ops, paths, null);
    removeLeftovers(ops, paths);
    // 9. the line, then HEAD
    const st = writeLinesThenHead(ops, paths, { at: 0, lines: genesis.placed.data, headBefore: null, head: genesis.head }, 'genesis');
    writeCheckpoint(ops, paths, signCheckpoint(extendTree(ops, paths, null, genesis.placed.data), genesis.head.head, signer));
    // 10. remember
    remember(paths, guard, signer.publicKey, genesis.head.head, 0, st);
    return { records: genesis.placed.appended, head: genesis.head.head, recovered: recovered.unpublished ? recovered : null };
  } catch (e) {
    throw e instanceof LedgerError ? e : ioError(e, 'initialise', paths.dir);
  } finally {
    // 11. unlock
    lock.release();
  }
}

function ledgerExists(paths: LedgerPaths): LedgerError {
  return new LedgerError('INPUT_EXISTS', `a ledger already exists at ${paths.dir}`, { dir: paths.dir }, '`ledger init` never overwrites a ledger: use another --dir');
}

/**
 * Fail closed: init goes on only when HEAD is certainly absent (ENOENT). exists() reports a HEAD
 * it cannot stat as absent, and init would then quarantine a published ledger and replace it.
 */
function assertNoHead(ops: FileOps, paths: LedgerPaths): void {
  let statError: unknown = null;
  try {
    ops.size(paths.head);
  } catch (e) {
    statError = e;
  }
  if (statError === null) throw ledgerExists(paths);
  if ((statError as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(statError, 'check for', paths.head);
}

/**
 * `ledger recover`: step 7 on its own, under the lock, on a HEAD that a writer may build on
 * (step 4's checks of its key and of the marks, not of the chain): `ownKey` is the caller's
 * public key, or null when it has none (then HEAD's key must be pinned in the guard's trust
 * file, and every mark of this user is checked).
 */
export function recoverLedger(opts: StoreOptions, dryRun: boolean, ownKey: string | null = null): RecoverReport {
  const { paths, ops, waitMs, guard } = resolve(opts);
  assertStrictRoot(paths.dir);
  if (!ops.exists(paths.dir)) throw notALedger(paths, ops);
  const lock = acquireLock(ops, paths.lock, waitMs);
  try {
    const head = readHead(ops, paths);
    // Fail closed: move bytes past HEAD only when HEAD is one a writer may build on and really
    // ends the chain there (its tail is the line ending at its size), as a writer checks before
    // it appends. (A file shorter than HEAD's size is refused by quarantineUnpublished, with its
    // own message.)
    // Policy: recover checks HEAD's key and this user's marks (it must not cut back to a HEAD a
    // keyless attacker wrote, or one rolled back below what was published), but not the chain:
    // it moves only bytes past HEAD, never deletes, and a ledger damaged in the middle must still
    // be able to set unpublished bytes aside.
    if (head) assertTrustedHead(head, ownKey, guard.trust, (t) => grantsAt(paths, head, t, ops));
    if (head && ops.exists(paths.records) && ops.size(paths.records) >= head.size) {
      assertTailIsLastLine(ops, paths, head, 'refusing to recover: ');
      for (const m of marksOf(guard, paths, head, ownKey)) checkMark(ops, paths, head, m);
      removeLeftovers(ops, paths);
    } else if (head) {
      // A file shorter than HEAD's size: refused below; a mark above it says why, first.
      for (const m of marksOf(guard, paths, head, ownKey)) if (head.seq < m.seq) checkMark(ops, paths, head, m);
    }
    return quarantineUnpublished(ops, paths, head, dryRun);
  } catch (e) {
    throw e instanceof LedgerError ? e : ioError(e, 'recover', paths.dir);
  } finally {
    lock.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Step 1: validate.

/**
 * Throws INPUT_SCHEMA naming every problem of every bad draft; its details carry them per draft
 * (`payloads`: index and problems), so a caller that read the drafts from lines can name the
 * lines (append --batch) without checking every draft a second time.
 */
export function assertDrafts(drafts: readonly unknown[]): asserts drafts is Draft[] {
  const bad: string[] = [];
  const payloads: { index: number; problems: string[] }[] = [];
  drafts.forEach((d, i) => {
    const problems = draftProblems(d);
    if (problems.length) payloads.push({ index: i, problems });
    for (const p of problems) bad.push(drafts.length > 1 ? `payload ${i + 1}: ${p}` : p);
  });
  if (bad.length) {
    throw new LedgerError('INPUT_SCHEMA', `${bad[0]}${bad.length > 1 ? ` (and ${bad.length - 1} more problem${bad.length > 2 ? 's' : ''})` : ''}`, { problems: bad, payloads });
  }
}

/** Whether every draft is one of `checked` (by identity: the very objects that were checked). */
function allChecked(drafts: readonly Draft[], checked: readonly Draft[] | undefined): boolean {
  if (checked === undefined) return false;
  if (drafts === checked) return true;
  const set = new Set<Draft>(checked);
  return drafts.every((d) => set.has(d));
}

/** A new ledger's genesis draft (SPEC 4: a fresh 16-byte nonce, and its name if given), validated. */
export function genesisDraft(agent: string, name?: string): Draft {
  const draft = { kind: 'genesis', agent, nonce: toBase64url(nodeCrypto().randomBytes(16)), ...(name !== undefined ? { name } : {}) } as Draft;
  assertDrafts([draft]);
  return draft;
}

// ---------------------------------------------------------------------------------------------
// Step 4: HEAD, and what may be built on it.

/**
 * HEAD must be one this writer may build on (trusted, not below its mark), the chain through it
 * must link and end at its tail (returned); then temp files a killed writer left under this
 * lock go.
 */
function buildableTail(ops: FileOps, paths: LedgerPaths, guard: WriterGuard, head: Head, ownKey: string): { tail: RecordAt; records: FileStat | null } {
  assertTrustedHead(head, ownKey, guard.trust, (t) => grantsAt(paths, head, t, ops));
  for (const m of marksOf(guard, paths, head, ownKey)) checkMark(ops, paths, head, m);
  // One open of records.jsonl for the chain check and the tail's line (the same file checked).
  const fd = openToRead(ops, paths.records);
  let tail: RecordAt;
  let records: FileStat | null;
  try {
    records = assertPublishedChain(ops, paths, head, fd);
    tail = assertTailIsLastLine(ops, paths, head, '', fd);
  } finally {
    ops.close(fd);
  }
  removeLeftovers(ops, paths);
  return { tail, records };
}

/**
 * Step 5b (SPEC 7): every draft's key must be pinned, or authorized by an admin's `key` record
 * (the drafts' own included, in order), for its agent at the seq it will take; else nothing is
 * written (KEY_NOT_ACCEPTED, exit 13). Without a trust file there is nothing to check against
 * (head-guard.ts writerTrust).
 */
function assertOwnKeyAccepted(ops: FileOps, paths: LedgerPaths, guard: WriterGuard, head: Head, key: string, drafts: readonly Draft[]): void {
  const trust = writerTrust(guard.trust);
  if (trust === null) return;
  let grants: Grants | null = null;
  const keyDrafts = drafts.some((d) => d.kind === 'key');
  if (!pinOf(trust, key) || keyDrafts) grants = grantsAt(paths, head, trust, ops);
  const working: Grants | null = grants && keyDrafts ? new Map(grants) : grants;
  drafts.forEach((d, i) => {
    const seq = head.seq + 1 + i;
    const why = acceptProblem(trust, working, key, seq, d.agent);
    if (why) throw notAccepted(key, seq, d.agent, why, trust, working);
    if (d.kind === 'key') {
      // A key record is placed exactly as drafted; its signature is the writer's.
      const rec = { ...d, sig: { alg: 'ed25519', key, value: '' } } as unknown as LedgerRecord<'key'>;
      const bad = keyRecordProblem(trust, working!, rec, seq);
      if (bad) throw new LedgerError('KEY_NOT_ACCEPTED', bad.replace(/^the key record at seq \d+/, 'this key record'), { seq }, hasAdmin(trust) ? '`ledger trust list` shows the keys and who authorized them' : 'no key in the trust file is an admin ("admin": true); an admin\'s key signs key records');
      applyKeyRecord(trust, working!, rec, seq, `pending:${seq}`);
    }
  });
}

function notAccepted(key: string, seq: number, agent: string, why: string, trust: Trust, grants: Grants | null): LedgerError {
  const g = pinOf(trust, key) ? undefined : grants?.get(key);
  const authorize = !pinOf(trust, key) && !g && hasAdmin(trust) ? authorizeCommand(key, [agent]) : null;
  let hint: string;
  if (pinOf(trust, key)) hint = 'the trust file\'s entry for this key does not allow it: `ledger doctor` shows the entry to use';
  else if (g && g.revoked_at_seq !== null) hint = `this key was retired at seq ${g.revoked_at_seq}, and a revoke is final: make a new key (\`ledger keygen --out PATH\`) and have an admin authorize it (\`ledger trust add\`)`;
  else if (g) hint = `this key signs only for ${g.agents.join(', ')}: write as one of them, or have an admin authorize a separate key for "${agent}" (\`ledger keygen\`, then \`ledger trust add\`)`;
  else hint = `if this machine's key was moved or lost, restore it first (--key, $LEDGER_KEY, or keys/harness.key); a new key writes only once ${authorize ? `an admin authorizes it, from any machine with the ledger: \`${authorize}\`` : 'the trust file pins it (`ledger doctor` prints the entry)'}`;
  return new LedgerError('KEY_NOT_ACCEPTED', `refusing to sign seq ${seq} as agent "${agent}" with key ${key}: ${why}; the audit would reject it (key-pin)`, { seq, key, agent, authorize }, hint);
}

/** The marks HEAD is checked against: the writer's own key's, or with no key (recover) every key's of this user. */
function marksOf(guard: WriterGuard, paths: LedgerPaths, head: Head, ownKey: string | null): Mark[] {
  if (ownKey === null) return readAllMarks(guard.stateDir, paths, head.genesis);
  const mark = readMark(guard.stateDir, paths, head.genesis, ownKey);
  return mark ? [mark] : [];
}

/**
 * Policy: the temp files of HEAD (in the ledger directory) and of quarantine files are written
 * only under the writer lock, so under it any that exist were left by a writer that was killed
 * (SIGKILL, a power cut): they are removed, if they are regular files of the recipe's names
 * (fs/durable.ts removeStaleTemps), never links or anything else.
 */
function removeLeftovers(ops: FileOps, paths: LedgerPaths): void {
  // Speed (the durable append): quarantine/ is listed only when the ledger directory holds one.
  let quarantine = true;
  removeStaleTemps(ops, paths.dir, (target) => target === 'HEAD' || target === CHECKPOINT_FILE || target === TREE_FILE, (names) => (quarantine = names.includes('quarantine')));
  if (quarantine) removeStaleTemps(ops, paths.quarantine, (target) => QUARANTINE_NAME_RE.test(target));
}

/**
 * The refusal when `paths.dir` holds no ledger (no HEAD). Its hint never advises `ledger init`
 * where a ledger exists (SPEC 3): records without a HEAD are a damaged ledger to restore, and a
 * directory inside a project that has a ledger is pointed at that one.
 */
export function notALedger(paths: LedgerPaths, ops: FileOps = realFileOps): LedgerError {
  return new LedgerError('INPUT_NOT_FOUND', `no ledger at ${paths.dir} (no HEAD)`, { dir: paths.dir }, noLedgerHint(paths, ops));
}

export function noLedgerHint(paths: LedgerPaths, ops: FileOps = realFileOps): string {
  if (ops.exists(paths.records)) return 'records.jsonl is there but HEAD is not: restore HEAD from a copy (`ledger audit` shows what is there); a new ledger here would be a second, unrelated one';
  let nearest: string | null = null;
  try {
    nearest = nearestLedger(dirname(paths.dir));
  } catch {
    // Only the advice depends on it; the refusal stands either way.
  }
  if (nearest && nearest !== paths.dir) return `the nearest ledger is ${nearest}: pass --dir ${nearest}, or leave out --dir and LEDGER_DIR to use it`;
  // Issue 25 item 4: a project whose trust file pins keys has a ledger somewhere (a teammate's
  // clone has the committed trust file, not the ledger): join it, never a second genesis.
  if (ops.exists(`${dirname(paths.dir)}/keys/trust.json`)) return 'this project\'s trust file (keys/trust.json) pins the keys of its ledger: join it with `ledger init --remote REMOTE` (an admin then authorizes this machine), or pass --dir / set LEDGER_DIR';
  return 'run `ledger init` in the project\'s top folder to create one (in a git worktree: in the main worktree), or pass --dir / set LEDGER_DIR';
}

// ---------------------------------------------------------------------------------------------
// Step 6: place and sign (pure apart from the clock).

/** Drafts placed after a HEAD and signed: the records as appended, and their lines in one buffer. */
interface Placed {
  appended: Appended[];
  data: Buffer;
}

function laterTs(now: Date, prev: string): string {
  return new Date(Math.max(now.getTime(), Date.parse(prev))).toISOString();
}

/**
 * Places drafts after `base` in the chain (null: as a new ledger's first records, from seq 0)
 * and signs them. Ids chain sequentially (each links the previous id) but signatures do not
 * feed the chain, so all the signatures of a batch are made together, on two cores when the
 * batch is large.
 *
 * A batch holds every record until the last signature exists, and what it holds the garbage
 * collector copies and scans again and again (a third of a 200,000-record batch's time was GC,
 * issue 26): so each line is written into the one output buffer as its record is placed, with
 * the 86 bytes of its signature value left to fill, and no text of it is kept. What a record
 * keeps until the end is the record object itself (it gains its `sig`, no copy), its id and
 * where its signature goes. `line`, when given, is handed each line (without its newline) in
 * order once its signature is in place, while later ones may still be signed (the tree: growTree).
 */
function placeDrafts(drafts: readonly Draft[], base: Head | null, now: Date, signer: Signer, line?: (bytes: Uint8Array) => void): Placed {
  const count = drafts.length;
  const records: LedgerRecord[] = new Array(count);
  const ids: string[] = new Array(count);
  // Where each line starts and ends (before its newline) in `data`, and where its signature value goes.
  const starts = new Float64Array(count);
  const ends = new Float64Array(count);
  const sigAt = new Float64Array(count);
  // Every record of one append carries the same time: max(now, the previous record's ts) once
  // is what taking it again for each record (never earlier than the one before) gives too.
  const ts = base ? laterTs(now, base.ts) : now.toISOString();
  const size = base ? base.size : 0;
  let seq = base ? base.seq : -1;
  let id: string | null = base ? base.tail : null;
  // The sig member is `"sig":` + head + value + tail, the value 86 base64url characters, a
  // placeholder until the signature is made.
  const { head: sigHead, tail: sigTail } = ed25519SigParts(signer.publicKey);
  const member = Buffer.from('"sig":' + sigHead + SIG_PLACEHOLDER + sigTail, 'utf8');
  const valueAt = Buffer.byteLength('"sig":' + sigHead, 'utf8');
  // Sized from the first line (most lines of a batch are alike), grown by doubling past that.
  let data = Buffer.allocUnsafe(0);
  let at = 0;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that many, so a write is never cut.
  const room = (chars: number) => {
    if (at + chars * 3 <= data.length) return;
    const grown = Buffer.allocUnsafe(Math.max(data.length * 2, at + chars * 3, at === 0 ? Math.min(Math.ceil(count * chars * 1.25), 1 << 30) : 0));
    data.copy(grown, 0, 0, at);
    data = grown;
  };
  const stage = (i: number): Uint8Array => {
    // Speed (issue 26): the envelope's members first, then the draft's. The same object as
    // `{ ...draft, v, seq, prev_tail_hash, ts }` (a checked draft has none of those members: an
    // unknown field), which V8 (Node 20) built about 100 times slower, some 15 us a record.
    const unsigned = { v: 1, seq: ++seq, prev_tail_hash: id, ts, ...drafts[i] } as Omit<LedgerRecord, 'sig'>;
    const texts = textsAroundSig(unsigned);
    room(texts.before.length + texts.after.length + member.length + 2);
    // SPEC 4: the id is over the record without "sig" (hashed as it is written).
    const w = writeAroundSig(texts, data, at, member);
    const own = w.id;
    id = own;
    records[i] = unsigned as LedgerRecord;
    ids[i] = own;
    starts[i] = at;
    sigAt[i] = w.memberAt + valueAt;
    at = w.end;
    ends[i] = at - 1;
    const bytes = at - starts[i];
    if (bytes > MAX_LINE_BYTES) {
      throw new LedgerError('INPUT_SCHEMA', `record ${i + 1} would be ${bytes} bytes; a record line is at most ${MAX_LINE_BYTES} (store large evidence by digest)`);
    }
    if ((i + 1) % PROGRESS_EVERY === 0) reportProgress('signing records', i + 1, count);
    return signingMessage('record', own);
  };
  const appended: Appended[] = new Array(count);
  // Record i's signature into its place, in order; its line is then whole, for `line`.
  const signed = (i: number, sig: Uint8Array) => {
    const value = toBase64url(sig);
    // A 64-byte signature is always 86 characters of a JSON-inert alphabet (canonical.ts).
    if (data.write(value, sigAt[i], 'latin1') !== SIG_CHARS || value.length !== SIG_CHARS) throw new Error('a signature value is not 86 characters'); // cannot happen
    (records[i] as { sig: Sig }).sig = { alg: 'ed25519', key: signer.publicKey, value };
    appended[i] = { id: ids[i], seq: records[i].seq, offset: size + starts[i], record: records[i] };
    line?.(data.subarray(starts[i], ends[i]));
  };
  if (signer.signProduced) signer.signProduced(count, stage, signed);
  else drafts.map((_, i) => signer.sign(stage(i))).forEach((sig, i) => signed(i, sig));
  return { appended, data: data.subarray(0, at) };
}

/** The length of a 64-byte signature in base64url, unpadded, and what holds its place until it is made. */
const SIG_CHARS = 86;
const SIG_PLACEHOLDER = 'A'.repeat(SIG_CHARS);

/** The HEAD that publishes `placed` after `base` (null: a new ledger, whose genesis is its first record), signed. */
function closingHead(base: Head | null, placed: Placed, now: Date, signer: Signer): SignedHead {
  const last = placed.appended[placed.appended.length - 1];
  const genesis = base ? base.genesis : placed.appended[0].id;
  return signHead({ v: 1, genesis, seq: last.seq, tail: last.id, size: (base ? base.size : 0) + placed.data.length, ts: laterTs(now, last.record.ts) }, signer);
}

/**
 * A new ledger's first record and the HEAD over it, placed and signed in memory: what `init`
 * writes, and what a join publishes to a remote that has no ledger before anything is written
 * here (remote/sync.ts).
 */
export function placeGenesis(draft: Draft, now: () => Date, signer: Signer): { placed: Placed; head: SignedHead } {
  const placed = placeDrafts([draft], null, now(), signer);
  return { placed, head: closingHead(null, placed, now(), signer) };
}

// ---------------------------------------------------------------------------------------------
// Step 9: the one lines-then-HEAD write.

/** What one lines-then-HEAD write puts on disk. */
export interface LinesThenHead {
  /** Where the lines go: the published end (HEAD's size; 0 for a new ledger). */
  at: number;
  /** Whole record lines, each with its newline. */
  lines: Buffer;
  /** HEAD's exact bytes now; null when there is none (records.jsonl is then created). */
  headBefore: Buffer | null;
  /** The HEAD that publishes them, with its exact line. */
  head: SignedHead;
}

/** What a write is called in its errors. */
type WriteName = 'append' | 'genesis' | 'copy of the remote\'s records';

/**
 * Step 9, in this order and nothing between: write the lines at `at`, fdatasync them (and, for
 * a records.jsonl made here, the directory that holds its entry), then replace HEAD by the
 * durable recipe (fs/durable.ts). A record is published exactly when HEAD covers it (SPEC 5),
 * so the lines are durable before HEAD names them. If anything fails before HEAD has been
 * renamed into place, the bytes past `at` are cut back off (they were never published); if
 * HEAD may have been replaced (the rename happened, a later fsync failed), nothing is cut and
 * the error says the write may have reached HEAD. The caller holds the writer lock and has moved
 * any bytes past `at` into quarantine/ (step 7). Returns records.jsonl's identity as left here
 * (for the verified-chain memo), or null.
 */
export function writeLinesThenHead(ops: FileOps, paths: LedgerPaths, w: LinesThenHead, what: WriteName = 'append'): FileStat | null {
  const creating = w.headBefore === null;
  let fd: number;
  try {
    fd = creating ? ops.open(paths.records, 'w', 0o644) : ops.open(paths.records, 'r+');
  } catch (e) {
    throw ioError(e, 'open', paths.records);
  }
  let headReplaced: boolean | 'unknown' = false;
  let st: FileStat | null = null;
  try {
    writeAll(ops, fd, w.lines, w.at);
    ops.fdatasync(fd);
    // The file as this writer left it, for the verified-chain memo: taken under the lock, after
    // the lines are durable and before HEAD publishes them. A failed fstat only costs a memo.
    try {
      st = ops.fstat ? ops.fstat(fd) : null;
    } catch {
      st = null;
    }
    // A directory's entry lives in the directory: a new records.jsonl is durable by name too
    // before a HEAD names its bytes.
    if (creating) fsyncDir(ops, paths.dir);
    try {
      writeHead(ops, paths, w.head);
    } catch (e) {
      headReplaced = headChanged(ops, paths, w.headBefore);
      throw e;
    }
  } catch (e) {
    if (headReplaced === false) {
      try {
        ops.ftruncate(fd, w.at);
        ops.fdatasync(fd);
      } catch {
        /* the next writer or `ledger recover` moves the bytes to quarantine/ */
      }
      throw ioError(e, 'append to', paths.records);
    }
    throw reachedHead(e, what, headReplaced);
  } finally {
    try {
      ops.close(fd);
    } catch {
      // Policy: the outcome is decided by now (the lines were fdatasync'ed before HEAD was
      // written, or the write is already failing); a failed close must not replace it.
    }
  }
  return st;
}

/**
 * Whether HEAD differs now from `before` (null: there was no HEAD). Policy: 'unknown' when HEAD
 * cannot be read back, and the caller then acts as if it had changed: bytes that a HEAD may
 * publish are never cut off.
 */
function headChanged(ops: FileOps, paths: LedgerPaths, before: Buffer | null): boolean | 'unknown' {
  try {
    const now = ops.readFile(paths.head);
    return before === null || !now.equals(before);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' && before === null ? false : 'unknown';
  }
}

function reachedHead(e: unknown, what: WriteName, replaced: true | 'unknown'): LedgerError {
  const code = (e as NodeJS.ErrnoException).code ?? 'error';
  return new LedgerError('OP_IO', `the ${what} ${replaced === true ? 'reached' : 'may have reached'} HEAD but its durability is unknown (${code})`, { cause: String(e) }, RUN_AUDIT);
}

// ---------------------------------------------------------------------------------------------
// Step 10: remember.

/** After HEAD is durable: the mark and the memo name what this writer just published. */
function remember(paths: LedgerPaths, guard: WriterGuard, key: string, head: Head, tailOffset: number, st: FileStat | null, root?: Uint8Array): void {
  rememberChain(paths, head.genesis, st, { offset: head.size, seq: head.seq, id: head.tail }, root);
  raiseMark(guard.stateDir, paths, head.genesis, key, { seq: head.seq, tail: head.tail, offset: tailOffset });
}
