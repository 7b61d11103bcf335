// Term 5, dependency conditions true (SPEC 9): every depends_on of the handoff holds now,
// recursively. Each dependency was decided by the whole gate on its own operation when the inputs
// were collected (inputs.ts: cycles and depth are caught there), so this term reads the answers.
import type { GateInputs, TermVerdict } from './types.js';

export function dependenciesTrue(i: GateInputs): TermVerdict {
  const h = i.latest;
  if (h === null) return { ok: false, reasons: ['no handoff to check'] };
  const no: string[] = [];
  for (const d of h.dependencies) if (d.ok !== true) no.push(`${d.logical_operation_id}:${d.outcome} does not hold: ${d.reason}`);
  if (no.length) return { ok: false, reasons: no };
  const n = h.dependencies.length;
  return { ok: true, reasons: [n > 1 ? `all ${n} dependencies hold` : n === 1 ? 'its one dependency holds' : 'no dependencies'] };
}
