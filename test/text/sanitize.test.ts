// The output neutraliser (src/text/sanitize.ts): no control, bidi or invisible format code point
// survives in text output, a line of record text stays one line, the replacement names what it
// replaced, and JSON text keeps its exact values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PLAIN_MARKS, escapeCodePoint, hasUnsafe, isUnsafeCodePoint, neutralise, neutraliseDiagnostic, neutraliseLine } from '../../src/text/sanitize.js';

const RUNS = process.env.SOAK === '1' ? 20_000 : 400;

// The test's own statement of what must never reach a terminal raw, written apart from the
// module's: every C0 but tab and LF, DEL, every C1, the bidi controls and marks, the line and
// paragraph separators, the zero-width and other invisible format characters, lone surrogates.
const NEVER = [
  ...Array.from({ length: 0x20 }, (_, i) => i).filter((c) => c !== 0x09 && c !== 0x0a),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
  0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
  0x2028, 0x2029, 0x200b, 0x2060, 0xfeff, 0x00ad, 0x180e, 0xe0001, 0xe0041, 0xe007f, 0x3164, 0xe0100,
  // reserved, not format characters (so not Cf), and shown as nothing: U+E0000 was let through
  // until `npm run soak` found it (seed 896573782 of test/hostile/output-sinks.test.ts)
  0xe0000, 0xe0002, 0xe001f, 0xe0080, 0xe01f0, 0xe0fff, 0x2065, 0xfff0, 0xfff8,
];
const NEVER_SET = new Set(NEVER);

/** Every code point (lone surrogates included) of a string. */
function codePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

function survivors(out: string): number[] {
  return codePoints(out).filter((cp) => NEVER_SET.has(cp) || /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u.test(String.fromCodePoint(cp)) && ![0x09, 0x0a, 0x200c, 0x200d].includes(cp));
}

/** Strings that mix the dangerous code points with text, backslashes and line feeds. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...NEVER.map((c) => String.fromCodePoint(c)), 'a', ' ', '\n', '\t', '\\', 'u', '0', '[', '\u200d', '\u{1F600}', '\ud800', '\udc00'), maxLength: 60 }),
);

/** Reads the escapes back: `\uXXXX` (pairs joined by the JS string itself). */
function decode(s: string): string {
  return s.replace(/\\u([0-9A-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

describe('when record text holds terminal controls, bidi overrides or invisible characters', () => {
  it('names each one it replaces: ESC, CSI (8-bit), RLO, U+2028, a tag character, NUL', () => {
    expect(neutraliseLine('\x1b[2Jproceed')).toBe('\\u001B[2Jproceed');
    expect(neutraliseLine('\u009b2J')).toBe('\\u009B2J');
    expect(neutraliseLine('abc\u202Efed')).toBe('abc\\u202Efed');
    expect(neutraliseLine('a\u2028b\u0085c')).toBe('a\\u2028b\\u0085c');
    expect(neutraliseLine('x\u{E0041}')).toBe('x\\uDB40\\uDC41');
    expect(neutraliseLine('\0')).toBe('\\u0000');
    expect(escapeCodePoint(0x1b)).toBe('\\u001B');
  });

  it('keeps text, tab, the joiners of Persian and emoji, and, in a block, the line feed', () => {
    const ok = 'fix toLocal() → 11:00, naïve 日本語 می‌خواهم 👩‍💻\tdone';
    expect(neutraliseLine(ok)).toBe(ok);
    expect(neutralise('a\nb\n')).toBe('a\nb\n');
    expect(neutraliseLine('a\nb')).toBe('a\\u000Ab');
    expect(hasUnsafe(ok)).toBe(false);
    expect(hasUnsafe('a\nb')).toBe(false);
    expect(hasUnsafe('a\rb')).toBe(true);
  });

  it('neutralises every default-ignorable code point but the ones scripts and emoji need', () => {
    // Unicode's own list of what a renderer shows as nothing (\p{DI}), against the module's set,
    // over every code point. What is kept, each on purpose: ZWNJ and ZWJ (Persian, Indic, emoji),
    // the combining grapheme joiner, the Khmer inherent vowels, the Mongolian variation selectors
    // and the variation selectors that choose an emoji's presentation.
    const kept = new Set([0x200c, 0x200d, 0x034f, 0x17b4, 0x17b5, 0x180b, 0x180c, 0x180d, 0x180f, ...Array.from({ length: 16 }, (_, i) => 0xfe00 + i)]);
    const letThrough: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (/\p{DI}/u.test(String.fromCodePoint(cp)) && !kept.has(cp) && !isUnsafeCodePoint(cp)) letThrough.push(cp.toString(16));
    }
    expect(letThrough).toEqual([]);
    for (const cp of kept) expect(isUnsafeCodePoint(cp), cp.toString(16)).toBe(false);
    expect(neutraliseLine('\u2764\uFE0F')).toBe('\u2764\uFE0F');
  });

  it('property: no such code point survives, a line stays one line, and the escapes read back', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        const line = neutraliseLine(s);
        expect(survivors(line)).toEqual([]);
        expect(line).not.toContain('\n');
        const block = neutralise(s);
        expect(survivors(block)).toEqual([]);
        expect(block.split('\n').length).toBe(s.split('\n').length);
        // idempotent: output is already safe
        expect(neutraliseLine(line)).toBe(line);
        // unambiguous: without a backslash of its own, the text reads back exactly
        if (!s.includes('\\')) expect(decode(line)).toBe(s);
      }),
      { numRuns: RUNS },
    );
  });

  it('property: a JSON text keeps its exact values (and loses every raw unsafe code point)', () => {
    const json = fc.jsonValue({ stringUnit: fc.oneof(fc.constantFrom(...NEVER.map((c) => String.fromCodePoint(c)), '\u2028', '\\', '"'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxDepth: 3 });
    fc.assert(
      fc.property(json, fc.boolean(), (v, pretty) => {
        const text = pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
        const out = neutralise(text);
        expect(JSON.parse(out)).toStrictEqual(JSON.parse(text));
        expect(survivors(out)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('when a diagnostic on stderr quotes a value with a line feed', () => {
  it('is one line, with its own final line feed', () => {
    expect(neutraliseDiagnostic('ledger: no item "a\nproceed: x"\n')).toBe('ledger: no item "a\\u000Aproceed: x"\n');
  });

  it("keeps the CLI's own progress redraw at the start of a write, and only there", () => {
    expect(neutraliseDiagnostic('\raudit: 5 of 9 records')).toBe('\raudit: 5 of 9 records');
    expect(neutraliseDiagnostic('\r\x1b[K')).toBe('\r\x1b[K');
    expect(neutraliseDiagnostic('\r\x1b[2Kstart: reading 20000 records')).toBe('\r\x1b[2Kstart: reading 20000 records');
    expect(neutraliseDiagnostic('\r\x1b[2J')).toBe('\r\\u001B[2J');
    expect(neutraliseDiagnostic('ledger: \r\x1b[Kproceed\n')).toBe('ledger: \\u000D\\u001B[Kproceed\n');
  });
});

describe('when text is plain (the fast path that skips the Unicode classes)', () => {
  it('holds only marks that are safe by the Unicode classes themselves', () => {
    for (const ch of PLAIN_MARKS) expect(isUnsafeCodePoint(ch.codePointAt(0)!), ch).toBe(false);
  });

  it('is returned as it is, and a line feed in a line is still escaped', () => {
    const t = 'seq 4 sha256:0123456789ab\u2026 \u00b7 ok \u2014 done\tand more';
    expect(neutralise(t)).toBe(t);
    expect(neutraliseLine(t)).toBe(t);
    expect(hasUnsafe(t)).toBe(false);
    expect(neutraliseLine('a\nb')).toBe('a\\u000Ab');
    expect(neutralise('a\nb')).toBe('a\nb');
  });

  it('property: a plain prefix never hides an unsafe code point after it', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\u2026', '\t') }), fc.constantFrom(...NEVER), (plain, cp) => {
        const out = neutraliseLine(plain + String.fromCodePoint(cp));
        expect(out.endsWith(escapeCodePoint(cp))).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
