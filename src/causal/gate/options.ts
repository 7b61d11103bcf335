// The gate's inputs as a caller gives them, checked once for the CLI and the library alike
// (Ledger.gate checks a JavaScript caller's options; `ledger gate` checks its flags with the same
// functions before it reads anything). Pure: bad input throws a coded USAGE error.
import { LedgerError } from '../../errors.js';
import { ID_RE, NAME_RE, OUTCOMES, type Outcome } from '../../record.js';

/** The operation a gate decides on: a logical_operation_id. */
export function checkOp(op: unknown): string {
  if (typeof op !== 'string' || !ID_RE.test(op)) throw new LedgerError('USAGE', `OP must be a logical_operation_id, 1-128 chars of [A-Za-z0-9._:-], got "${String(op)}"`);
  return op;
}

/** The consumer a consume record names (`--consume-as`). */
export function checkConsumer(consumer: unknown): string {
  if (typeof consumer !== 'string' || !ID_RE.test(consumer)) throw new LedgerError('USAGE', `--consume-as must be 1-128 chars of [A-Za-z0-9._:-], got "${String(consumer)}"`);
  return consumer;
}

/** The invariants the consumer requires (`--require-invariant`), each an invariant name. */
export function checkRequiredInvariants(names: readonly unknown[]): string[] {
  for (const n of names) if (typeof n !== 'string' || !NAME_RE.test(n)) throw new LedgerError('USAGE', `--require-invariant must be 1-64 chars of [A-Za-z0-9._-], got "${String(n)}"`);
  return names as string[];
}

/**
 * The rest of a gate's options. Checked so, a JavaScript caller's typo is refused rather than
 * read as a gate that holds.
 */
export function checkGateOptions(o: { accept: readonly Outcome[]; requireInvariants: readonly string[]; maxAgeMs: number | null; now: number }): void {
  for (const a of o.accept) if (!(OUTCOMES as readonly string[]).includes(a)) throw new LedgerError('USAGE', `accept takes outcomes from ${OUTCOMES.join(', ')}; got "${String(a)}"`);
  checkRequiredInvariants(o.requireInvariants);
  if (o.maxAgeMs !== null && !(Number.isSafeInteger(o.maxAgeMs) && o.maxAgeMs > 0)) throw new LedgerError('USAGE', `--max-age must be more than 0 ms, got ${String(o.maxAgeMs)}`);
  if (!Number.isFinite(o.now)) throw new LedgerError('USAGE', `"now" expected a time in ms, got ${String(o.now)}`);
}
