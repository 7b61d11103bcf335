// Issue 26.4: which new slugs `start` refuses as a typo of an open item's (src/text/suggest.ts
// typoOf), as a table: typos, and the series, parts and short names that are not.
import { describe, expect, it } from 'vitest';
import { distance } from 'fastest-levenshtein';
import { typoOf } from '../../src/text/suggest.js';

const OPEN = ['fix-tz', 'dist-tests', 'task-17', 'fix-a', 'wi', 'migrate-schema'];
const ROWS: [string, string[]][] = [
  ['fix-zt', ['fix-tz']], // two neighbours swapped
  ['fix-t', ['fix-tz']], // a letter left out
  ['dst-tests', ['dist-tests']],
  ['migrate-shcema', ['migrate-schema']],
  ['migrat-schem', ['migrate-schema']], // two edits, 12 characters
  ['fixx-tzz', []], // two edits, 8 characters: not refused
  ['task-18', []], // numbered siblings
  ['wi2', []],
  ['fix-b', []], // lettered siblings
  ['fix-tz-ui', []], // a part of fix-tz
  ['abc', []], // too short to tell
  ['docs-install', []], // far from all
];

describe('start: a new slug a typo away from an open item', () => {
  it.each(ROWS)('%s is a typo of %j', (slug, near) => {
    expect(typoOf(distance)(slug, OPEN)).toEqual(near);
  });
});
