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
  }
  // A record this decision relies on failed verification: what it said is unknown, so hold.
  for (const p of i.problems) no.push(p); // not push(...): one per record relied on, unbounded
  if (no.length || h === null) return { ok: false, reasons: no };
  return { ok: true, reasons: [`${i.chain.reason}; handoff ${short(h.ref.id)} (seq ${h.ref.seq}, ${h.ref.execution_id}) verifies and is not revoked`] };
}
