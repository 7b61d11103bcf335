// Small text shapers shared by the views and resume. Pure.
import { plainText } from './excerpt.js';

/** One line: whitespace runs (newlines included) become one space; clipped to `max` chars. */
export function oneLine(text: string, max = 160): string {
  const flat = plainText(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** Lines of a text, cleaned; at most `max`, with a last line saying how many were left out. */
export function clipLines(text: string, max: number): string[] {
  const lines = plainText(text).replace(/\n+$/, '').split('\n');
  if (lines.length <= max) return lines;
  const keep = Math.max(0, max - 1);
  return [...lines.slice(0, keep), `… (${lines.length - keep} more lines)`];
}

/** The last `max` lines of a text (test output reads from the end). */
export function lastLines(text: string, max: number): string[] {
  const lines = plainText(text).replace(/\n+$/, '').split('\n');
  if (lines.length <= max) return lines;
  if (max <= 0) return [];
  return [`… (${lines.length - max + 1} earlier lines)`, ...lines.slice(-(max - 1))];
}

export function shortId(id: string): string {
  return id.slice(0, 19);
}
