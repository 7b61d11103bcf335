// HANDOFF.md and HANDOFF.yml against hostile record text (issue 13, findings 10 and 11): a record
// written around the CLI can put anything in its strings. HANDOFF.md, read by a CommonMark
// parser with HTML and autolinks on, shows every such string as text (no heading, HTML, link,
// table, quote or list of its own); HANDOFF.yml parses back to the exact strings; neither file
// holds a raw control, bidi or invisible code point.
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { LedgerRecord } from '../../src/record.js';
import type { RecordAt } from '../../src/store/read.js';
import { foldWorkLog } from '../../src/handoff/workitems.js';
import { renderViews } from '../../src/handoff/views.js';
import { neutralise, neutraliseLine } from '../../src/text/sanitize.js';

const t48 = (texts: string[]) => codeOf(MARK + texts[48]);
const t8 = (texts: string[]) => codeOf(MARK + texts[18]);
/** What a code span of the test command holds: one line, runs of white space as one space. */
const codeOf = (s: string) => neutraliseLine(s.replace(/\s+/g, ' '));

const RUNS = process.env.SOAK === '1' ? 2_000 : 60;
const md = new MarkdownIt({ html: true, linkify: true });

const TS = '2026-01-01T00:00:00.000Z';
const LEASE = '2030-01-01T00:00:00.000Z';
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;

/** A sentinel that starts every hostile string, so the test can find where record text went. */
const MARK = 'ZQX';

/** The work log of a start, a checkpoint and a finish whose every string is `t(i)`. */
function hostileLog(t: (i: number) => string) {
  const rec = (seq: number, r: Record<string, unknown>): RecordAt => ({ seq, offset: 0, id: digest(seq), record: { v: 1, ts: TS, agent: 'claude', ...r } as unknown as LedgerRecord });
  const ids = { logical_operation_id: 'fix-tz', execution_id: 'claude-1' };
  const body = (k: number) => ({
    done: t(k), state: t(k + 1), next: t(k + 2), verified: [t(k + 3), t(k + 4)], attempted: [t(k + 5)], blockers: [t(k + 6)],
    tests: { excerpt: t(k + 7), digest: digest(99), command: t(k + 8), exit_code: 1, bytes: 120 },
  });
  return foldWorkLog([
    rec(0, { kind: 'genesis', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }),
    rec(1, { kind: 'start', ...ids, summary: t(0), lease_until: LEASE }),
    rec(2, { kind: 'checkpoint', ...ids, ...body(10), evidence: { src: { digest: digest(7), source: t(30) } }, lease_until: LEASE }),
    rec(3, { kind: 'finish', ...ids, ...body(40), outcome: 'failure', invariants: { tests: { ok: false, detail: t(60) } }, depends_on: [], evidence: {}, note: t(61) }),
    // The operation's story (issue 26): a handoff of it with a note, a consumption of the
    // finish whose action failed, and its revocation, each with hostile text.
    rec(4, { kind: 'handoff', ...ids, agent: 'ci', outcome: 'timeout', evidence: {}, invariants: {}, depends_on: [], note: t(64) }),
    rec(5, { kind: 'consume', agent: 'deployer', logical_operation_id: 'fix-tz', consumer: 'prod', handoff: digest(3), seen_head: { seq: 4, tail: digest(4) } }),
    rec(6, { kind: 'consume_failed', agent: 'deployer', logical_operation_id: 'fix-tz', consumer: 'prod', consume: digest(5), handoff: digest(3), reason: t(62) }),
    rec(7, { kind: 'revoke', agent: 'alice', target: digest(3), reason: t(63) }),
  ]);
}

const markup = fc.string({
  unit: fc.constantFrom('`', '```', '~~~', '*', '**', '_', '# ', '\n# ', '\n> ', '\n- ', '\n1. ', '\n    ', '|', '\n| a | b |\n|---|---|\n', '[x](http://e.vil)', '![i](x)', '<b>', '<script>alert(1)</script>', '</details>', '<!--', '&amp;', '\\', ' ', '\n', '\n\n', '\t', 'www.e.vil', 'a@b.co', '---', '\n===', '\x1b[2J', '\u202e', '\u2028', '\u0085', '\0', 'text'),
  maxLength: 30,
});
const hostileText = fc.oneof(markup, fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

/** Code points no view may hold raw (tab and line feed are the views' own). */
const RAW_UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
function rawUnsafe(text: string): string[] {
  return [...text].filter((c) => RAW_UNSAFE.test(c) && !['\t', '\n', '\u200c', '\u200d'].includes(c)).map((c) => c.codePointAt(0)!.toString(16));
}

/** Every token, nested ones included. */
type Tokens = ReturnType<typeof md.parse>;
function flat(tokens: Tokens): Tokens {
  return tokens.flatMap((t) => [t, ...flat(t.children ?? [])]);
}

describe('when every string of a work item is hostile Markdown, HTML or terminal control', () => {
  it('property: HANDOFF.md has only its own structure, and the record text as prose, never in code', () => {
    fc.assert(
      fc.property(fc.array(hostileText, { minLength: 65, maxLength: 65 }), (texts) => {
        const view = renderViews(hostileLog((i) => MARK + texts[i]))['HANDOFF.md'];
        expect(rawUnsafe(view)).toEqual([]);
        const tokens = flat(md.parse(view, {}));
        // our headings only: the title, three sections, one per open item (none), per operation and per entry
        expect(tokens.filter((t) => t.type === 'heading_open').map((t) => t.tag)).toEqual(['h1', 'h2', 'h2', 'h3', 'h2', 'h3', 'h3', 'h3']);
        for (const t of tokens) {
          expect(['link_open', 'image', 'html_inline', 'em_open', 's_open', 'table_open', 'blockquote_open', 'ordered_list_open', 'hr', 'code_block']).not.toContain(t.type);
          if (t.type === 'html_block') expect(t.content).toMatch(/^(<!-- ledger-view .* -->|<!-- Written by .* -->|<details><summary>[^<>]*<\/summary>|<\/details>)\n$/);
          // what people wrote is never a code chip; only the test command is code, and the output a fence
          if (t.type === 'code_inline' && t.content.includes(MARK)) expect([t48(texts), t8(texts), neutraliseLine(MARK + texts[30])]).toContain(t.content);
        }
        // what people wrote is all there, as text: the summary, and every prose field of the
        // checkpoint and the finish (done, state, next, verified, attempted, blockers; the
        // finish's invariant detail and note), and the operation's story (the consumer's
        // failure report, the revocation's reason, the handoff's note)
        const text = tokens.filter((t) => t.type === 'text' || t.type === 'text_special').map((t) => t.content).join('');
        const prose = [0, 10, 11, 12, 13, 14, 15, 16, 40, 41, 42, 43, 44, 45, 46, 60, 61, 62, 63, 64];
        // As shown (controls escaped), compared without white space: a line break becomes a
        // break, and Markdown drops the spaces at a line's end.
        const squash = (x: string) => x.replace(/\s+/g, '');
        for (const i of prose) expect(squash(text), `text ${i}`).toContain(squash((i === 60 ? neutraliseLine : neutralise)(MARK + texts[i])));
      }),
      { numRuns: RUNS },
    );
  });

  it('renders the hostile texts of the brief inert: a heading, a script, a javascript: link, backticks, a table pipe', () => {
    const evil = ['# x', '<script>alert(1)</script>', '[a](javascript:alert(1))', '``code`` `x`', 'a | b\n|---|---|', 'www.e.vil and a@b.co and http://x.y/z', '1. not a list\n> not a quote\n    not code\n\n- not an item'];
    for (const e of evil) {
      // What people wrote is hostile; the test commands, the output and the evidence source (code by nature) are not.
      const html = md.render(renderViews(hostileLog((i) => ([17, 18, 30, 47, 48].includes(i) ? 'plain' : e)))['HANDOFF.md']);
      expect(html, e).not.toMatch(/<script>|<a |<h1>x|<table|<blockquote|<pre><code>not|<ol|<li>not an item/);
      expect(html.match(/<code>[^<]*(x|alert|not a)[^<]*<\/code>/g), e).toBeNull();
    }
  });

  it('property: HANDOFF.yml parses back to exactly the strings the records hold', () => {
    fc.assert(
      fc.property(fc.array(hostileText, { minLength: 65, maxLength: 65 }), (texts) => {
        const t = (i: number) => MARK + texts[i];
        const view = renderViews(hostileLog(t))['HANDOFF.yml'];
        expect(rawUnsafe(view)).toEqual([]);
        const latest = parse(view).latest;
        expect(latest).toMatchObject({
          kind: 'finish', done: t(40), state: t(41), next: t(42), verified: [t(43), t(44)], attempted: [t(45)], blockers: [t(46)],
          tests: { excerpt: t(47), command: t(48), exit_code: 1 }, invariants: { tests: { ok: false, detail: t(60) } }, note: t(61),
        });
        // the operation's story in one line, whatever the revocation's reason holds
        const ops = parse(view).operations as string[];
        expect(ops).toHaveLength(1);
        expect(ops[0]).toMatch(/^fix-tz: timeout \(handoff by ci, seq 4; 2 outcomes\), not consumed$/);
        // the trail is one line per entry, whatever the text
        for (const line of parse(view).trail as string[]) expect(line).not.toMatch(/[\n\r]/);
      }),
      { numRuns: RUNS },
    );
  });

  it('round-trips the separators and controls a YAML library trips on', () => {
    const cases = ['a\u2028b', 'a\u2029b', 'x\u0085y', 'nul\0z', '\r\n', 'del\x7f', 'bom\ufeff', 'tag\u{E0041}', 'multi\nline\u2028end\n', ' lead', 'trail ', '- x', '#c', 'yes', 'null', '0x10', '"q"', "'s'", '|', '>', '%TAG', '---', '...',
      // Found by `npm run soak` (seed 372386935): a string of 40 characters or more that no block
      // scalar can hold (a line of one space, trailing spaces) came back with that line as "\\".
      'ZQX</details>\n \n1. www.e.vilwww.e.vil\n    ', 'a line long enough to be folded by the library\n \nand trailing spaces   '];
    for (const c of cases) {
      const view = renderViews(hostileLog(() => c))['HANDOFF.yml'];
      expect(rawUnsafe(view), JSON.stringify(c)).toEqual([]);
      const latest = parse(view).latest;
      expect(latest.done, JSON.stringify(c)).toBe(c);
      expect(latest.tests.excerpt, JSON.stringify(c)).toBe(c);
    }
  });
});

describe('when a test excerpt is in HANDOFF.md', () => {
  it('is folded in a <details> whose summary holds no record text', () => {
    const view = renderViews(hostileLog((i) => (i === 47 ? '</summary><script>x</script>\nFAIL 1' : `t${i}`)))['HANDOFF.md'];
    expect(view).toMatch(/\n {2}<details><summary>last 2 lines of the test output, exit code 1<\/summary>\n\n {2}```text\n {2}<\/summary><script>x<\/script>\n {2}FAIL 1\n {2}```\n\n {2}<\/details>\n/);
    expect(md.render(view)).not.toContain('<script>');
  });
});
