// Record text in Markdown as text, never as markup (issue 13 finding 11, issue 26 item 6). Pure.
//
// Policy: what people wrote (a summary, a next action, a note, a reason) reaches HANDOFF.md as
// prose, `proseText`: neutralised, then every character Markdown or GitHub would read as markup
// backslash-escaped (CommonMark 2.4: an escaped ASCII punctuation character shows literally;
// `escapePunctuation` says which), so a fake heading, raw HTML, a link, an entity, emphasis, a
// table pipe, or a leading `>`, `-`, `1.` render as the characters typed. An escaped `:`, `@` or
// the `.` of `www.` also breaks the patterns GFM's autolinks need: a URL in a note reads as
// text, not as a link. A line break in
// the text is a hard break, and a blank line in it is kept as a line of one no-break space, so
// no line of it can start a block of its own. What is code by nature (a test command, an
// evidence source) is a code span, and test output a fenced block: their delimiters are chosen
// from the text itself, so no backtick run inside can close them early. Text inside an HTML
// element (a `<summary>`) is HTML-escaped instead.
import { neutralise, neutraliseLine } from './sanitize.js';

/** The longest run of backticks in `text` (0 when there is none). */
function longestBacktickRun(text: string): number {
  if (!text.includes('`')) return 0;
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/**
 * One line of text as an inline code span. Its delimiter is one backtick longer than any run
 * inside; a space pads both sides where CommonMark would otherwise read a backtick at the edge
 * as part of the delimiter or strip an edge space of the text (CommonMark 0.31, 6.1).
 */
export function codeSpan(text: string): string {
  const body = neutraliseLine(text);
  if (body === '') return '(empty)';
  const fence = '`'.repeat(longestBacktickRun(body) + 1);
  const edgeBacktick = body.startsWith('`') || body.endsWith('`');
  const edgeSpaces = body.startsWith(' ') && body.endsWith(' ') && body.trim() !== '';
  const pad = edgeBacktick || edgeSpaces ? ' ' : '';
  return fence + pad + body + pad + fence;
}

/** Text of any length as the lines of a fenced `text` block that nothing inside can close. */
export function fencedBlock(text: string): string[] {
  const body = neutralise(text).replace(/\n+$/, '');
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(body) + 1));
  return [fence + 'text', ...(body === '' ? [] : body.split('\n')), fence];
}

/** Whether `text` needs a block (it spans lines once neutralised). */
export function isMultiLine(text: string): boolean {
  // neutralise keeps every line feed and writes none of its own: no need to run it here.
  return text.replace(/\n+$/, '').includes('\n');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** One line of text for inside an HTML element: neutralised, then HTML-escaped. */
export function htmlText(text: string): string {
  return neutraliseLine(text).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** One line of record text as Markdown prose: every ASCII punctuation character escaped. */
export function proseLine(text: string): string {
  const body = neutraliseLine(text);
  if (body.trim() === '') return '(empty)';
  return escapePunctuation(body);
}

/**
 * Record text of any length as Markdown prose: its lines joined by hard breaks (a backslash at
 * the end of a line), a blank line kept as a no-break space, leading white space of a line kept
 * as no-break spaces (a paragraph would drop it). One paragraph, whatever the text holds.
 */
export function proseText(text: string): string[] {
  const body = neutralise(text).replace(/\n+$/, '');
  if (body.trim() === '') return ['(empty)'];
  const lines = body.split('\n').map((l) => {
    const lead = /^[ \t]*/.exec(l)![0];
    const rest = l.slice(lead.length);
    return lead.replace(/\t/g, '    ').replace(/ /g, '\u00a0') + escapePunctuation(rest) || '\u00a0';
  });
  return lines.map((l, i) => (i < lines.length - 1 ? l + '\\' : l));
}

/**
 * Backslash-escapes what Markdown or GitHub would read in a line of text: anywhere, the
 * characters of inline markup (code, emphasis, links, HTML, entities, tables, strikethrough,
 * math, issue references and mentions, emoji and URL schemes: \\ ` * _ [ ] < & | ~ $ # @ :),
 * and the `.` of `www.`; at the line's start, what opens a block (`-`, `+`, `=`, `>`, `1.`,
 * `1)`). Other punctuation is left as typed, so the file stays readable as text too.
 */
function escapePunctuation(text: string): string {
  const inline = text.replace(/[\\`*_[\]<&|~$#@:]/g, '\\$&').replace(/(www)\./gi, '$1\\.');
  return inline.replace(/^[-+=>]/, '\\$&').replace(/^(\d+)([.)])/, '$1\\$2');
}
