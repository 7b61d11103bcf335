// "Did you mean ...?" for the names a ledger holds: work-item slugs and operation ids (issue 26,
// item 4). Loaded only on the error or hold path, as ../suggest.ts is.
//
// Policy: when a name given is a typo away from one the ledger holds, the answer is that name,
// never an offer to start a new item by the mistyped one (an agent that obeys would open a
// second item beside the real one). With nothing close, the thrower's own hint stands.
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import { closest, didYouMean } from '../../text/suggest.js';

/** The operation ids (= work-item slugs) of every published record of the ledger at `dir`. */
export function knownOps(dir: string): string[] {
  const out = new Set<string>();
  try {
    for (const { record } of Ledger.open({ dir }).records()) {
      const op = (record as { logical_operation_id?: unknown }).logical_operation_id;
      if (typeof op === 'string') out.add(op);
    }
  } catch {
    /* no ledger, or unreadable: no suggestion */
  }
  return [...out];
}

/** The work items' slugs, from the work-log fold (memoized: cheap on a long ledger). */
export function knownSlugs(dir: string): string[] {
  try {
    return [...Ledger.open({ dir }).folds().log.items.keys()];
  } catch {
    return [];
  }
}

/** "did you mean `x`?" for `name` among `known` (default: the ledger's operation ids), or null. */
export async function nameSuggestion(name: string, dir: string, known: string[] = knownOps(dir)): Promise<string | null> {
  if (known.includes(name)) return null; // it exists: its own refusal says what is wrong
  return didYouMean(await closest(name, known), (n) => n);
}

/** A "no work item SLUG" refusal with the nearest slugs the ledger holds in its hint, when one is close. */
export async function withSlugSuggestion(e: unknown, dir: () => string): Promise<unknown> {
  if (!(e instanceof LedgerError) || e.code !== 'INPUT_NOT_FOUND' || typeof e.data.slug !== 'string') return e;
  let where: string;
  try {
    where = dir();
  } catch {
    return e;
  }
  const guess = await nameSuggestion(e.data.slug, where, knownSlugs(where));
  if (!guess) return e;
  const out = new LedgerError(e.code, e.message, { ...e.data, suggestion: guess }, `${guess} \`ledger status\` lists the open items`);
  return out;
}
