// What `ledger status` lists beside the work items (issue 14 item 4): intents still waiting for an
// outcome, and ambiguous or timed-out outcomes that nothing resolved since. A pure fold over the
// published records in seq order, fed by the same single pass that folds the work log.
//
// The rules are `ledger pending`'s, from the one definition of each: intents as pending's, and
// the outcomes nothing resolved by the causal layer's tracker (src/causal/pending.ts
// `unresolvedTracker`, revocations included), so `status` and `pending` never disagree.
import type { LedgerRecord, Outcome } from '../record.js';
import type { RecordAt } from '../store/read.js';
import { unresolvedTracker } from '../causal/pending.js';

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

export class OutcomeFold {
  // op -> records waiting, in seq order (Maps keep insertion order).
  private readonly intents = new Map<string, Map<string, PendingIntent>>();
  // Ages are the caller's to judge (status computes them at its own `now`).
  private readonly outcomes = unresolvedTracker(0);

  add(at: RecordAt): void {
    const r = at.record as LedgerRecord;
    if (r.kind === 'intent') {
      let execs = this.intents.get(r.logical_operation_id);
      if (!execs) this.intents.set(r.logical_operation_id, (execs = new Map()));
      execs.delete(r.execution_id); // a repeated intent of one execution: the latest counts
      execs.set(r.execution_id, { logical_operation_id: r.logical_operation_id, execution_id: r.execution_id, seq: at.seq, id: at.id, agent: r.agent, ts: r.ts, action: r.action });
      return;
    }
    this.outcomes.add(at);
    if (r.kind !== 'handoff' && r.kind !== 'finish') return;
    // Policy (as `ledger pending`): any terminal record settles every intent of its operation
    // before it, its own execution's or an earlier attempt's; the outcome does not matter.
    this.intents.delete(r.logical_operation_id);
  }

  /** Intents with no terminal record of their operation since, oldest first. */
  pendingIntents(): PendingIntent[] {
    return [...this.intents.values()].flatMap((m) => [...m.values()]).sort((a, b) => a.seq - b.seq);
  }

  /** Ambiguous and timed-out outcomes no later success or cancel resolved, oldest first. */
  unresolvedOutcomes(): UnresolvedOutcome[] {
    return this.outcomes.result().map((u) => ({
      logical_operation_id: u.logical_operation_id, execution_id: u.execution_id, kind: u.kind, outcome: u.outcome, seq: u.seq, id: u.id, agent: u.agent, ts: u.ts,
    }));
  }
}

/** Feeds each record to `visit` on its way through: one pass serves two folds. */
export function* tap(records: Iterable<RecordAt>, visit: (r: RecordAt) => void): Generator<RecordAt> {
  for (const r of records) {
    visit(r);
    yield r;
  }
}
