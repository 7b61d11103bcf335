// Term 1, handoff valid (SPEC 9): the chain audits clean through HEAD, the operation has a
// latest handoff, it verifies and is not revoked; and it is the one the consumer means to act on,
// not yet acted on by that consumer.
import { short } from './format.js';
import type { GateInputs, TermVerdict } from './types.js';

export function handoffValid(i: GateInputs): TermVerdict {
  const no: string[] = [];
  if (i.chain.ok !== true) no.push(i.chain.reason);
  const h = i.latest;
  if (h === null) {
    const started = i.opRecords ? ` (only ${i.opRecords} start/intent record${i.opRecords > 1 ? 's' : ''}: see \`ledger pending\`)` : '';
    no.push(`${i.op} has no handoff${started}`);
  } else {
    const { id, seq, execution_id } = h.ref;
    for (const r of h.revocations) no.push(`handoff ${short(id)} (seq ${seq}) was revoked by ${short(r.id)} (seq ${r.seq}): ${r.reason}`);
    if (h.named !== null && h.named.id !== id) {
      no.push(h.named.seq !== null
        ? `the handoff named by --handoff (seq ${h.named.seq}) is superseded: the latest handoff of ${i.op} is ${short(id)} (seq ${seq}, ${execution_id})`
        : `the handoff named by --handoff (${short(h.named.id)}) is not a handoff of ${i.op}`);
    }
    // Policy: duplicate delivery is reported under handoff_valid: a handoff this consumer has
    // already acted on is spent for it, as a revoked one is for everyone.
    for (const c of h.consumptions) no.push(`${i.options.consumer} already consumed handoff ${short(id)} at seq ${c.seq} (${short(c.id)}): duplicate delivery`);
    // Policy (SPEC 9, exactly once per operation): a later success with the same evidence
    // digests as the handoff this consumer last consumed is a re-drive of the same state, not a
    // new operation; only different evidence (or a reported failure of the consumer's action)
    // makes it consumable again.
    for (const r of h.redrives) {
      if (r.handoff_seq < 0) {
        no.push(`${i.options.consumer} already consumed ${i.op} at seq ${r.seq} (${short(r.consume)}), of a handoff ${short(r.handoff)} that is not in the ledger: handoff ${short(id)} cannot be shown new to it`);
        continue;
      }
      no.push(`${i.options.consumer} already consumed ${i.op} at seq ${r.seq} (${short(r.consume)}, handoff seq ${r.handoff_seq}); handoff ${short(id)} (seq ${seq}, ${execution_id}) is a re-drive with the same evidence: exactly once per operation`);
    }
    // Policy (SPEC 9): while a work item's lease is live, only its owner's finish is terminal.
    for (const l of h.leaseHolds) {
      no.push(`${i.op} is a work item owned by ${l.owner} (execution ${l.execution_id}) with a live lease until ${l.lease_until}: a ${h.ref.kind} by ${l.agent} is not terminal while it lasts`);
    }
  }
  // A record this decision relies on failed verification: what it said is unknown, so hold.
  for (const p of i.problems) no.push(p); // not push(...): one per record relied on, unbounded
  if (no.length || h === null) return { ok: false, reasons: no };
  return { ok: true, reasons: [`${i.chain.reason}; handoff ${short(h.ref.id)} (seq ${h.ref.seq}, ${h.ref.execution_id}) verifies and is not revoked`] };
}
