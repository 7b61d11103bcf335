// Text that records carry (notes, reasons, summaries, sources, test output) is attacker-
// controlled: anyone who can write a record, or a file a test prints, chooses it. Before it
// reaches a terminal, HANDOFF.md or HANDOFF.yml, every code point that a terminal or an editor
// acts on instead of showing is replaced by a visible escape naming it (SPEC 10, issue 13
// finding 10). Pure; no imports, so the CLI's sinks can load it on every command.
//
// Policy: what is neutralised (the "unsafe" code points):
//   - every control character (Unicode Cc: C0, DEL, C1 with U+0085) except tab, and except the
//     line feed where the output is multi-line (`neutralise`); `neutraliseLine` escapes it too;
//   - every format character (Cf): bidi embeddings, overrides and isolates (U+202A-202E,
//     U+2066-2069), the marks U+200E/200F/061C, zero-width space, word joiner, soft hyphen,
//     BOM, the tag characters U+E0000-E007F that smuggle text an agent reads and a person does
//     not, except ZWNJ and ZWJ (U+200C, U+200D), which Persian, Indic scripts and emoji need;
//   - the line and paragraph separators U+2028 and U+2029 (Zl, Zp);
//   - lone surrogates (Cs), which no terminal can show;
//   - the invisible Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), and every code point of the
//     block U+E0000-E0FFF (the tag characters, the variation selectors supplement and the code
//     points reserved there), two known ways to hide text in plain sight;
//   - the code points Unicode reserves as default-ignorable (U+2065, U+FFF0-FFF8): a future
//     version may make them invisible format characters, and a terminal already shows nothing.
//   So every Default_Ignorable_Code_Point is neutralised except the ones scripts and emoji
//   need: ZWNJ and ZWJ, the combining grapheme joiner U+034F, the Khmer inherent vowels
//   U+17B4/17B5, the Mongolian variation selectors U+180B-180D and U+180F, and the variation
//   selectors U+FE00-FE0F (an emoji's presentation). A test holds this against \p{DI}.
//   (Found by `npm run soak`, seed 896573782 of test/hostile/output-sinks.test.ts: U+E0000,
//   reserved rather than a format character, passed through when only Cf was asked for.)
// Tab is kept: it moves the cursor only to the next tab stop and cannot forge a line.
//
// Policy: the replacement is the escape `\uXXXX` (four upper-case hex digits; a code point above
// U+FFFF as its two surrogate halves, `\uDB40\uDC41`). It is visible, names the code point, and
// is also a JSON string escape for that code point: applied to JSON text, `neutralise` changes
// no parsed value (JSON.stringify writes no raw control character and no raw separator outside
// a string), so one function serves the text and the `--json` sinks. Text that already holds
// the six characters `\u001B` is shown as it is; the exact value is what `--json` prints.

// The unsafe set, as one regular expression. `u` mode: a surrogate pair is one code point, so
// \p{Cs} matches only a lone surrogate.
const UNSAFE_SOURCE = '[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}\\u115F\\u1160\\u2065\\u3164\\uFFA0\\uFFF0-\\uFFF8\\u{E0000}-\\u{E0FFF}]';
// Speed (every verb's start, `ledger append` <= 1.3x `node -e ''`): the Unicode classes cost
// about 0.5 ms to build, so they are built on first use, and text made only of printable ASCII,
// tab, line feed and the few marks the CLI's own words use (PLAIN_MARKS: the ellipsis of a short
// id, a middle dot, an em dash; none of them unsafe, as a test checks), which is nearly all the
// CLI prints, never needs them.
let unsafeG: RegExp | undefined;
let unsafe1: RegExp | undefined;
const UNSAFE_G = () => (unsafeG ??= new RegExp(UNSAFE_SOURCE, 'gu'));
const UNSAFE_1 = () => (unsafe1 ??= new RegExp(UNSAFE_SOURCE, 'u'));
export const PLAIN_MARKS = '\u2026\u00b7\u2014';
const PLAIN = new RegExp(`^[\\t\\n\\x20-\\x7e${PLAIN_MARKS}]*$`);
const PLAIN_LINE = new RegExp(`^[\\t\\x20-\\x7e${PLAIN_MARKS}]*$`);

/** The code points kept although their class is unsafe: tab, and the two joiners. */
const KEPT = new Set([0x09, 0x200c, 0x200d]);
const LF = 0x0a;

/** `\uXXXX` for one code point (a supplementary one as its two surrogate halves). */
export function escapeCodePoint(cp: number): string {
  const unit = (u: number) => '\\u' + u.toString(16).toUpperCase().padStart(4, '0');
  if (cp <= 0xffff) return unit(cp);
  const v = cp - 0x10000;
  return unit(0xd800 + (v >> 10)) + unit(0xdc00 + (v & 0x3ff));
}

/** Whether `cp` is neutralised (a line feed counts: it is kept only by the multi-line form). */
export function isUnsafeCodePoint(cp: number): boolean {
  if (KEPT.has(cp)) return false;
  return UNSAFE_1().test(String.fromCodePoint(cp));
}

/** Whether `text` holds any code point `neutralise` would replace (line feed and tab excluded). */
export function hasUnsafe(text: string): boolean {
  if (PLAIN.test(text) || !UNSAFE_1().test(text)) return false; // the common case: one scan, nothing found
  for (const m of text.matchAll(UNSAFE_G())) {
    const cp = m[0].codePointAt(0)!;
    if (!KEPT.has(cp) && cp !== LF) return true;
  }
  return false;
}

/**
 * Every unsafe code point of `text` replaced by `replace(cp)`; a line feed too unless
 * `keepLineFeed`. The one loop both sinks and the YAML view use.
 */
export function replaceUnsafe(text: string, keepLineFeed: boolean, replace: (cp: number) => string): string {
  if ((keepLineFeed ? PLAIN : PLAIN_LINE).test(text) || !UNSAFE_1().test(text)) return text;
  return text.replace(UNSAFE_G(), (ch) => {
    const cp = ch.codePointAt(0)!;
    if (KEPT.has(cp) || (keepLineFeed && cp === LF)) return ch;
    return replace(cp);
  });
}

/** Multi-line text made safe to show: line breaks kept, every other unsafe code point escaped. */
export function neutralise(text: string): string {
  return replaceUnsafe(text, true, escapeCodePoint);
}

/** One line made safe to show: a line feed inside it is escaped too, so it stays one line. */
export function neutraliseLine(text: string): string {
  return replaceUnsafe(text, false, escapeCodePoint);
}

/**
 * A parser's reason (JSON.parse's, smol-toml's) as one line of inert text: its first line (a
 * parser may add a pointer line under it), which quotes the text around the error (`Unexpected
 * token ',', ..."om_seq": ,...`): the attacker's text, a carriage return or a terminal control
 * included (found by test/tlog/parsers-fuzz.test.ts).
 */
export function parserReason(e: unknown): string {
  return neutraliseLine(String((e as Error)?.message ?? e).split('\n')[0]);
}

// The one terminal control the CLI writes itself: a progress line on stderr redrawn in place
// (`\r`, optionally followed by an erase in line, ESC [ K, ESC [ 0 K or ESC [ 2 K) at the start
// of a write.
const REDRAW_RE = /^\r(?:\x1b\[[02]?K)?/;

/**
 * One write to stderr made safe: a diagnostic is one line, so a line feed inside it is escaped
 * and only a final one is kept. Policy: a redraw prefix (`\r`, `\r\x1b[K`, `\r\x1b[2K`) at the
 * start of a write is kept: every diagnostic the CLI writes starts with its own words
 * ("ledger: ...", "audit: ..."), never with record text, so record text cannot reach there.
 */
export function neutraliseDiagnostic(text: string): string {
  const redraw = REDRAW_RE.exec(text)?.[0] ?? '';
  let body = text.slice(redraw.length);
  const newline = body.endsWith('\n') ? '\n' : '';
  if (newline) body = body.slice(0, -1);
  return redraw + neutraliseLine(body) + newline;
}
