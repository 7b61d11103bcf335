// The consumer rule (SPEC 9, the essay's "handoff valid ∧ producer outcome accepted ∧ invariants
// satisfied ∧ state current ∧ dependency conditions true"), read as audit/index.ts reads: the
// list of terms below, in SPEC 9's order, one function each, over inputs collected first
// (inputs.ts, the only part that reads the ledger or the project). Every term is evaluated, even
// after one fails, so the answer lists everything that stands in the way.
//
// Receipt is not permission: a term that cannot be shown true is false, with the reason.
import { dependenciesTrue } from './dependencies-true.js';
import { short } from './format.js';
import { handoffValid } from './handoff-valid.js';
import { invariantsSatisfied } from './invariants-satisfied.js';
import { outcomeAccepted } from './outcome-accepted.js';
import { stateCurrent } from './state-current.js';
import type { GateInputs, GateResult, Term, TermVerdict } from './types.js';

export { formatGateText } from './format.js';
export type { ChainVerdict, Conflict, DependencyResult, GateInputs, GateOptions, GateResult, HandoffFacts, HandoffRef, Term, TermVerdict } from './types.js';

export interface GateTerm {
  name: Term;
  check: (inputs: GateInputs) => TermVerdict;
}

/** SPEC 9, in order: `failed_term` is the first of these that is false. */
export const TERMS: readonly GateTerm[] = [
  { name: 'handoff_valid', check: handoffValid },
  { name: 'outcome_accepted', check: outcomeAccepted },
  { name: 'invariants_satisfied', check: invariantsSatisfied },
  { name: 'state_current', check: stateCurrent },
  { name: 'dependencies_true', check: dependenciesTrue },
];

/**
 * One term on the inputs, as the gate runs it. Policy: fail closed. A term that throws (an input
 * missing or malformed, so it cannot be shown true) is false, with that as its reason; so is one
 * that answers true without saying why.
 */
export function judgeTerm(term: GateTerm, inputs: GateInputs): TermVerdict {
  try {
    const v = term.check(inputs);
    if ((v.ok === true || v.ok === false) && v.reasons.length > 0) return v;
    return { ok: false, reasons: [`${term.name} gave no verdict with a reason`] };
  } catch (e) {
    return { ok: false, reasons: [`${term.name} could not be evaluated: ${(e as Error)?.message ?? String(e)}`] };
  }
}

/** The per-term lists of a gate result, before any term has added to them. */
export function emptyFindings(): Pick<GateResult, 'evidence' | 'conflicts' | 'revoked_by' | 'reopened_by' | 'dependencies' | 'consumed_by'> {
  return { evidence: [], conflicts: [], revoked_by: [], reopened_by: [], dependencies: [], consumed_by: [] };
}

/** Evaluates every term on the inputs. Pure: no I/O, never throws for what it finds. */
export function evaluateGate(inputs: GateInputs): GateResult {
  const verdicts = TERMS.map((t) => [t.name, judgeTerm(t, inputs)] as const);
  const terms = Object.fromEntries(verdicts.map(([name, v]) => [name, v.ok])) as Record<Term, boolean>;
  const reasons = Object.fromEntries(verdicts.map(([name, v]) => [name, v.reasons])) as Record<Term, string[]>;
  const failed = verdicts.find(([, v]) => !v.ok)?.[0] ?? null;
  const h = inputs.latest;
  return {
    ok: failed === null,
    failed_term: failed,
    terms,
    reason: failed === null
      ? `all five terms hold for ${inputs.op}: handoff ${short(h!.ref.id)} (seq ${h!.ref.seq}, ${h!.ref.execution_id}, ${h!.ref.outcome})`
      : `${failed}: ${reasons[failed][0]}`,
    reasons,
    op: inputs.op,
    handoff: h?.ref ?? null,
    head: { seq: inputs.head.seq, tail: inputs.head.tail },
    ...emptyFindings(),
    ...(h && {
      evidence: listOf(h.evidence),
      conflicts: listOf(h.conflicts),
      revoked_by: listOf(h.revocations).map((r) => r.id),
      reopened_by: listOf(h.reopenings).map((r) => r.id),
      dependencies: listOf(h.dependencies),
      consumed_by: [...listOf(h.consumptions).map((c) => c.id), ...listOf(h.redrives).map((r) => r.consume)],
    }),
  };
}

/** A collected list, or none: a list that is missing fails its term (judgeTerm) and lists nothing here. */
const listOf = <T>(xs: T[] | undefined): T[] => (Array.isArray(xs) ? xs : []);
