// What `ledger status` lists beside the work items (issue 14 item 4): intents still waiting for an
// outcome, and ambiguous or timed-out outcomes that nothing resolved since. A pure fold over the
// published records in seq order, fed by the same single pass that folds the work log.
//
// Written here because the gate's `unresolvedOutcomes` (src/causal/pending.ts, helper "gate") was
// not there when `status` was written; the rules are the same as `ledger pending`'s for intents.
import type { LedgerRecord, Outcome } from '../record.js';
import type { RecordAt } from '../store/read.js';

export interface PendingIntent {
  logical_operation_id: string;
  execution_id: string;
  seq: number;
  id: string;
  agent: string;
  ts: string;
  action: string;
}

export interface UnresolvedOutcome {
  logical_operation_id: string;
  execution_id: string;
  kind: 'handoff' | 'finish';
  outcome: Extract<Outcome, 'ambiguous' | 'timeout'>;
  seq: number;
  id: string;
  agent: string;
  ts: string;
}

/** The outcomes a later terminal record must have to resolve an ambiguous or timed-out one. */
const RESOLVING: readonly Outcome[] = ['success', 'cancelled'];

export class OutcomeFold {
  // op -> records waiting, in seq order (Maps keep insertion order).
  private readonly intents = new Map<string, Map<string, PendingIntent>>();
  private readonly unresolved = new Map<string, UnresolvedOutcome[]>();

  add(at: RecordAt): void {
    const r = at.record as LedgerRecord;
    if (r.kind === 'intent') {
      let execs = this.intents.get(r.logical_operation_id);
      if (!execs) this.intents.set(r.logical_operation_id, (execs = new Map()));
      execs.delete(r.execution_id); // a repeated intent of one execution: the latest counts
      execs.set(r.execution_id, { logical_operation_id: r.logical_operation_id, execution_id: r.execution_id, seq: at.seq, id: at.id, agent: r.agent, ts: r.ts, action: r.action });
      return;
    }
    if (r.kind !== 'handoff' && r.kind !== 'finish') return;
    const op = r.logical_operation_id;
    // Policy (as `ledger pending`): any terminal record settles every intent of its operation
    // before it, its own execution's or an earlier attempt's; the outcome does not matter.
    this.intents.delete(op);
    // Policy: only a later success or cancel resolves an ambiguous or timed-out outcome; a later
    // failure does not (the earlier attempt may still have taken effect), and neither does a
    // revocation (it withdraws the claim, not the side effect).
    if (RESOLVING.includes(r.outcome)) this.unresolved.delete(op);
    else if (r.outcome === 'ambiguous' || r.outcome === 'timeout') {
      let list = this.unresolved.get(op);
      if (!list) this.unresolved.set(op, (list = []));
      list.push({ logical_operation_id: op, execution_id: r.execution_id, kind: r.kind, outcome: r.outcome, seq: at.seq, id: at.id, agent: r.agent, ts: r.ts });
    }
  }

  /** Intents with no terminal record of their operation since, oldest first. */
  pendingIntents(): PendingIntent[] {
    return [...this.intents.values()].flatMap((m) => [...m.values()]).sort((a, b) => a.seq - b.seq);
  }

  /** Ambiguous and timed-out outcomes no later success or cancel resolved, oldest first. */
  unresolvedOutcomes(): UnresolvedOutcome[] {
    return [...this.unresolved.values()].flat().sort((a, b) => a.seq - b.seq);
  }
}

/** Feeds each record to `visit` on its way through: one pass serves two folds. */
export function* tap(records: Iterable<RecordAt>, visit: (r: RecordAt) => void): Generator<RecordAt> {
  for (const r of records) {
    visit(r);
    yield r;
  }
}
