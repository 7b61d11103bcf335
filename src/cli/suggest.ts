// "Did you mean ...?" for a misspelt verb or flag (issue 14.9). The distance is the
// fastest-levenshtein package's, not code of ours, and it is imported only here, on the error
// path, so a command that is typed right never loads it (test/cli/startup.test.ts).

/**
 * The candidates closest to `word`, best first (at most three), or none when nothing is close.
 * Policy: close means a Levenshtein distance of 1 for a word of up to 3 letters, else of at most
 * a third of its length but at least 2 (a swap of two letters, the commonest slip, costs 2:
 * `gaet`, `--jsno`) and at most 3; or `word` being the start of exactly one candidate (`ledger
 * checkp`). Further than that a suggestion is more likely wrong than helpful.
 */
export async function closest(word: string, candidates: readonly string[]): Promise<string[]> {
  const { distance } = await import('fastest-levenshtein');
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

/** "did you mean `gate`?" or "did you mean `gate` or `log`?", or null. */
export function didYouMean(found: readonly string[], show: (s: string) => string): string | null {
  if (found.length === 0) return null;
  const named = found.map((f) => `\`${show(f)}\``);
  return `did you mean ${named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} or ${named[named.length - 1]}`}?`;
}
