// Lines for a terminal's width (src/text/lines.ts; issue 26: `status` and `resume` at 80 columns
// and up): whatever the words (digests, words wider than the terminal, emoji, nothing at all),
// no line fitLines gives is wider than the terminal, and a cell cut by clipCell is never wider
// than its room. Widths count code points, as the module does (wide CJK aside, documented there).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipCell, fitLines } from '../../src/text/lines.js';
import { runs } from '../helpers/runs.js';

const cols = (s: string) => [...s].length;
const word = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('sha256:' + 'ab'.repeat(32), 'x'.repeat(150), '\u2026', '\u65e5\u672c\u8a9e', '\u{1F469}\u200D\u{1F4BB}', ''),
);
// Indented as the verbs indent (at most 8 spaces), words joined by spaces.
const line = fc.tuple(fc.integer({ min: 0, max: 8 }), fc.array(word, { maxLength: 40, size: 'max' })).map(([n, ws]) => ' '.repeat(n) + ws.join(' '));

describe('when text is fitted to a terminal', () => {
  it('property: no line is wider than the terminal (40 columns and up)', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 10 }), fc.integer({ min: 40, max: 200 }), (lines, width) => {
        for (const l of fitLines(lines, width)) expect(cols(l), JSON.stringify(l)).toBeLessThanOrEqual(width);
      }),
      { numRuns: runs(300, 20_000) },
    );
  });

  it('property: a cell cut to its room (3 columns and up) fits it, a quoted one keeping its closing quote', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.integer({ min: 3, max: 60 }), (cell, max) => {
        const out = clipCell(cell, max);
        expect(cols(out)).toBeLessThanOrEqual(max);
        if (cols(cell) > max && cell.endsWith('"')) expect(out.endsWith('\u2026"')).toBe(true);
      }),
      { numRuns: runs(300, 20_000) },
    );
  });

  it('shortens a digest to 12 hex digits and wraps under the line\'s own indent', () => {
    const d = 'sha256:' + 'ab'.repeat(32);
    expect(fitLines([`  handoff ${d} by claude`], 80)).toEqual(['  handoff sha256:abababababab\u2026 by claude']);
    expect(fitLines(['    ' + 'word '.repeat(30).trim()], 40).every((l, i) => (i === 0 ? l.startsWith('    word') : l.startsWith('      word')))).toBe(true);
  });
});
