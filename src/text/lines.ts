// Small text shapers shared by the views, resume, the status and the MCP tools: record text as
// display lines. Pure.
// Record text is neutralised here, where it becomes a line (sanitize.ts): a line feed
// inside one line of output becomes a visible escape, never a second line.
import { neutraliseLine } from './sanitize.js';

/**
 * One line: runs of spaces, tabs and line feeds become one space, everything else unsafe an
 * escape; clipped to `max` characters (code points, never half a pair or half an escape).
 */
export function oneLine(text: string, max = 160): string {
  const flat = neutraliseLine(text.replace(/[ \t\n]+/g, ' ').trim());
  const chars = [...flat];
  if (chars.length <= max) return flat;
  return chars.slice(0, Math.max(0, max - 1)).join('').replace(/\\u[0-9A-F]{0,3}$/, '') + '…';
}

/** The lines of a text, each neutralised; a final line feed ends the text, it adds no line. */
export function textLines(text: string): string[] {
  return text.replace(/\n+$/, '').split('\n').map(neutraliseLine);
}

/** Lines of a text, cleaned; at most `max`, with a last line saying how many were left out. */
export function clipLines(text: string, max: number): string[] {
  const lines = textLines(text);
  if (lines.length <= max) return lines;
  const keep = Math.max(0, max - 1);
  return [...lines.slice(0, keep), `… (${lines.length - keep} more lines)`];
}

/** The last `max` lines of a text (test output reads from the end). */
export function lastLines(text: string, max: number): string[] {
  const lines = textLines(text);
  if (lines.length <= max) return lines;
  if (max <= 0) return [];
  return [`… (${lines.length - max + 1} earlier lines)`, ...lines.slice(-(max - 1))];
}

export function shortId(id: string): string {
  return id.slice(0, 19);
}

/** Code points, as the terminal counts columns for the text we print (wide CJK aside). */
function cols(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Lines for a terminal `width` columns wide (issue 26: `status` and `resume` at 80 columns).
 * Each full SHA-256 digest is shortened to its first 12 hex digits and a `…` (`--json` and
 * `ledger show` have them whole); then a line still wider than the terminal is wrapped at
 * spaces, its continuation indented two past the line's own indent, and a word wider than a
 * whole line is cut, ending in `…`.
 */
export function fitLines(lines: readonly string[], width: number): string[] {
  const out: string[] = [];
  for (const raw of lines) {
    const line = raw.replace(/(sha256:[0-9a-f]{12})[0-9a-f]{52}(?![0-9a-f])/g, '$1…');
    if (cols(line) <= width) {
      out.push(line);
      continue;
    }
    const indent = /^ */.exec(line)![0];
    const next = indent + '  ';
    const room = (first: boolean) => width - (first ? 0 : next.length);
    let cur = '';
    let first = true;
    for (const word of line.slice(indent.length).split(' ')) {
      const lead = first && cur === '' ? indent : cur === '' ? next : '';
      const candidate = cur === '' ? lead + word : cur + ' ' + word;
      if (cols(candidate) <= width) {
        cur = candidate;
        continue;
      }
      if (cur !== '' && cur.trim() !== '') {
        out.push(cur);
        first = false;
      }
      const w = cols(next + word) <= width ? word : [...word].slice(0, Math.max(1, room(false) - 1)).join('') + '…';
      cur = next + w;
    }
    if (cur.trim() !== '') out.push(cur);
  }
  return out;
}

/** A cell cut to `max` columns with a `…`, a quoted one keeping its closing quote. */
export function clipCell(cell: string, max: number): string {
  if (cols(cell) <= max) return cell;
  const quoted = cell.endsWith('"');
  const keep = [...cell].slice(0, Math.max(1, max - (quoted ? 2 : 1))).join('');
  return keep + (quoted ? '…"' : '…');
}