// Retry identity and idempotency (issue 4, item 3), and the checks every causal record gets
// before it is appended. All of it is decided under the writer lock on the HEAD it appends to, so
// two retries racing each other append one record, not two.
//
// - A `handoff` or `intent` is identified by (logical_operation_id, execution_id, kind). Written
//   again with an identical payload (and agent) it is the same record: its id is returned and
//   nothing is appended. Written again with anything different it is refused (INPUT_CONFLICT,
//   exit 2) naming the record that exists: a retry repeats its claim, a new attempt needs a new
//   execution_id, and a second execution of an operation is the same intent, not a new one.
// - `supersedes` may name only earlier handoff/finish records of the same operation.
// - `revoke` must name a handoff or finish in the ledger; revoking it again is idempotent the
//   same way (same reason and agent: the existing revocation; anything else: refused).
// - A `handoff` of a work item whose lease is live is refused from anyone but its owner (SPEC 9).
// - `consume` is written only by `ledger gate --consume-as`, and `consume_failed` only by
//   `ledger consume-failed` (consume-failed.ts), never appended directly; `genesis`
//   only by init (a ledger has one); `start`, `checkpoint` and `finish` only by the handoff-log
//   workflow (src/handoff/workflow.ts), which applies the ownership and lease rules.
// This is what `Ledger.append` (src/ledger.ts) and so `ledger append` apply: the causal layer
// sits under the façade and reaches the disk only through the store's transact.
import { DELTA_MAX_RECORDS, RecordIndex } from './index/record-index.js';
import { canonicalJson } from '../canonical.js';
import { LedgerError, RUN_AUDIT } from '../errors.js';
import type { Draft, Head, Kind, LedgerRecord } from '../record.js';
import type { Signer } from '../sign.js';
import { assertDrafts, transact, type StoreOptions } from '../store/append.js';
import type { LedgerPaths } from '../store/paths.js';
import type { RecoverReport } from '../store/recover.js';
import { isTerminal, CausalView } from './view.js';
import { leaseHold, type WorkItemFold } from './work-lease.js';

/**
 * What the rules above the store need of a writer: its store options, and the key and HEAD read
 * when the rule asks for them (in that order, so errors come as they always have). The Ledger
 * (src/ledger.ts) is one; nothing here imports it.
 */
export interface LedgerWriter {
  readonly paths: LedgerPaths;
  readonly store: StoreOptions;
  /** The signing key; refused (USAGE) when the writer has none. */
  signer(): Signer;
  /** The published HEAD, checked; refused (INPUT_NOT_FOUND) when there is no ledger. */
  head(): Head;
  /** The clock a lease is judged by (default: the system clock). */
  now?: () => Date;
  /** The handoff log's fold of a work item (SPEC 9's lease rule); without it a work item's handoff is refused. */
  workItem?: WorkItemFold;
}

export interface CausalAppended {
  id: string;
  seq: number;
  /** Byte offset of the record's line in records.jsonl. */
  offset: number;
  record: LedgerRecord;
  /** True when an identical record was already in the ledger and nothing was appended for it. */
  existing: boolean;
}

export interface CausalAppendResult {
  /** One entry per draft, in order. */
  records: CausalAppended[];
  /** How many records were actually appended. */
  appended: number;
  /** The published HEAD after the call (unchanged when nothing was appended). */
  head: Head;
  recovered: RecoverReport | null;
}

const ENVELOPE_ONLY = new Set(['v', 'seq', 'prev_tail_hash', 'ts', 'sig']);

/**
 * The claim a record makes: kind, agent and payload (the envelope's chain fields left out).
 * Policy: the agent is part of the claim. The same payload from another agent is a different
 * statement (who says so), so it is refused as a conflicting retry, not merged into one.
 */
function claimOf(r: LedgerRecord | Draft): string {
  return canonicalJson(Object.fromEntries(Object.entries(r).filter(([k]) => !ENVELOPE_ONLY.has(k))));
}

const IDENTIFIED = new Set(['handoff', 'intent']);
const short = (id: string) => `${id.slice(0, 19)}…`;

type Decision = { kind: 'append' } | { kind: 'existing'; found: Omit<CausalAppended, 'existing'> } | { kind: 'same-as'; index: number };

/** The kinds `append` never writes, and who does. */
const WRITTEN_ELSEWHERE: Partial<Record<Kind, string>> = {
  genesis: 'a genesis record is written only by `ledger init` (Ledger.init): a ledger has exactly one',
  consume: 'a consume record is written only by `ledger gate OP --consume-as CONSUMER`, which checks the gate first',
  consume_failed: 'a consume_failed record is written only by `ledger consume-failed`, which checks that the consumer consumed it',
  start: 'a start record is written only by `ledger start` (ledger.start()), which applies the ownership and lease rules',
  checkpoint: 'a checkpoint record is written only by `ledger checkpoint` (ledger.checkpoint()), which applies the ownership and lease rules',
  finish: 'a finish record is written only by `ledger finish` (ledger.finish()), which applies the ownership and lease rules',
  release: 'a release record is written only by `ledger release` (ledger.release()), which checks that its agent owns the item',
  note: 'a note record is written only by `ledger note` (ledger.note()), which checks that the work item exists',
};

// One object for every appended draft's decision: a batch of 200,000 made as many (issue 26).
const APPEND: Decision = Object.freeze({ kind: 'append' });

function decide(view: CausalView, drafts: readonly Draft[], now: Date, fold: WorkItemFold | undefined): Decision[] {
  const inBatch = new Map<string, number>();
  const decisions: Decision[] = [];
  // Speed (issue 26, `append --batch` >= 20,000 records/s): the lease of one work item, judged
  // for one agent at this append's one `now` on one locked HEAD, is the same for every handoff of
  // it in the batch; it is judged once (a batch of 200,000 handoffs of 1,000 operations read
  // each operation's work records 200 times).
  const leaseJudged = new Set<string>();
  drafts.forEach((d, i) => {
    const where = drafts.length > 1 ? `payload ${i + 1}: ` : '';
    const rec = d as Draft & Record<string, unknown>;
    const elsewhere = WRITTEN_ELSEWHERE[d.kind];
    if (elsewhere !== undefined) throw new LedgerError('INPUT_REFUSED', `${where}${elsewhere}`, { kind: d.kind });
    if (d.kind === 'revoke') {
      decisions.push(decideRevoke(view, d as Draft<'revoke'>, where, drafts, i, inBatch));
      return;
    }
    if (!IDENTIFIED.has(d.kind)) {
      decisions.push(APPEND);
      return;
    }
    const op = rec.logical_operation_id as string;
    const exec = rec.execution_id as string;
    const identity = `${d.kind}\0${op}\0${exec}`;
    const twin = inBatch.get(identity);
    if (twin !== undefined) {
      if (claimOf(drafts[twin]) !== claimOf(d)) throw new LedgerError('INPUT_CONFLICT', `${where}${d.kind} ${op}/${exec} appears twice in the batch with different payloads`);
      decisions.push({ kind: 'same-as', index: twin });
      return;
    }
    // Only this execution's records are read: an operation may have thousands of others.
    const same = view.sameExecution(d.kind as 'handoff' | 'intent', op, exec)[0];
    if (same) {
      if (claimOf(same.record) === claimOf(d)) {
        decisions.push({ kind: 'existing', found: same });
        return;
      }
      throw new LedgerError(
        'INPUT_CONFLICT',
        `${where}${d.kind} ${op}/${exec} already exists as ${same.id} (seq ${same.seq}) with a different payload or agent; a retry must repeat it exactly, and a new attempt needs a new execution id`,
        { existing: same.id, seq: same.seq },
      );
    }
    if (d.kind === 'handoff') {
      checkSupersedes(view, rec.supersedes as string[] | undefined, op, where);
      const lease = `${op}\0${d.agent}`;
      if (!leaseJudged.has(lease)) {
        checkLease(view, op, d.agent, now, fold, where);
        leaseJudged.add(lease);
      }
    }
    inBatch.set(identity, i);
    decisions.push(APPEND);
  });
  assertNoProblems(view);
  return decisions;
}

/** A record that failed verification cannot be compared with: refuse rather than guess. */
function assertNoProblems(view: CausalView): void {
  if (view.problems.length) {
    throw new LedgerError('OP_CORRUPT', view.problems[0].message, { seq: view.problems[0].seq }, RUN_AUDIT);
  }
}

/**
 * Policy (SPEC 9, issue 13 finding 5): while a work item's lease is live, a handoff of it by
 * another agent than its owner is refused (exit 2), as its checkpoint or finish would be: the
 * gate would not take it as terminal, and the views and `resume` would still name the owner.
 * The lease is judged at this append's `now`, under the writer lock.
 */
function checkLease(view: CausalView, op: string, agent: string, now: Date, fold: WorkItemFold | undefined, where: string): void {
  const records = view.workRecords(op);
  assertNoProblems(view);
  if (records.length === 0) return;
  // Policy: fail closed. A writer given no work-item rule cannot judge the lease, so refuses.
  if (!fold) throw new LedgerError('INPUT_REFUSED', `${where}${op} is a work item, and this writer was given no rule to judge its lease`, { op });
  const hold = leaseHold(fold(records, op, now), agent);
  if (!hold) return;
  throw new LedgerError(
    'INPUT_CONFLICT',
    `${where}a handoff of ${op} by ${agent} is refused: ${op} is a work item owned by ${hold.owner} (execution ${hold.execution_id}) with a live lease until ${hold.lease_until}, and only its owner's finish closes it`,
    { op, owner: hold.owner, execution_id: hold.execution_id, lease_until: hold.lease_until, agent },
    `wait for the lease to lapse, or ask ${hold.owner} to finish or release it`,
  );
}

function checkSupersedes(view: CausalView, ids: string[] | undefined, op: string, where: string): void {
  for (const id of ids ?? []) {
    const t = view.byId(id);
    if (!t || !isTerminal(t.record) || (t.record as { logical_operation_id?: string }).logical_operation_id !== op) {
      throw new LedgerError('INPUT_REFUSED', `${where}--supersedes ${short(id)} is not a handoff or finish of ${op} in this ledger`, { supersedes: id });
    }
  }
}

function decideRevoke(view: CausalView, d: Draft<'revoke'>, where: string, drafts: readonly Draft[], i: number, inBatch: Map<string, number>): Decision {
  const target = view.byId(d.target);
  assertNoProblems(view);
  if (!target) throw new LedgerError('INPUT_NOT_FOUND', `${where}no record ${d.target} in this ledger; revoke names a published record`, { target: d.target });
  if (!isTerminal(target.record)) {
    throw new LedgerError('INPUT_REFUSED', `${where}record ${short(d.target)} (seq ${target.seq}) is a ${target.record.kind}; only a handoff or finish can be revoked`, { target: d.target });
  }
  const identity = `revoke\0${d.target}`;
  const twin = inBatch.get(identity);
  if (twin !== undefined) {
    if (claimOf(drafts[twin]) !== claimOf(d)) throw new LedgerError('INPUT_CONFLICT', `${where}${short(d.target)} is revoked twice in the batch with different reasons`);
    return { kind: 'same-as', index: twin };
  }
  const prior = view.revocations(d.target)[0];
  if (prior) {
    if (claimOf(prior.record) === claimOf(d)) return { kind: 'existing', found: prior };
    throw new LedgerError('INPUT_CONFLICT', `${where}${short(d.target)} is already revoked by ${prior.id} (seq ${prior.seq}); a revocation is final`, { existing: prior.id, seq: prior.seq });
  }
  inBatch.set(identity, i);
  return APPEND;
}

/**
 * Appends drafts with retry identity: identical retries of handoffs, intents and revocations
 * return the existing record; everything is decided under the writer lock.
 */
export function appendCausal(writer: LedgerWriter, drafts: readonly Draft[]): CausalAppendResult {
  assertDrafts(drafts);
  if (drafts.length === 0) throw new LedgerError('INPUT_SCHEMA', 'nothing to append');
  const paths = writer.paths;
  // When the index is far behind (a first use, or many appends by other means), bring it up to
  // date before taking the lock, so the critical section reads only what is new. When it is
  // close (the usual case) that would scan its unindexed tail twice, once here and once below.
  // The key first: HEAD is verified next, and a HEAD this key signed (the usual case) is then
  // checked with the key object already made for signing (see createSigner).
  const signer = writer.signer();
  const head = writer.head();
  if (head.seq - RecordIndex.namedThrough(paths) > 2 * DELTA_MAX_RECORDS) CausalView.open(paths, head, { trust: null }).close();
  let decisions: Decision[] = [];
  // The drafts were validated just above, in this same synchronous call: transact need not
  // validate them again (it still validates any other draft).
  const res = transact(writer.store, signer, (locked) => {
    const view = CausalView.open(paths, locked.head, { trust: null });
    try {
      decisions = decide(view, drafts, (writer.now ?? (() => new Date()))(), writer.workItem);
    } finally {
      view.close();
    }
    // All of them, the usual case: the very array, which transact then knows is checked.
    return decisions.every((d) => d.kind === 'append') ? drafts : drafts.filter((_, i) => decisions[i].kind === 'append');
  }, drafts);
  const out: CausalAppended[] = [];
  let next = 0;
  decisions.forEach((d) => {
    if (d.kind === 'append') {
      const a = res.records[next++];
      out.push({ id: a.id, seq: a.seq, offset: a.offset, record: a.record, existing: false });
    } else if (d.kind === 'existing') out.push({ id: d.found.id, seq: d.found.seq, offset: d.found.offset, record: d.found.record, existing: true });
    else out.push({ ...out[d.index] });
  });
  return { records: out, appended: res.records.length, head: res.head, recovered: res.recovered };
}
