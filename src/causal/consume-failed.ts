// `ledger consume-failed RECORD_ID|OP --consumer C --reason TEXT` (issue 14, item 13): the
// consumer's recorded word that the action it took after `gate --consume-as C` failed (the
// deploy did not happen), after which the gate lets C consume that handoff again. Decided under
// the writer lock on the HEAD it appends to, like every causal write.
//
// What it names: a consume record; a handoff (or finish), meaning C's latest consumption of it;
// or an operation id, meaning C's latest consumption of that operation. A record is named as
// people type it (SPEC 10): a seq, HEAD, a full id or a unique prefix of 8+ hex digits, resolved
// by the one resolver (store/ids.ts) on the HEAD the report appends to.
// Policy: a seq, HEAD and a bare hex prefix are also well-formed operation ids. Such a text names
// the record, unless C consumed an operation of exactly that id: then it names that operation
// when no record answers to it, and is refused as ambiguous (exit 2, both named) when one does.
// `sha256:` + hex, and the "…" the outputs print, always name a record.
//
// Refusals (exit 2, nothing written):
//   INPUT_NOT_FOUND  no such record, or C has no consumption there
//   INPUT_REFUSED    the record is not a consume, handoff or finish; the consume is another
//                    consumer's; the agent is not the one that wrote the consume record
//   INPUT_CONFLICT   its failure was already reported with another reason (a report is final)
//   INPUT_AMBIGUOUS  a prefix of several record ids, or a text that names a record and an operation
// An identical report (same consume, agent and reason) returns the existing record.
import { LedgerError, RUN_AUDIT } from '../errors.js';
import { ID_RE, type Draft, type Head, type LedgerRecord } from '../record.js';
import { transact } from '../store/append.js';
import { parseRecordRef, resolveRecordRef, type RecordRef } from '../store/ids.js';
import type { LedgerPaths } from '../store/paths.js';
import { consumptionsOf, type Consumption } from './consumption.js';
import type { LedgerWriter } from './retry.js';
import { CausalView, isTerminal } from './view.js';

export interface ConsumeFailedRequest {
  /** A consume or handoff/finish record (seq, HEAD, id or 8+ hex prefix), or a logical_operation_id. */
  target: string;
  consumer: string;
  /** Who reports: must be the agent that wrote the consume record. */
  agent: string;
  reason: string;
}

export interface ConsumeFailedResult {
  id: string;
  seq: number;
  /** True when the same report was already in the ledger and nothing was appended. */
  existing: boolean;
  consume: { id: string; seq: number };
  handoff: string;
  logical_operation_id: string;
}

const short = (id: string) => `${id.slice(0, 19)}…`;

function recordRefOf(target: string): RecordRef | null {
  try {
    return parseRecordRef(target, 'consume-failed');
  } catch {
    return null;
  }
}


/** The full id of the record `target` names, or null when it names an operation (Policy above). */
function targetRecordId(paths: LedgerPaths, head: Head, view: CausalView, req: ConsumeFailedRequest): string | null {
  const ref = recordRefOf(req.target);
  if (ref === null) return null;
  if (ref.kind === 'id') return ref.id;
  const alsoOp = ID_RE.test(req.target) && !req.target.startsWith('sha256:') && consumptionsOf(view.consumerRecords(req.target, req.consumer)).length > 0;
  if (!alsoOp) return resolveRecordRef(paths, head, ref).id;
  let rec: { id: string; seq: number; kind: string } | null = null;
  try {
    const r = resolveRecordRef(paths, head, ref);
    rec = { id: r.id, seq: r.seq, kind: r.record.kind };
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'INPUT_NOT_FOUND') return null;
    throw e;
  }
  throw new LedgerError(
    'INPUT_AMBIGUOUS',
    `"${req.target}" names both record ${short(rec.id)} (seq ${rec.seq}, ${rec.kind}) and operation ${req.target}, which ${req.consumer} consumed; name the record by its id, or the consume record`,
    { target: req.target, record: rec.id, seq: rec.seq, logical_operation_id: req.target },
  );
}

/** The consumption the request names, with the consumer's consume records of its operation. */
function findConsumption(paths: LedgerPaths, head: Head, view: CausalView, req: ConsumeFailedRequest): { c: Consumption; op: string } {
  const none = (where: string) =>
    new LedgerError('INPUT_NOT_FOUND', `${req.consumer} has no consumption of ${where} in this ledger`, { target: req.target, consumer: req.consumer }, `\`ledger gate OP --consume-as ${req.consumer}\` records one`);
  const id = targetRecordId(paths, head, view, req);
  if (id === null) {
    const latest = consumptionsOf(view.consumerRecords(req.target, req.consumer)).at(-1);
    if (!latest) throw none(req.target);
    return { c: latest, op: req.target };
  }
  const rec = view.byId(id);
  if (!rec) throw new LedgerError('INPUT_NOT_FOUND', `no record ${id} in this ledger`, { target: req.target });
  const r = rec.record as LedgerRecord & { logical_operation_id: string; consumer?: string; handoff?: string };
  if (r.kind === 'consume') {
    if (r.consumer !== req.consumer) {
      throw new LedgerError('INPUT_REFUSED', `consume record ${short(rec.id)} (seq ${rec.seq}) is ${r.consumer}'s, not ${req.consumer}'s: only the consumer that consumed it can report its failure`, { target: req.target, consumer: r.consumer });
    }
    const c = consumptionsOf(view.consumerRecords(r.logical_operation_id, req.consumer)).find((x) => x.id === rec.id);
    // A consume record filed under another operation than its own is not one the gate wrote.
    if (!c) throw none(short(rec.id));
    return { c, op: r.logical_operation_id };
  }
  if (isTerminal(r)) {
    const c = consumptionsOf(view.consumerRecords(r.logical_operation_id, req.consumer)).filter((x) => x.handoff === rec.id).at(-1);
    if (!c) throw none(`handoff ${short(rec.id)} (seq ${rec.seq})`);
    return { c, op: r.logical_operation_id };
  }
  throw new LedgerError('INPUT_REFUSED', `record ${short(rec.id)} (seq ${rec.seq}) is a ${r.kind}; consume-failed names a consume record, a handoff or finish, or an operation`, { target: req.target });
}

/** Appends the consume_failed record (or returns the identical one that exists). */
export function reportConsumeFailed(writer: LedgerWriter, req: ConsumeFailedRequest): ConsumeFailedResult {
  const paths = writer.paths;
  let found: { c: Consumption; op: string } | null = null;
  let existing: { id: string; seq: number } | null = null;
  const res = transact(writer.store, writer.signer(), (locked) => {
    const view = CausalView.open(paths, locked.head, { trust: null });
    try {
      found = findConsumption(paths, locked.head, view, req);
      if (view.problems.length) throw new LedgerError('OP_CORRUPT', view.problems[0].message, { seq: view.problems[0].seq }, RUN_AUDIT);
    } finally {
      view.close();
    }
    const { c } = found;
    // Policy: only the consumer that consumed it reports its failure: the same consumer name
    // and the same agent (the key holder's word for who acted) as the consume record.
    if (c.agent !== req.agent) {
      throw new LedgerError('INPUT_REFUSED', `consume record ${short(c.id)} (seq ${c.seq}) was written by ${c.agent}, not ${req.agent}: only the consumer that consumed it can report its failure`, { consume: c.id, agent: c.agent });
    }
    if (c.failed) {
      if (c.failed.reason === req.reason) {
        existing = { id: c.failed.id, seq: c.failed.seq };
        return [];
      }
      throw new LedgerError('INPUT_CONFLICT', `the failure of consume record ${short(c.id)} (seq ${c.seq}) was already reported by ${c.failed.id} (seq ${c.failed.seq}) with another reason; a report is final`, { existing: c.failed.id, seq: c.failed.seq });
    }
    return [{ kind: 'consume_failed', agent: req.agent, logical_operation_id: found.op, consumer: req.consumer, consume: c.id, handoff: c.handoff, reason: req.reason } as Draft];
  });
  const f = found as { c: Consumption; op: string } | null;
  if (!f) throw new LedgerError('INTERNAL', 'consume-failed was not decided under the lock');
  const written = existing ?? res.records[0];
  if (!written) throw new LedgerError('INTERNAL', 'consume-failed appended nothing');
  return { id: written.id, seq: written.seq, existing: existing !== null, consume: { id: f.c.id, seq: f.c.seq }, handoff: f.c.handoff, logical_operation_id: f.op };
}
