// The consumer rule (SPEC 9, the essay's "handoff valid ∧ producer outcome accepted ∧ invariants
// satisfied ∧ state current ∧ dependency conditions true"). Every term is evaluated, even after
// one fails, so the answer lists everything that stands in the way, in SPEC 9's order.
//
// Receipt is not permission: a term that cannot be shown true is false, with the reason.
import { canonicalJson } from '../canonical.js';
import type { Dependency, Evidence, FinishPayload, HandoffPayload, Invariant, LedgerRecord, Outcome } from '../record.js';
import { checkEvidence, type EvidenceCheck, type EvidenceContext } from './evidence.js';
import { isTerminal, type CausalView, type VerifiedRecord } from './view.js';

export const TERMS = ['handoff_valid', 'outcome_accepted', 'invariants_satisfied', 'state_current', 'dependencies_true'] as const;
export type Term = (typeof TERMS)[number];

/** How deep `depends_on` may nest before the gate gives up (and holds). */
export const MAX_DEPENDENCY_DEPTH = 32;

/** What the chain audit said about the ledger up to HEAD (audit/, run by the caller). */
export interface ChainVerdict {
  ok: boolean;
  reason: string;
}

export interface GateOptions {
  /** Outcomes the consumer accepts (default: success). */
  accept: readonly Outcome[];
  /** Invariants that must be present (and ok) on the handoff. */
  requireInvariants: readonly string[];
  /** The handoff may be at most this old (ms); null: any age. */
  maxAgeMs: number | null;
  /** The one reference time of the command (ms since the epoch). */
  now: number;
  /** Where evidence sources are re-digested from. */
  evidence: EvidenceContext;
  /** Accept bare sha256: evidence as current. */
  allowOpaque?: boolean;
  /** Act only if this is still the operation's latest handoff (it was not superseded). */
  expectHandoff?: string | null;
  /** A consumer that must not have consumed this handoff already (duplicate delivery). */
  consumer?: string | null;
}

export interface HandoffRef {
  id: string;
  seq: number;
  kind: 'handoff' | 'finish';
  execution_id: string;
  outcome: Outcome;
  agent: string;
  ts: string;
}

export interface DependencyResult {
  logical_operation_id: string;
  outcome: Outcome;
  ok: boolean;
  failed_term: Term | null;
  reason: string;
}

export interface GateResult {
  ok: boolean;
  failed_term: Term | null;
  terms: Record<Term, boolean>;
  /** The first failing term's first reason, or why the gate passes. */
  reason: string;
  /** Every term's reasons, failing or not. */
  reasons: Record<Term, string[]>;
  op: string;
  handoff: HandoffRef | null;
  head: { seq: number; tail: string };
  evidence: EvidenceCheck[];
  /** Pairs of live successful handoffs that disagree (the conflicting-successors case). */
  conflicts: { a: string; b: string; a_execution: string; b_execution: string }[];
  revoked_by: string[];
  reopened_by: string[];
  dependencies: DependencyResult[];
  /** Earlier consume records of this handoff by the consumer (duplicate delivery). */
  consumed_by: string[];
}

type Payload = (HandoffPayload | FinishPayload) & { logical_operation_id: string; execution_id: string };
const payloadOf = (v: VerifiedRecord) => v.record as LedgerRecord & Payload;
const short = (id: string) => `${id.slice(0, 19)}…`;

function ref(v: VerifiedRecord): HandoffRef {
  const p = payloadOf(v);
  return { id: v.id, seq: v.seq, kind: v.record.kind as 'handoff' | 'finish', execution_id: p.execution_id, outcome: p.outcome, agent: v.record.agent, ts: v.record.ts };
}

function age(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)}h`;
  return `${Math.round(ms / 86_400_000)}d`;
}

interface Shared {
  view: CausalView;
  chain: ChainVerdict;
  now: number;
  evidence: EvidenceContext;
  allowOpaque: boolean;
  memo: Map<string, DependencyResult>;
}

/** The per-term lists of a gate result, before any term has added to them. */
export function emptyFindings(): Pick<GateResult, 'evidence' | 'conflicts' | 'revoked_by' | 'reopened_by' | 'dependencies' | 'consumed_by'> {
  return { evidence: [], conflicts: [], revoked_by: [], reopened_by: [], dependencies: [], consumed_by: [] };
}

/** Evaluates the gate for `op` on the view's HEAD. Never throws for what it finds. */
export function evaluateGate(view: CausalView, chain: ChainVerdict, op: string, o: GateOptions): GateResult {
  const shared: Shared = { view, chain, now: o.now, evidence: o.evidence, allowOpaque: o.allowOpaque ?? false, memo: new Map() };
  return evaluateOp(shared, op, o, [op]);
}

function evaluateOp(s: Shared, op: string, o: Pick<GateOptions, 'accept' | 'requireInvariants' | 'maxAgeMs' | 'expectHandoff' | 'consumer'>, stack: string[]): GateResult {
  const { view } = s;
  const reasons: Record<Term, string[]> = { handoff_valid: [], outcome_accepted: [], invariants_satisfied: [], state_current: [], dependencies_true: [] };
  const fail: Record<Term, boolean> = { handoff_valid: false, outcome_accepted: false, invariants_satisfied: false, state_current: false, dependencies_true: false };
  const no = (t: Term, why: string) => {
    fail[t] = true;
    reasons[t].push(why);
  };
  const problemsBefore = view.problems.length;
  const records = view.opRecords(op);
  const terminals = records.filter((r) => isTerminal(r.record));
  const latest = terminals.length ? terminals[terminals.length - 1] : null;

  const result: GateResult = {
    ok: false,
    failed_term: null,
    terms: { handoff_valid: true, outcome_accepted: true, invariants_satisfied: true, state_current: true, dependencies_true: true },
    reason: '',
    reasons,
    op,
    handoff: latest ? ref(latest) : null,
    head: { seq: view.head.seq, tail: view.head.tail },
    ...emptyFindings(),
  };

  // 1. handoff valid: the chain audits clean, the handoff exists, verifies, and is not revoked.
  if (!s.chain.ok) no('handoff_valid', s.chain.reason);
  if (!latest) {
    const started = records.length ? ` (only ${records.length} start/intent record${records.length > 1 ? 's' : ''}: see \`ledger pending\`)` : '';
    no('handoff_valid', `${op} has no handoff${started}`);
    for (const t of TERMS.slice(1)) no(t, 'no handoff to check');
  } else {
    const revocations = view.revocations(latest.id);
    result.revoked_by = revocations.map((r) => r.id);
    for (const r of revocations) {
      no('handoff_valid', `handoff ${short(latest.id)} (seq ${latest.seq}) was revoked by ${short(r.id)} (seq ${r.seq}): ${(r.record as { reason: string }).reason}`);
    }
    if (o.expectHandoff && o.expectHandoff !== latest.id) {
      const known = terminals.find((t) => t.id === o.expectHandoff);
      no('handoff_valid', known
        ? `the handoff named by --handoff (seq ${known.seq}) is superseded: the latest handoff of ${op} is ${short(latest.id)} (seq ${latest.seq}, ${payloadOf(latest).execution_id})`
        : `the handoff named by --handoff (${short(o.expectHandoff)}) is not a handoff of ${op}`);
    }
    if (o.consumer) {
      const mine = view.consumptions(latest.id).filter((c) => (c.record as { consumer: string }).consumer === o.consumer);
      result.consumed_by = mine.map((c) => c.id);
      // Policy: duplicate delivery is reported under handoff_valid: a handoff this consumer has
      // already acted on is spent for it, as a revoked one is for everyone.
      for (const c of mine) no('handoff_valid', `${o.consumer} already consumed handoff ${short(latest.id)} at seq ${c.seq} (${short(c.id)}): duplicate delivery`);
    }
  }

  if (latest) {
    const h = payloadOf(latest);
    // 2. outcome accepted, and no conflicting successors.
    if (!o.accept.includes(h.outcome)) {
      no('outcome_accepted', `the latest outcome of ${op} is ${h.outcome} (${h.execution_id}, seq ${latest.seq}); accepted: ${o.accept.join(', ')}`);
    }
    result.conflicts = conflictingSuccessors(view, terminals);
    for (const c of result.conflicts) {
      no('outcome_accepted', `conflicting successors: ${c.a_execution} (${short(c.a)}) and ${c.b_execution} (${short(c.b)}) left different successful evidence and neither supersedes the other`);
    }
    if (!fail.outcome_accepted) reasons.outcome_accepted.push(`the latest outcome of ${op} is ${h.outcome} (${h.execution_id}, seq ${latest.seq}), accepted`);

    // 3. invariants satisfied.
    const inv = h.invariants as Record<string, Invariant>;
    for (const [name, v] of Object.entries(inv)) if (!v.ok) no('invariants_satisfied', `invariant ${name} is not ok${v.detail ? `: ${v.detail}` : ''}`);
    for (const name of o.requireInvariants) if (!Object.hasOwn(inv, name)) no('invariants_satisfied', `required invariant ${name} is missing from the handoff`);
    if (!fail.invariants_satisfied) {
      const n = Object.keys(inv).length;
      reasons.invariants_satisfied.push(n ? `all ${n} invariant${n > 1 ? 's' : ''} ok${o.requireInvariants.length ? `, required ones present` : ''}` : 'no invariants recorded, none required');
    }

    // 4. state current: evidence recomputed now, not reopened since, not too old.
    for (const [name, ev] of Object.entries(h.evidence as Record<string, Evidence>)) {
      const check = checkEvidence(name, ev, s.evidence, { allowOpaque: s.allowOpaque });
      result.evidence.push(check);
      if (!check.current) no('state_current', `evidence ${name}: ${check.reason}`);
    }
    for (const r of records) {
      if (r.seq > latest.seq && (r.record.kind === 'start' || r.record.kind === 'intent')) {
        result.reopened_by.push(r.id);
        const exec = (r.record as { execution_id: string }).execution_id;
        no('state_current', `${op} was reopened after its handoff: ${r.record.kind} of ${exec} at seq ${r.seq} (${short(r.id)})`);
      }
    }
    const ageMs = s.now - Date.parse(latest.record.ts);
    if (o.maxAgeMs !== null && ageMs > o.maxAgeMs) no('state_current', `the handoff is ${age(ageMs)} old (written ${latest.record.ts}); --max-age is ${age(o.maxAgeMs)}`);
    if (!fail.state_current) {
      const n = result.evidence.length;
      reasons.state_current.push(`${n ? `${n} evidence digest${n > 1 ? 's' : ''} match${n > 1 ? '' : 'es'} now` : 'no evidence recorded (nothing to re-check)'}; not reopened since seq ${latest.seq}${o.maxAgeMs !== null ? `; ${age(Math.max(0, ageMs))} old, within --max-age` : ''}`);
    }

    // 5. dependency conditions, recursively.
    for (const dep of h.depends_on as Dependency[]) {
      const d = dependency(s, dep, stack);
      result.dependencies.push(d);
      if (!d.ok) no('dependencies_true', `${dep.logical_operation_id}:${dep.outcome} does not hold: ${d.reason}`);
    }
    if (!fail.dependencies_true) {
      const n = result.dependencies.length;
      reasons.dependencies_true.push(n > 1 ? `all ${n} dependencies hold` : n === 1 ? 'its one dependency holds' : 'no dependencies');
    }
  }

  // A record of this operation that failed verification: what it said is unknown, so hold.
  for (const p of view.problems.slice(problemsBefore)) no('handoff_valid', p.message);
  if (!fail.handoff_valid) {
    reasons.handoff_valid.push(`${s.chain.reason}; handoff ${short(latest!.id)} (seq ${latest!.seq}, ${payloadOf(latest!).execution_id}) verifies and is not revoked`);
  }

  for (const t of TERMS) result.terms[t] = !fail[t];
  result.failed_term = TERMS.find((t) => fail[t]) ?? null;
  result.ok = result.failed_term === null;
  result.reason = result.ok
    ? `all five terms hold for ${op}: handoff ${short(latest!.id)} (seq ${latest!.seq}, ${payloadOf(latest!).execution_id}, ${payloadOf(latest!).outcome})`
    : `${result.failed_term}: ${reasons[result.failed_term!][0]}`;
  return result;
}

/**
 * Live successful handoffs that disagree. A success is live when no later terminal record of the
 * operation supersedes it and it is not revoked. Two live successes with different evidence are
 * conflicting successor states, whichever executions wrote them (SPEC 9, term 2).
 */
function conflictingSuccessors(view: CausalView, terminals: VerifiedRecord[]): GateResult['conflicts'] {
  const superseded = new Set<string>();
  terminals.forEach((t, i) => {
    for (const id of payloadOf(t).supersedes ?? []) {
      // Only an earlier terminal record of the same operation can be superseded.
      if (terminals.slice(0, i).some((e) => e.id === id)) superseded.add(id);
    }
  });
  const live = terminals.filter((t) => payloadOf(t).outcome === 'success' && !superseded.has(t.id) && view.revocations(t.id).length === 0);
  const out: GateResult['conflicts'] = [];
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
function dependency(s: Shared, dep: Dependency, stack: string[]): DependencyResult {
  const base = { logical_operation_id: dep.logical_operation_id, outcome: dep.outcome };
  if (stack.includes(dep.logical_operation_id)) {
    const cycle = [...stack.slice(stack.indexOf(dep.logical_operation_id)), dep.logical_operation_id].join(' -> ');
    return { ...base, ok: false, failed_term: 'dependencies_true', reason: `dependency cycle: ${cycle}` };
  }
  if (stack.length > MAX_DEPENDENCY_DEPTH) {
    return { ...base, ok: false, failed_term: 'dependencies_true', reason: `dependencies nest deeper than ${MAX_DEPENDENCY_DEPTH} (${stack.join(' -> ')} -> ...)` };
  }
  const key = `${dep.logical_operation_id}\0${dep.outcome}`;
  const hit = s.memo.get(key);
  if (hit) return hit;
  // Policy: a dependency is held to every term except the consumer's --max-age and required
  // invariants, which speak about the handoff the consumer acts on, not about what it builds on.
  const r = evaluateOp(s, dep.logical_operation_id, { accept: [dep.outcome], requireInvariants: [], maxAgeMs: null }, [...stack, dep.logical_operation_id]);
  const out: DependencyResult = { ...base, ok: r.ok, failed_term: r.failed_term, reason: r.ok ? 'holds' : r.reason };
  s.memo.set(key, out);
  return out;
}

/** The text form: a verdict line, then every term with its reasons. */
export function formatGateText(r: GateResult): string[] {
  const lines = [`${r.ok ? 'proceed' : 'hold'}: ${r.op}: ${r.reason}`];
  for (const t of TERMS) {
    const [first, ...rest] = r.reasons[t];
    lines.push(`  ${r.terms[t] ? 'ok  ' : 'FAIL'} ${t}: ${first ?? ''}`);
    for (const more of rest) lines.push(`       ${' '.repeat(t.length)}  ${more}`);
  }
  return lines;
}
