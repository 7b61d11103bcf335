// Exactly once per operation (SPEC 9) and a consumer's report that its action failed (issue 14,
// item 13): which of one consumer's consume records of an operation still spend what they
// consumed. Pure: records in (verified, oldest first), answers out; the gate (gate/inputs.ts)
// and `ledger consume-failed` (consume-failed.ts) decide with it.
import { canonicalJson } from '../canonical.js';
import type { Evidence, LedgerRecord } from '../record.js';
import type { VerifiedRecord } from './verified.js';

export interface Consumption {
  id: string;
  seq: number;
  /** The handoff it acted on. */
  handoff: string;
  agent: string;
  /** The consume_failed record that reported its action failed, or null while it stands. */
  failed: { id: string; seq: number; reason: string } | null;
}

type ConsumeRec = LedgerRecord<'consume'>;
type FailedRec = LedgerRecord<'consume_failed'>;

/**
 * One consumer's consumptions of an operation, oldest first, each with the report that its
 * action failed, if any. Policy: a failure report counts only when it comes from the agent that
 * wrote the consume record and names that record's handoff (the consume-failed verb writes no
 * other; one written around it by the formats alone reopens nothing).
 */
export function consumptionsOf(records: readonly VerifiedRecord[]): Consumption[] {
  const out: Consumption[] = [];
  const byId = new Map<string, Consumption>();
  for (const v of records) {
    if (v.record.kind === 'consume') {
      const r = v.record as ConsumeRec;
      const c: Consumption = { id: v.id, seq: v.seq, handoff: r.handoff, agent: r.agent, failed: null };
      out.push(c);
      byId.set(v.id, c);
    } else if (v.record.kind === 'consume_failed') {
      const r = v.record as FailedRec;
      const c = byId.get(r.consume);
      if (c && failureCounts(c, r)) c.failed = { id: v.id, seq: v.seq, reason: r.reason };
    }
  }
  return out;
}

/**
 * Whether a consume_failed record (`report`) counts against the consumption it names (the Policy
 * above): none counted yet, and the report is from the agent that consumed, of the handoff it
 * consumed. HANDOFF.md tells the same story by the same rule (../handoff/operations.ts).
 */
export function failureCounts(c: { agent: string; handoff: string; failed: unknown }, report: { agent: string; handoff: string }): boolean {
  return c.failed === null && c.agent === report.agent && c.handoff === report.handoff;
}

/** The consumptions that still stand (no failure reported), oldest first. */
export const standing = (cs: readonly Consumption[]) => cs.filter((c) => c.failed === null);

/**
 * The state a handoff hands over, as exactly-once compares it: each evidence name with its
 * digest. Sources, notes, invariant details, executions and `supersedes` lists are left out.
 */
export function stateOf(record: LedgerRecord): string {
  const ev = ((record as { evidence?: Record<string, Evidence> }).evidence ?? {}) as Record<string, Evidence>;
  return canonicalJson(Object.fromEntries(Object.entries(ev).map(([name, e]) => [name, e.digest])));
}
