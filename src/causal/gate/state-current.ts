// Term 4, state current (SPEC 9): every evidence digest still matches the thing it names
// (recomputed when the inputs were collected), no later start or intent reopened the operation,
// and the handoff is not older than the consumer's --max-age.
import { age, short } from './format.js';
import type { GateInputs, TermVerdict } from './types.js';

export function stateCurrent(i: GateInputs): TermVerdict {
  const h = i.latest;
  if (h === null) return { ok: false, reasons: ['no handoff to check'] };
  const { maxAgeMs } = i.options;
  const no: string[] = [];
  for (const check of h.evidence) if (check.current !== true) no.push(`evidence ${check.name}: ${check.reason}`);
  for (const r of h.reopenings) no.push(`${i.op} was reopened after its handoff: ${r.kind} of ${r.execution_id} at seq ${r.seq} (${short(r.id)})`);
  const ageMs = i.now - Date.parse(h.ref.ts);
  if (maxAgeMs !== null) {
    // Policy: fail closed. A limit that is not a duration, or an age that cannot be computed
    // (no reference time, an unreadable ts), cannot show the handoff young enough.
    if (!(Number.isFinite(maxAgeMs) && maxAgeMs >= 0)) no.push(`--max-age ${String(maxAgeMs)} is not a duration`);
    else if (!Number.isFinite(ageMs)) no.push(`the age of the handoff (written ${h.ref.ts}) cannot be computed at ${String(i.now)}`);
    else if (ageMs > maxAgeMs) no.push(`the handoff is ${age(ageMs)} old (written ${h.ref.ts}); --max-age is ${age(maxAgeMs)}`);
  }
  if (no.length) return { ok: false, reasons: no };
  const n = h.evidence.length;
  const digests = n ? `${n} evidence digest${n > 1 ? 's' : ''} match${n > 1 ? '' : 'es'} now` : 'no evidence recorded (nothing to re-check)';
  return { ok: true, reasons: [`${digests}; not reopened since seq ${h.ref.seq}${maxAgeMs !== null ? `; ${age(Math.max(0, ageMs))} old, within --max-age` : ''}`] };
}
