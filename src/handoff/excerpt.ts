// The bounded excerpt of test output kept inline in a record, made safe to show: the lines that
// say what failed and the runner's summary first (runner-output.ts), then the last lines.
// Pure. The digest in the record is always of the raw bytes; only the excerpt is cleaned.
import { charCount } from '../record.js';
import { failureAndSummary } from './runner-output.js';

/**
 * Policy: at most 40 lines and 8192 characters, read from the last 1 MiB of the output: the
 * failing lines and summary that the last lines do not hold (issue 26: a TAP failure followed by
 * 60 stack frames must not come back as 40 frames), a line saying what was left out, then the
 * last lines. Output with no failure a runner names keeps the last 40 lines, as it always did.
 */
export const EXCERPT_LINES = 40;
export const EXCERPT_CHARS = 8192;
export const EXCERPT_WINDOW = 1024 * 1024;

// CSI and OSC sequences (colours, cursor moves, hyperlinks) and other escapes.
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// Control characters other than tab and newline.
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * Terminal-safe text: escape sequences removed, a carriage return keeps only what was drawn last
 * on its line (progress bars), other control characters become U+FFFD.
 */
export function plainText(text: string): string {
  return text
    .replace(ANSI_RE, '')
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => {
      const parts = line.split('\r').filter((p) => p !== '');
      return (parts[parts.length - 1] ?? '').replace(CONTROL_RE, '\uFFFD');
    })
    .join('\n');
}

/**
 * The excerpt of `tail`, the last bytes of an output; `cut` says whether the output began before
 * them (then the first, partial line is dropped, which also drops a split UTF-8 sequence).
 */
export function excerptOf(tail: Uint8Array, cut: boolean): string {
  let text = Buffer.from(tail).toString('utf8');
  if (cut) text = text.slice(text.indexOf('\n') + 1);
  const all = plainText(text).replace(/\n+$/, '').split('\n');
  const { failures, summary } = failureAndSummary(all);
  const chosen = [...failures, ...summary].sort((a, b) => a - b);
  const firstTail = (n: number) => Math.max(0, all.length - n);
  const head = chosen.filter((i) => i < firstTail(EXCERPT_LINES - 1 - chosen.length));
  let lines: string[];
  if (head.length === 0) lines = all.slice(-EXCERPT_LINES);
  else {
    const from = firstTail(EXCERPT_LINES - 1 - head.length);
    const tail = all.slice(from);
    const left = from - head.length;
    lines = [...head.map((i) => all[i]), `\u2026 (${left} line${left === 1 ? '' : 's'} left out; the output ends:)`, ...tail];
    // The character bound takes from the top of the tail first, never from the failures.
    while (lines.length > head.length + 2 && charCount(lines.join('\n')) > EXCERPT_CHARS) lines.splice(head.length + 1, 1);
  }
  let out = lines.join('\n');
  if (charCount(out) > EXCERPT_CHARS) {
    // Cut by characters (code points), as the schema counts them, so never through a pair.
    out = [...out].slice(-EXCERPT_CHARS).join('');
    out = out.slice(out.indexOf('\n') + 1);
  }
  return out;
}

// Reading an excerpt under a line budget (`resume`). A failing test's output ends with what
// failed and why, wrapped in stack frames; when not every line fits, the lines that say what
// failed are the ones to keep (issue 14, item 12).

/** How much a line is worth to a reader, best first. */
const Worth = { failure: 0, other: 1, frame: 2, blank: 3 } as const;
type Worth = (typeof Worth)[keyof typeof Worth];

// Policy: "looks like a failure": the words and marks of vitest, jest, mocha, node:test/TAP,
// pytest, cargo and go test for a failed test, an error, an assertion and its diff.
// Written with \u escapes: one non-ASCII character in the CLI bundle makes V8 hold its whole
// source as two-byte text (twice the bytes to read and hash at every start).
const FAILURE_RE = /\b\w*(?:fail|error|assert)\w*\b|\b(?:expected|received|panicked|traceback|not ok)\b|[\u2717\u2715\u00D7\u2718\u25CF\u274C]|^\s*[-+] \S|^\s*>\s*\d+\s*\|/i;
// Policy: a stack frame: `    at f (file:1:2)`, vitest's ` ❯ file:1:2`, Python's `  File "x", line 1`,
// and any line inside node_modules.
const FRAME_RE = /^\s+at\s\S|^\s*\u276F\s|^\s*File ".*", line \d+|node_modules[\\/]/;

function worth(line: string): Worth {
  if (line.trim() === '') return Worth.blank;
  if (FRAME_RE.test(line)) return Worth.frame;
  if (FAILURE_RE.test(line)) return Worth.failure;
  return Worth.other;
}

/** The kept lines in their order, each run left out shown as one line saying what it held. */
function withGaps(lines: string[], keep: Set<number>): string[] {
  const out: string[] = [];
  let gap: number[] = [];
  const flush = () => {
    const texts = gap.map((i) => worth(lines[i])).filter((w) => w !== Worth.blank);
    // Policy: blank lines left out are not marked: a marker would cost the line it saves.
    if (texts.length > 0) {
      const frames = texts.every((w) => w === Worth.frame) ? 'stack frame ' : '';
      out.push(`… (${gap.length} ${frames}line${gap.length === 1 ? '' : 's'} left out)`);
    }
    gap = [];
  };
  lines.forEach((line, i) => {
    if (!keep.has(i)) return void gap.push(i);
    flush();
    out.push(line);
  });
  flush();
  return out;
}

/**
 * Which line to keep first: by worth, then failures and frames from the top (the first
 * assertion, the frame that names the test's own file) and other text from the end (the
 * summary a runner prints last).
 */
function keepOrder(lines: string[]): number[] {
  const ranked = lines.map((line, i) => ({ i, w: worth(line) }));
  const fromTop = (w: Worth) => w === Worth.failure || w === Worth.frame;
  return ranked.sort((a, b) => a.w - b.w || (fromTop(a.w) ? a.i - b.i : b.i - a.i)).map((r) => r.i);
}

/**
 * At most `budget` display lines of an excerpt's `lines` (already made safe to show): all of
 * it when it fits; else the most lines that fit with their gaps marked, chosen by worth
 * (failures, then other text, then stack frames, then blank lines), and shown in their order.
 */
export function excerptWithin(lines: string[], budget: number): string[] {
  if (lines.length <= budget) return lines;
  if (budget <= 0) return [];
  const order = keepOrder(lines);
  for (let k = budget; k >= 1; k--) {
    const out = withGaps(lines, new Set(order.slice(0, k)));
    if (out.length <= budget) return out;
  }
  // A budget of one or two lines: the end of the output, as `lastLines` shows it.
  return [`… (${lines.length - budget + 1} earlier lines)`, ...lines.slice(lines.length - budget + 1)];
}
