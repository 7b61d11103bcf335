// Term 2, outcome accepted (SPEC 9): the latest terminal outcome of the operation, over all its
// executions, is one the consumer accepts, and no two executions left conflicting successful
// states (the conflicts are found when the inputs are collected: inputs.ts).
import { short } from './format.js';
import type { GateInputs, TermVerdict } from './types.js';

export function outcomeAccepted(i: GateInputs): TermVerdict {
  const h = i.latest;
  if (h === null) return { ok: false, reasons: ['no handoff to check'] };
  const { outcome, execution_id, seq } = h.ref;
  const no: string[] = [];
  if (!i.options.accept.includes(outcome)) no.push(`the latest outcome of ${i.op} is ${outcome} (${execution_id}, seq ${seq}); accepted: ${i.options.accept.join(', ')}`);
  for (const c of h.conflicts) {
    no.push(`conflicting successors: ${c.a_execution} (${short(c.a)}) and ${c.b_execution} (${short(c.b)}) left different successful evidence and neither supersedes the other`);
  }
  if (no.length) return { ok: false, reasons: no };
  return { ok: true, reasons: [`the latest outcome of ${i.op} is ${outcome} (${execution_id}, seq ${seq}), accepted`] };
}
