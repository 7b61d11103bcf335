// "Did you mean ...?" for the names a ledger holds: work-item slugs and operation ids (issue 26,
// item 4). Loaded only on the error or hold path, as ../suggest.ts is.
//
// Policy: when a name given is a typo away from one the ledger holds, the answer is that name,
// never an offer to start a new item by the mistyped one (an agent that obeys would open a
// second item beside the real one). With nothing close, the thrower's own hint stands.
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';

/** "did you mean `x`?" for `name` among the ledger's operation ids (or its slugs), or null. */
export async function nameSuggestion(name: string, dir: string, among: 'slugs' | 'ops' = 'ops'): Promise<string | null> {
  try {
    return await Ledger.open({ dir }).nameSuggestion(name, among);
  } catch {
    return null; // no ledger: no suggestion
  }
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
  const guess = await nameSuggestion(e.data.slug, where, 'slugs');
  if (!guess) return e;
  const out = new LedgerError(e.code, e.message, { ...e.data, suggestion: guess }, `${guess} \`ledger status\` lists the open items`);
  return out;
}
