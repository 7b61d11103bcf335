// SPEC 9: "While a work item's lease is live, only its owner's finish is terminal: a handoff of
// that operation by another agent does not let a gate proceed." Pure. The work item itself is
// folded by the handoff log's own rules (handoff/workitems.ts, with its lease boundary,
// handoff/lease.ts), which sit above this layer: the Ledger (src/ledger.ts) hands that fold in
// as a WorkItemFold, so a later kind (a release, a takeover) is judged as the workflow judges it.
import type { VerifiedRecord } from './verified.js';

/** What the lease rule needs of a work item at HEAD, its lease judged at `now`. */
export interface WorkItemState {
  open: boolean;
  /** null while released (open, unowned, no lease). */
  owner: string | null;
  execution_id: string;
  lease_until: string | null;
  /** The lease is live at `now` (the workflow's one boundary). */
  live: boolean;
  /** The seq of the start that opened the owning execution. */
  start_seq: number;
}

/** The handoff log's fold of one work item's records (oldest first), or null when there is none. */
export type WorkItemFold = (records: readonly VerifiedRecord[], op: string, now: Date) => WorkItemState | null;

export interface LeaseHold {
  owner: string;
  execution_id: string;
  lease_until: string;
  /** The agent whose record is not terminal while the lease lasts. */
  agent: string;
}

/**
 * The live lease against which `agent`'s terminal record of the item (a handoff, or a finish not
 * from the owning execution) does not count, or null. `state` is the item at HEAD, renewals
 * included (a finish of the owning execution closed it). `terminalSeq` is the record's seq when
 * it is in the ledger (the gate); none for a new append.
 */
export function leaseHold(state: WorkItemState | null, agent: string, terminalSeq = Infinity): LeaseHold | null {
  if (!state || !state.open || state.owner === null || state.lease_until === null || !state.live) return null;
  // A lease taken after the record judged reopened the operation (the gate's state_current);
  // it did not make that record a non-owner's.
  if (state.start_seq > terminalSeq) return null;
  // Policy: the owner's own handoff of its item is its word, as its finish would be.
  if (state.owner === agent) return null;
  return { owner: state.owner, execution_id: state.execution_id, lease_until: state.lease_until, agent };
}
