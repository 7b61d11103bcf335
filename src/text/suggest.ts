// "Did you mean ...?" for a misspelt verb, flag, slug or operation id (issues 14.9 and 26.4). Pure:
// the distance is the fastest-levenshtein package's, not code of ours, and each caller imports it
// (`levenshtein()` below, on the error path, and for a `start` of a slug the ledger does not hold
// yet), so a command that is typed right never loads it (test/cli/help.test.ts).

export type Distance = (a: string, b: string) => number;

/**
 * The candidates closest to `word`, best first (at most three), or none when nothing is close.
 * Policy: close means a Levenshtein distance of 1 for a word of up to 3 letters, else of at most
 * a third of its length but at least 2 (a swap of two letters, the commonest slip, costs 2:
 * `gaet`, `--jsno`) and at most 3; or `word` being the start of exactly one candidate (`ledger
 * checkp`). Further than that a suggestion is more likely wrong than helpful.
 */
export function closest(distance: Distance, word: string, candidates: readonly string[]): string[] {
  const starts = candidates.filter((c) => word.length >= 2 && c.startsWith(word));
  if (starts.length === 1) return starts;
  const limit = word.length <= 3 ? 1 : Math.min(3, Math.max(2, Math.floor(word.length / 3)));
  return candidates
    .map((c) => ({ c, d: distance(word, c) }))
    .filter((x) => x.d <= limit && x.c !== word)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, 3)
    .map((x) => x.c);
}

/**
 * For `start` of a new slug (issue 26.4): a synchronous test, run under the writer lock, of the
 * open items' slugs that `slug` is a typo of, nearest first (at most three). Loaded before the
 * lock is taken.
 *
 * Policy: stricter than a suggestion, since it refuses work: a typo is one edit (a letter left
 * out, added or changed) or two neighbouring letters swapped (`fix-zt`), and for a slug of 9
 * characters or more any two edits. Not a typo: two slugs that differ only in their digits
 * (`task-17` beside `task-18`, `v2-api` beside `v3-api`, `wi2` beside `wi`), or in one word that
 * is a letter in both (`fix-a` beside `fix-b`), since numbered and lettered siblings are how
 * people name a series, and refusing each would teach agents to pass the override by habit; nor
 * a slug that extends another by a word (`fix-tz` and `fix-tz-ui`, `fix` and `fix-tz`): a part of
 * a piece of work is named so. A slug of 3 characters or fewer is never refused: too short to
 * tell a typo from a name.
 */
export function typoOf(distance: Distance): (slug: string, open: readonly string[]) => string[] {
  const digitless = (s: string) => s.replace(/[0-9]+/g, '');
  const extends_ = (long: string, short: string) => long.startsWith(short) && /^[-_.]/.test(long.slice(short.length));
  const swapped = (a: string, b: string) => {
    if (a.length !== b.length) return false;
    const at = [...a].findIndex((ch, i) => ch !== b[i]);
    return at >= 0 && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2);
  };
  // `fix-a` beside `fix-b`: one word differs, and that word is a letter or a number in both.
  const label = (w: string) => w.length <= 1 || /^[0-9]+$/.test(w);
  const siblings = (a: string, b: string) => {
    const wa = a.split(/[-_.]/);
    const wb = b.split(/[-_.]/);
    if (wa.length !== wb.length) return false;
    const diff = wa.map((w, i) => [w, wb[i]] as const).filter(([x, y]) => x !== y);
    return diff.length === 1 && label(diff[0][0]) && label(diff[0][1]);
  };
  return (slug, open) =>
    [...slug].length <= 3
      ? []
      : open
      .filter((c) => c !== slug && digitless(c) !== digitless(slug) && !siblings(c, slug) && !extends_(c, slug) && !extends_(slug, c))
      .map((c) => ({ c, d: swapped(slug, c) ? 1 : distance(slug, c) }))
      .filter((x) => x.d === 1 || (x.d === 2 && slug.length >= 9))
      .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
      .slice(0, 3)
      .map((x) => x.c);
}

export type DidYouMean = (found: readonly string[], show: (s: string) => string) => string | null;

/** "did you mean `gate`?" or "did you mean `gate` or `log`?", or null. */
export const didYouMean: DidYouMean = (found, show) => {
  if (found.length === 0) return null;
  const named = found.map((f) => `\`${show(f)}\``);
  return `did you mean ${named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} or ${named[named.length - 1]}`}?`;
};
