// Term 3, invariants satisfied (SPEC 9): every invariant on the handoff is ok, and each one the
// consumer requires is present.
import type { GateInputs, TermVerdict } from './types.js';

export function invariantsSatisfied(i: GateInputs): TermVerdict {
  const h = i.latest;
  if (h === null) return { ok: false, reasons: ['no handoff to check'] };
  const required = i.options.requireInvariants;
  const no: string[] = [];
  for (const [name, v] of Object.entries(h.invariants)) if (v.ok !== true) no.push(`invariant ${name} is not ok${v.detail ? `: ${v.detail}` : ''}`);
  for (const name of required) if (!Object.hasOwn(h.invariants, name)) no.push(`required invariant ${name} is missing from the handoff`);
  if (no.length) return { ok: false, reasons: no };
  const n = Object.keys(h.invariants).length;
  return { ok: true, reasons: [n ? `all ${n} invariant${n > 1 ? 's' : ''} ok${required.length ? `, required ones present` : ''}` : 'no invariants recorded, none required'] };
}
