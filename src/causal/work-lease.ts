// SPEC 9: "While a work item's lease is live, only its owner's finish is terminal: a handoff of
// that operation by another agent does not let a gate proceed." Pure: the item is folded from its
// records by the workflow's own fold (handoff/workitems.ts, so a later kind such as a release or
// a takeover is judged as the workflow judges it), and its lease judged at the command's `now`.
import { leaseLive } from '../handoff/lease.js';
import { foldWorkLog } from '../handoff/workitems.js';
import type { VerifiedRecord } from './verified.js';

export interface LeaseHold {
  owner: string;
  execution_id: string;
  lease_until: string;
  /** The agent whose record is not terminal while the lease lasts. */
  agent: string;
}

/**
 * The live lease against which `agent`'s terminal record of `op` (a handoff, or a finish not from
 * the owning execution) does not count, or null. `records` are the work item's records at HEAD
 * (CausalView.workRecords), oldest first: the lease is the one in force now, renewals included (a
 * finish of the owning execution closes the item, so the fold then finds nothing open).
 * `terminalSeq` is the record's seq when it is in the ledger (the gate), none for a new append.
 */
export function leaseHold(records: readonly VerifiedRecord[], op: string, agent: string, now: Date, terminalSeq = Infinity): LeaseHold | null {
  const item = foldWorkLog(records).items.get(op);
  if (!item || item.status !== 'open' || item.lease_until === null || !leaseLive(item.lease_until, now)) return null;
  // A lease taken after the record judged reopened the operation (the gate's state_current), it
  // did not make that record a non-owner's.
  const taken = item.entries.findLast((e) => e.record.kind === 'start' && e.record.execution_id === item.execution_id);
  if (taken && taken.seq > terminalSeq) return null;
  // Policy: the owner's own handoff of its item is its word, as its finish would be.
  if (item.owner === agent) return null;
  return { owner: item.owner, execution_id: item.execution_id, lease_until: item.lease_until, agent };
}
