// The data of a gate decision (SPEC 9): what the options ask, what was collected from the ledger
// and the project before any term ran (GateInputs), and what the gate answers (GateResult).
// Plain data only: a term reads a GateInputs and nothing else, so a test can build one in code.
import type { Invariant, Outcome } from '../../record.js';
import type { EvidenceCheck, EvidenceContext } from '../evidence.js';
import type { WorkItemFold } from '../work-lease.js';

/** SPEC 9's five terms; their order is the order of TERMS (index.ts). */
export type Term = 'handoff_valid' | 'outcome_accepted' | 'invariants_satisfied' | 'state_current' | 'dependencies_true';

/** One term's answer: false with every reason that stands in the way, or true with why it holds. */
export interface TermVerdict {
  ok: boolean;
  reasons: string[];
}

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
  /** The handoff log's fold of a work item, for SPEC 9's lease rule (the Ledger gives it). */
  workItem?: WorkItemFold;
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

/** Two live successful handoffs that disagree (the conflicting-successors case of term 2). */
export interface Conflict {
  a: string;
  b: string;
  a_execution: string;
  b_execution: string;
}

/** What the terms read about the operation's latest handoff (or finish), collected first. */
export interface HandoffFacts {
  ref: HandoffRef;
  invariants: Record<string, Invariant>;
  /** The revoke records that name it, oldest first. */
  revocations: { id: string; seq: number; reason: string }[];
  /** The record --handoff named, with its seq when it is a terminal record of the operation; null without --handoff. */
  named: { id: string; seq: number | null } | null;
  /** The consumer's earlier consume records of it, not reported failed (duplicate delivery); empty without a consumer. */
  consumptions: { id: string; seq: number }[];
  /**
   * The consumer's latest live consumption of the operation when this handoff is a re-drive of
   * the handoff it consumed (same evidence digests; SPEC 9: exactly once per operation); empty
   * without a consumer or when this handoff is new to it.
   */
  redrives: { consume: string; seq: number; handoff: string; handoff_seq: number }[];
  /**
   * The operation is a work item whose lease is live at `now`, held by another agent than the
   * one that wrote this handoff (SPEC 9: only the owner's finish is terminal); else empty.
   */
  leaseHolds: { owner: string; execution_id: string; lease_until: string; agent: string }[];
  conflicts: Conflict[];
  /** Every evidence digest of the handoff, recomputed now, in the handoff's order. */
  evidence: EvidenceCheck[];
  /** start and intent records of the operation after it. */
  reopenings: { id: string; seq: number; kind: 'start' | 'intent'; execution_id: string }[];
  /** Each depends_on, decided by the whole gate on its operation (or a cycle, or too deep). */
  dependencies: DependencyResult[];
}

/** Everything one decision reads, collected from a CausalView and the project (inputs.ts). */
export interface GateInputs {
  op: string;
  head: { seq: number; tail: string };
  chain: ChainVerdict;
  /** The one reference time (ms since the epoch). */
  now: number;
  options: {
    accept: readonly Outcome[];
    requireInvariants: readonly string[];
    maxAgeMs: number | null;
    consumer: string | null;
  };
  /** How many start, intent, handoff and finish records the operation has. */
  opRecords: number;
  /** The latest terminal record's facts; null when the operation has none. */
  latest: HandoffFacts | null;
  /** Records this decision looked up that failed verification (their messages): what they said is unknown. */
  problems: string[];
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
  conflicts: Conflict[];
  revoked_by: string[];
  reopened_by: string[];
  dependencies: DependencyResult[];
  /** Earlier consume records of this handoff by the consumer (duplicate delivery), or of the handoff it re-drives. */
  consumed_by: string[];
}
