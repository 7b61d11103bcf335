// Collecting a gate decision's inputs: the one step that reads the ledger (through a CausalView:
// every record verified from its bytes) and the project (evidence re-digested now). Everything a
// term needs ends up in one plain GateInputs; the terms (index.ts) read nothing else.
//
// The lookups run in a fixed order (the operation's records, the latest handoff's revocations and
// consumptions, the revocations of live successes, evidence, then each dependency), so a record
// that fails verification is reported in the same place on every run.
import { canonicalJson } from '../../canonical.js';
import type { Dependency, Evidence, FinishPayload, HandoffPayload, Invariant, LedgerRecord } from '../../record.js';
import { consumptionsOf, standing, stateOf } from '../consumption.js';
import { checkEvidence, type EvidenceContext } from '../evidence.js';
import { leaseHold } from '../work-lease.js';
import { isTerminal, type CausalView, type VerifiedRecord } from '../view.js';
import { evaluateGate } from './index.js';
import type { ChainVerdict, Conflict, DependencyResult, GateInputs, GateOptions, HandoffFacts } from './types.js';

/** How deep `depends_on` may nest before the gate gives up (and holds). */
export const MAX_DEPENDENCY_DEPTH = 32;

type Payload = (HandoffPayload | FinishPayload) & { logical_operation_id: string; execution_id: string };
const payloadOf = (v: VerifiedRecord) => v.record as LedgerRecord & Payload;

/** What stays the same for an operation and every dependency it reaches. */
interface Collection {
  view: CausalView;
  chain: ChainVerdict;
  now: number;
  evidence: EvidenceContext;
  allowOpaque: boolean;
  /** Each dependency (operation and outcome) is decided once per evaluation. */
  memo: Map<string, DependencyResult>;
  workItem: GateOptions['workItem'];
}

/** Collects what the gate for `op` reads, on the view's HEAD. Never throws for what it finds. */
export function collectGateInputs(view: CausalView, chain: ChainVerdict, op: string, o: GateOptions): GateInputs {
  const c: Collection = { view, chain, now: o.now, evidence: o.evidence, allowOpaque: o.allowOpaque ?? false, memo: new Map(), workItem: o.workItem };
  const options = { accept: o.accept, requireInvariants: o.requireInvariants, maxAgeMs: o.maxAgeMs, consumer: o.consumer || null };
  return collectOp(c, op, options, o.expectHandoff || null, [op]);
}

function collectOp(c: Collection, op: string, options: GateInputs['options'], expectHandoff: string | null, stack: string[]): GateInputs {
  const { view } = c;
  const problemsBefore = view.problems.length;
  const records = view.opRecords(op);
  const terminals = records.filter((r) => isTerminal(r.record));
  const latest = terminals.length ? terminals[terminals.length - 1] : null;
  let facts: HandoffFacts | null = null;
  if (latest) {
    const h = payloadOf(latest);
    facts = {
      ref: { id: latest.id, seq: latest.seq, kind: latest.record.kind as 'handoff' | 'finish', execution_id: h.execution_id, outcome: h.outcome, agent: latest.record.agent, ts: latest.record.ts },
      invariants: h.invariants as Record<string, Invariant>,
      revocations: view.revocations(latest.id).map((r) => ({ id: r.id, seq: r.seq, reason: (r.record as { reason: string }).reason })),
      named: expectHandoff === null ? null : { id: expectHandoff, seq: terminals.find((t) => t.id === expectHandoff)?.seq ?? null },
      ...consumerFacts(view, op, latest, options.consumer),
      leaseHolds: leaseHolds(c, op, records, latest),
      conflicts: conflictingSuccessors(view, terminals),
      evidence: Object.entries(h.evidence as Record<string, Evidence>).map(([name, ev]) => checkEvidence(name, ev, c.evidence, { allowOpaque: c.allowOpaque })),
      reopenings: records
        .filter((r) => r.seq > latest.seq && (r.record.kind === 'start' || r.record.kind === 'intent'))
        .map((r) => ({ id: r.id, seq: r.seq, kind: r.record.kind as 'start' | 'intent', execution_id: (r.record as { execution_id: string }).execution_id })),
      dependencies: (h.depends_on as Dependency[]).map((dep) => dependency(c, dep, stack)),
    };
  }
  return {
    op,
    head: { seq: view.head.seq, tail: view.head.tail },
    chain: c.chain,
    now: c.now,
    options,
    opRecords: records.length,
    latest: facts,
    // Every problem met while collecting, a dependency's included: this decision relied on it.
    problems: view.problems.slice(problemsBefore).map((p) => p.message),
  };
}

/**
 * What the consumer did with this operation before (SPEC 9, exactly once per operation): its
 * standing consume records of this very handoff (duplicate delivery), and whether this handoff
 * re-drives the one it last consumed. Policy: a later handoff is new to the consumer exactly when
 * its evidence (each name's digest) differs from that of the handoff the consumer last consumed
 * and has not reported failed (consumption.ts stateOf); the same evidence under a new execution,
 * with another note, or listing the consumed one in `supersedes`, is a re-drive of the same state.
 */
function consumerFacts(view: CausalView, op: string, latest: VerifiedRecord, consumer: string | null): Pick<HandoffFacts, 'consumptions' | 'redrives'> {
  if (consumer === null) return { consumptions: [], redrives: [] };
  const mine = consumptionsOf(view.consumerRecords(op, consumer));
  const failed = new Set(mine.filter((m) => m.failed !== null).map((m) => m.id));
  // Also by handoff: a consume record of this handoff filed under another operation still spends it.
  const consumptions = view.consumptions(latest.id)
    .filter((r) => (r.record as { consumer: string }).consumer === consumer && !failed.has(r.id))
    .map((r) => ({ id: r.id, seq: r.seq }));
  const last = standing(mine).at(-1);
  if (consumptions.length || last === undefined || last.handoff === latest.id) return { consumptions, redrives: [] };
  // A consumed handoff that cannot be read back (it fails verification) is one of the problems.
  const consumed = view.byId(last.handoff);
  // Policy: fail closed. A consumed handoff that is not in the ledger cannot show this one new.
  if (consumed === null) return { consumptions, redrives: [{ consume: last.id, seq: last.seq, handoff: last.handoff, handoff_seq: -1 }] };
  if (stateOf(consumed.record) !== stateOf(latest.record)) return { consumptions, redrives: [] };
  return { consumptions, redrives: [{ consume: last.id, seq: last.seq, handoff: consumed.id, handoff_seq: consumed.seq }] };
}

/** SPEC 9: a handoff by another agent while the work item's lease is live is not terminal. */
function leaseHolds(c: Collection, op: string, records: VerifiedRecord[], latest: VerifiedRecord): HandoffFacts['leaseHolds'] {
  // Only an operation that was ever started is a work item: others have no lease to read.
  if (!records.some((r) => r.record.kind === 'start')) return [];
  // Policy: fail closed. Without the work-item rule the lease cannot be judged: it holds, saying so.
  if (!c.workItem) return [{ owner: '(unknown: no work-item rule was given to judge the lease)', execution_id: '?', lease_until: '?', agent: latest.record.agent }];
  const hold = leaseHold(c.workItem(c.view.workRecords(op), op, new Date(c.now)), latest.record.agent, latest.seq);
  return hold ? [hold] : [];
}

/**
 * Live successful handoffs that disagree. A success is live when no later terminal record of the
 * operation supersedes it and it is not revoked. Two live successes with different evidence are
 * conflicting successor states, whichever executions wrote them (SPEC 9, term 2).
 */
function conflictingSuccessors(view: CausalView, terminals: VerifiedRecord[]): Conflict[] {
  const superseded = new Set<string>();
  terminals.forEach((t, i) => {
    for (const id of payloadOf(t).supersedes ?? []) {
      // Only an earlier terminal record of the same operation can be superseded.
      if (terminals.slice(0, i).some((e) => e.id === id)) superseded.add(id);
    }
  });
  const live = terminals.filter((t) => payloadOf(t).outcome === 'success' && !superseded.has(t.id) && view.revocations(t.id).length === 0);
  const out: Conflict[] = [];
  const groups = new Map<string, VerifiedRecord>();
  for (const t of live) {
    const key = canonicalJson(payloadOf(t).evidence);
    if (!groups.has(key)) groups.set(key, t);
  }
  const firsts = [...groups.values()];
  for (let i = 1; i < firsts.length; i++) {
    const [a, b] = [firsts[i - 1], firsts[i]];
    out.push({ a: a.id, b: b.id, a_execution: payloadOf(a).execution_id, b_execution: payloadOf(b).execution_id });
  }
  return out;
}

/** Whether `dep` holds now: the whole gate on its operation, accepting the named outcome. */
function dependency(c: Collection, dep: Dependency, stack: string[]): DependencyResult {
  const base = { logical_operation_id: dep.logical_operation_id, outcome: dep.outcome };
  if (stack.includes(dep.logical_operation_id)) {
    const cycle = [...stack.slice(stack.indexOf(dep.logical_operation_id)), dep.logical_operation_id].join(' -> ');
    return { ...base, ok: false, failed_term: 'dependencies_true', reason: `dependency cycle: ${cycle}` };
  }
  if (stack.length > MAX_DEPENDENCY_DEPTH) {
    return { ...base, ok: false, failed_term: 'dependencies_true', reason: `dependencies nest deeper than ${MAX_DEPENDENCY_DEPTH} (${stack.join(' -> ')} -> ...)` };
  }
  const key = `${dep.logical_operation_id}\0${dep.outcome}`;
  const hit = c.memo.get(key);
  if (hit) return hit;
  // Policy: a dependency is held to every term except the consumer's --max-age and required
  // invariants, which speak about the handoff the consumer acts on, not about what it builds on.
  const options = { accept: [dep.outcome], requireInvariants: [], maxAgeMs: null, consumer: null };
  const r = evaluateGate(collectOp(c, dep.logical_operation_id, options, null, [...stack, dep.logical_operation_id]));
  const out: DependencyResult = { ...base, ok: r.ok, failed_term: r.failed_term, reason: r.ok ? 'holds' : r.reason };
  c.memo.set(key, out);
  return out;
}
