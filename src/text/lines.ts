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
