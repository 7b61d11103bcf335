// Record text in Markdown (src/text/markdown.ts), read back by a CommonMark parser with HTML and
// autolinks on (markdown-it, html + linkify): whatever the text, a code span is one code span
// and a fenced block one fence, holding exactly the neutralised text.
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { codeSpan, fencedBlock, htmlText } from '../../src/text/markdown.js';
import { neutralise, neutraliseLine } from '../../src/text/sanitize.js';

const RUNS = process.env.SOAK === '1' ? 10_000 : 300;
const md = new MarkdownIt({ html: true, linkify: true });

/** Markdown's specials, HTML, links and fences, in any order and amount. */
const markupy = fc.string({
  unit: fc.constantFrom('`', '``', '```', '~~~', '*', '_', '#', '# ', '>', '- ', '1. ', '|', '[', ']', '(', ')', '!', '<', '>', '&', '&amp;', '\\', ' ', '  ', '\n', '\t', 'a', 'www.x.com', 'http://e.vil', 'a@b.co', '<script>', '</details>', '<!--', '-->', '---', '===', '\x1b', '\u202e', '\u2028', 'x'),
  maxLength: 40,
});
const anyText = fc.oneof(markupy, fc.string({ unit: 'binary', maxLength: 40 }));

describe('when record text is written as a code span', () => {
  it('property: the parser sees exactly one code span holding exactly the text', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const line = neutraliseLine(s);
        fc.pre(line !== '');
        const tokens = md.parseInline(`- **Label:** ${codeSpan(s)} after`, {})[0].children!;
        const codes = tokens.filter((t) => t.type === 'code_inline');
        expect(codes).toHaveLength(1);
        expect(codes[0].content).toBe(line);
        expect(tokens.filter((t) => !['text', 'code_inline', 'strong_open', 'strong_close'].includes(t.type))).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('pads a span whose text starts with a backtick or has spaces at both ends', () => {
    expect(codeSpan('`x`')).toBe('`` `x` ``');
    expect(codeSpan(' a ')).toBe('`  a  `');
    expect(codeSpan('a `` b')).toBe('```a `` b```');
    expect(codeSpan('')).toBe('(empty)');
  });
});

describe('when record text is written as a fenced block', () => {
  it('property: the parser sees one fence, holding exactly the text, and nothing after it', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const body = neutralise(s).replace(/\n+$/, '');
        // inside a list item, as HANDOFF.md has it
        const doc = ['- **Label:**', ...fencedBlock(s).map((l) => (l === '' ? '' : `  ${l}`)), '- **Next:** n'].join('\n');
        const tokens = md.parse(doc, {});
        const fences = tokens.filter((t) => t.type === 'fence');
        expect(fences).toHaveLength(1);
        expect(fences[0].content).toBe(body === '' ? '' : body + '\n');
        expect(tokens.filter((t) => t.type.startsWith('html') || t.type.startsWith('heading') || t.type === 'hr' || t.type.startsWith('table') || t.type.startsWith('blockquote'))).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('when record text goes inside an HTML element', () => {
  it('is escaped, so no tag of it opens', () => {
    expect(htmlText('<img src=x onerror=alert(1)> & "q" \'s\'')).toBe('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; &#39;s&#39;');
    const html = md.render(`<details><summary>${htmlText('</summary><script>x</script>')}</summary>\n\nbody\n\n</details>`);
    expect(html).not.toContain('<script>');
  });
});
