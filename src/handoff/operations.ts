// The operations' story (issue 26 item 6): for each work item, every terminal record of its
// operation (its finishes, and the handoffs of it: SPEC 6), and what happened to each since:
// which consumer consumed it and when (a gate's `--consume-as`, SPEC 9), whether that consumer
// reported its action failed (`consume-failed`), and whether it was revoked, by whom, when and
// why (SPEC 6 `revoke`). Pure, folded one record at a time beside the work log (workitems.ts)
// in seq order; HANDOFF.md and HANDOFF.yml render it.
//
// Which records it takes, and why only those: a shared ledger carries a CI's operations by the
// hundred thousand (intents and handoffs of ci-1, ci-2, ...), and a view that told every one of
// them would grow with every CI run, and cost every writer a fold of all of them.
// Policy: the story is the work items'. A handoff counts when its operation is a work item (a
// start of that slug came before it); a consume or a revoke when the record it names is one of
// those terminal records; a consume_failed when it counts against such a consume
// (../causal/consumption.ts failureCounts, the gate's own rule). Each is decided when the record
// is folded, from the records before it only, so a fold over any set of records that holds every
// record the fold took gives the same story (what lets the fold memo keep only those:
// fold-memo.ts). An operation that was never a work item is `ledger log --op` and `ledger gate`'s
// to tell; a record of a work item's operation from before its first start is not in its story.
import type { Dependency, Invariant, LedgerRecord, Outcome } from '../record.js';
import { failureCounts } from '../causal/consumption.js';

/** A revoke record naming a terminal record. */
export interface Revocation {
  seq: number;
  id: string;
  ts: string;
  agent: string;
  reason: string;
}

/** A consumer's report that the action it took failed (the consume may be repeated). */
export interface ConsumeFailure {
  seq: number;
  id: string;
  ts: string;
  reason: string;
}

/** A consume record naming a terminal record: a consumer acted on it. */
export interface Consumed {
  seq: number;
  id: string;
  ts: string;
  /** Who wrote the consume record (the gate's caller). */
  agent: string;
  /** The consumer it consumed as (`--consume-as`). */
  consumer: string;
  /** The operation the consume record names (a record written around the CLI may name another). */
  logical_operation_id: string;
  /** The terminal record it consumed (the attempt it is listed under). */
  handoff: string;
  /** The HEAD the gate decided on. */
  seen_head: { seq: number; tail: string };
  /** The report that its action failed, or null while the consumption stands. */
  failed: ConsumeFailure | null;
}

/** One terminal record of the operation: a finish, or a handoff of it. */
export interface Attempt {
  seq: number;
  id: string;
  kind: 'finish' | 'handoff';
  ts: string;
  agent: string;
  execution_id: string;
  outcome: Outcome;
  invariants: Record<string, Invariant>;
  depends_on: Dependency[];
  supersedes: string[];
  /** A handoff's note (a finish's is in its log entry). */
  note: string | null;
  /** A finish that did not come from the owning execution (workitems.ts): in the story, marked. */
  stray: boolean;
  consumed: Consumed[];
  revoked: Revocation[];
}

export interface Operation {
  slug: string;
  /** Oldest first. */
  attempts: Attempt[];
  /** The seq of the newest record of its story (what orders the operations, newest first). */
  last_seq: number;
}

type Terminal = LedgerRecord<'finish'> | LedgerRecord<'handoff'>;

/** The story fold. `operations` is its state; the lookups by id are its own. */
export class OperationFold {
  readonly operations = new Map<string, Operation>();
  // Each attempt and each consumption by its record's id, with the operation whose story it is in.
  private readonly attempts = new Map<string, { a: Attempt; op: Operation }>();
  private readonly consumes = new Map<string, { c: Consumed; op: Operation }>();

  /** A terminal record of a work item's operation (the caller knows it is one). */
  attempt(seq: number, id: string, r: Terminal, stray: boolean): void {
    const slug = r.logical_operation_id;
    let op = this.operations.get(slug);
    if (!op) this.operations.set(slug, (op = { slug, attempts: [], last_seq: seq }));
    const a: Attempt = {
      seq, id, kind: r.kind, ts: r.ts, agent: r.agent, execution_id: r.execution_id, outcome: r.outcome,
      invariants: r.invariants, depends_on: r.depends_on, supersedes: r.supersedes ?? [],
      note: r.kind === 'handoff' && r.note !== undefined && r.note !== '' ? r.note : null, stray, consumed: [], revoked: [],
    };
    op.attempts.push(a);
    op.last_seq = seq;
    this.attempts.set(id, { a, op });
  }

  /**
   * A consume, revoke or consume_failed record: whether it is part of a story (and so taken).
   * Policy: one that names an operation's record is that operation's, whatever operation a
   * consume record itself names (the gate counts it against the record it names too).
   */
  other(seq: number, id: string, r: LedgerRecord): boolean {
    if (r.kind === 'consume') {
      const at = this.attempts.get(r.handoff);
      if (!at) return false;
      const c: Consumed = { seq, id, ts: r.ts, agent: r.agent, consumer: r.consumer, logical_operation_id: r.logical_operation_id, handoff: r.handoff, seen_head: r.seen_head, failed: null };
      at.a.consumed.push(c);
      this.consumes.set(id, { c, op: at.op });
      at.op.last_seq = seq;
      return true;
    }
    if (r.kind === 'consume_failed') {
      const at = this.consumes.get(r.consume);
      if (!at || !failureCounts(at.c, r)) return false;
      at.c.failed = { seq, id, ts: r.ts, reason: r.reason };
      at.op.last_seq = seq;
      return true;
    }
    if (r.kind === 'revoke') {
      const at = this.attempts.get(r.target);
      if (!at) return false;
      at.a.revoked.push({ seq, id, ts: r.ts, agent: r.agent, reason: r.reason });
      at.op.last_seq = seq;
      return true;
    }
    return false;
  }
}

/** Operations with at least one attempt, the one with the newest record first. */
export function operationsNewestFirst(ops: ReadonlyMap<string, Operation>): Operation[] {
  return [...ops.values()].sort((a, b) => b.last_seq - a.last_seq);
}

/**
 * The attempts that a later attempt of the same operation supersedes (its `supersedes` lists
 * them), by id, with the one that does: as the gate reads it, only an earlier terminal record of
 * the same operation can be superseded (../causal/gate/inputs.ts).
 */
export function supersededBy(op: Operation): Map<string, Attempt> {
  const out = new Map<string, Attempt>();
  const before = new Set<string>();
  for (const a of op.attempts) {
    for (const id of a.supersedes) if (before.has(id) && !out.has(id)) out.set(id, a);
    before.add(a.id);
  }
  return out;
}
