// Record text in Markdown as text, never as markup (issue 13 finding 11). Pure.
//
// Policy: every string a record carries reaches HANDOFF.md inside a code span (one line) or a
// fenced code block (several lines), after `neutralise`: CommonMark and GitHub read neither as
// markup, so a fake heading, raw HTML, a link, an entity, an autolink (`www.x.com`, an email), a
// table pipe, emphasis, or a leading `>`, `-`, `1.` render literally. Escaping every Markdown
// special with backslashes instead would leave GFM's autolinks live and make the raw file hard
// to read. The delimiters are chosen from the text itself, so no backtick run inside it can
// close them early. Text inside an HTML element (a `<summary>`) is HTML-escaped instead.
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
