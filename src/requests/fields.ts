// The checks of a request's fields, one per kind of field, shared by every verb's request
// (work.ts, gate.ts, read.ts). Pure: a bad value throws a coded USAGE error, in one line.
//
// Messages name a field by its command-line flag (`--done`, `--lease`): the vocabulary the CLI,
// the library and an agent's tools share (SPEC 12: a tool's arguments are the flags' names in
// snake_case), so a refusal reads the same whichever way the request came.
import { LedgerError } from '../errors.js';
import { AGENT_RE, ID_RE, NAME_RE, OUTCOMES, charCount, type Outcome } from '../record.js';

/** A work item's slug: its logical_operation_id. */
export function checkSlug(slug: unknown): string {
  if (typeof slug !== 'string' || !ID_RE.test(slug)) {
    throw new LedgerError('USAGE', `SLUG must be 1-128 chars of [A-Za-z0-9._:-] (it is the work item's logical_operation_id), got "${String(slug)}"`);
  }
  return slug;
}

/** Who writes: an agent name (SPEC 4). */
export function checkAgent(agent: unknown): string {
  if (agent === undefined) throw new LedgerError('USAGE', '--agent is required (who is writing this record)', {}, 'pass --agent NAME or set LEDGER_AGENT');
  if (typeof agent !== 'string' || !AGENT_RE.test(agent)) throw new LedgerError('USAGE', `--agent must be 1-64 chars of [A-Za-z0-9._@-], got "${String(agent)}"`);
  return agent;
}

/** An id of the record's id form (`--op`, `--exec`, `--depends-on`): 1-128 chars of [A-Za-z0-9._:-]. */
export function checkId(text: string, flag: string): string {
  if (!ID_RE.test(text)) throw new LedgerError('USAGE', `--${flag} must be 1-128 chars of [A-Za-z0-9._:-], got "${text}"`);
  return text;
}

/** At most `max` characters, counted as the schema counts them (code points, record.ts charCount). */
export function checkLength(value: string, flag: string, max: number): string {
  // A library caller's value is typed, not checked: a number here is refused, not counted.
  if (typeof value !== 'string') throw new LedgerError('USAGE', `--${flag} must be text, got ${typeof value}`);
  const n = charCount(value);
  if (n > max) throw new LedgerError('USAGE', `--${flag} is ${n} characters; at most ${max}`);
  return value;
}

/** A required text: present, not blank, 1-`max` characters (code points, as SPEC counts them). */
export function checkText(value: unknown, flag: string, what: string, max = 4096): string {
  if (value === undefined) throw new LedgerError('USAGE', `--${flag} is required (${what})`);
  if (typeof value !== 'string' || value.trim() === '') throw new LedgerError('USAGE', `--${flag} is empty; it must say ${what}`);
  return checkLength(value, flag, max);
}

/** The one-next-action rule (the essay's discipline, SPEC 10): exactly one next action. */
export function checkNext(value: unknown): string {
  const n = value === undefined ? 0 : Array.isArray(value) ? value.length : 1;
  if (n === 0) throw new LedgerError('USAGE', '--next is required: exactly one concrete next action ("fix toLocal() for -05:00"), for whoever comes next');
  if (n > 1) throw new LedgerError('USAGE', `--next was given ${n} times; a checkpoint names exactly one next action (put the rest in --state or --blocker)`);
  return checkText(Array.isArray(value) ? value[0] : value, 'next', 'one concrete next action');
}

/** A list: at most 64 items of 1-1024 characters. */
export function checkItems(values: unknown, flag: string): string[] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw new LedgerError('USAGE', `--${flag} expects a list of items`);
  if (values.length > 64) throw new LedgerError('USAGE', `--${flag} was given ${values.length} times; at most 64`);
  for (const x of values) {
    if (typeof x !== 'string' || x.trim() === '') throw new LedgerError('USAGE', `--${flag} is empty; each item must say something`);
    if (charCount(x) > 1024) throw new LedgerError('USAGE', `--${flag} "${[...x].slice(0, 30).join('')}…" is ${charCount(x)} characters; at most 1024`);
  }
  return [...values] as string[];
}

/** An outcome of SPEC 6 (`--outcome`, or another flag that takes one). */
export function checkOutcome(text: unknown, flag = 'outcome'): Outcome {
  if (typeof text !== 'string' || !(OUTCOMES as readonly string[]).includes(text)) {
    throw new LedgerError('USAGE', `--${flag} must be one of ${OUTCOMES.join(', ')}, got "${String(text)}"`);
  }
  return text as Outcome;
}

/** An evidence or invariant name (`--evidence NAME=...`, `--invariant NAME=...`). */
export function checkName(name: string, flag: string): string {
  if (!NAME_RE.test(name)) throw new LedgerError('USAGE', `--${flag}: name "${name}" must be 1-64 chars of [A-Za-z0-9._-]`);
  return name;
}

const DURATION_RE = /^(\d{1,9})(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "45m", "24h", "7d" (and "500ms") to milliseconds; USAGE naming `--flag` for anything else. */
export function parseDuration(text: string, flag: string): number {
  const m = DURATION_RE.exec(text);
  if (!m) throw new LedgerError('USAGE', `--${flag} expects a duration like 90s, 45m, 24h or 7d, got "${text}"`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

/**
 * A span a request gives as typed (`text`: "45m", from a flag or a tool argument) or in
 * milliseconds (`ms`, from a library caller): its milliseconds, within `1ms`-`max`. The refusal
 * shows it as it was given.
 */
export function checkSpan(given: { text?: unknown; ms?: unknown }, flag: string, maxMs: number, maxText: string): number | undefined {
  if (given.text !== undefined && given.ms !== undefined) throw new LedgerError('USAGE', `--${flag} is given twice (as text and in ms); give one`);
  if (given.text === undefined && given.ms === undefined) return undefined;
  const shown = given.text !== undefined ? String(given.text) : `${String(given.ms)}ms`;
  const ms = given.text !== undefined ? (typeof given.text === 'string' ? parseDuration(given.text, flag) : NaN) : given.ms;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms <= 0 || ms > maxMs) throw new LedgerError('USAGE', `--${flag} must be between 1ms and ${maxText}, got "${shown}"`);
  return ms;
}
