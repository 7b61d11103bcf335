// How a takeover, a release and a note read, wherever they are shown (HANDOFF.md, HANDOFF.yml,
// resume, status), so the four say the same thing in the same words (issue 14). Pure; the
// text a record carries is made one line (oneLine) and then passed through `q`, which a
// renderer sets to make it inert in its own format (HANDOFF.md: a code span); terminal output
// is neutralised at the CLI's sinks, and HANDOFF.yml quotes what needs it.
import { oneLine } from '../text/lines.js';
import type { Note, Release, WorkItem } from './workitems.js';

/** Makes a piece of record text safe where it is placed; identity for plain text. */
export type Quote = (text: string) => string;
const asIs: Quote = (text) => text;

type TakenOver = NonNullable<WorkItem['taken_over']>;

/** "from claude by codex at T while its lease was live: <reason>". */
export function takeoverText(t: TakenOver, max = 300, q: Quote = asIs, qt: Quote = q): string {
  const live = t.forced ? ' while its lease was live' : ` after its lease lapsed at ${t.lease_until}`;
  return `from ${q(t.agent)} by ${q(t.by)} at ${t.at}${live}${t.reason !== undefined ? `: ${qt(oneLine(t.reason, max))}` : ''}`;
}

/** "TAKEN OVER from claude by codex ...: <reason>": loud on purpose. `qt` quotes the record's free text. */
export function takeoverLine(t: TakenOver, max = 300, q: Quote = asIs, qt: Quote = q): string {
  return `TAKEN OVER ${takeoverText(t, max, q, qt)}`;
}

/** "RELEASED by claude at T: <note>": open, unowned, the next start takes it. */
export function releaseLine(r: Release, max = 300, q: Quote = asIs, qt: Quote = q): string {
  return `RELEASED by ${q(r.agent)} at ${r.ts}, nobody owns it (the next \`ledger start\` takes it without --takeover)${r.note !== null ? `: ${qt(oneLine(r.note, max))}` : ''}`;
}

/**
 * SPEC 12: text an agent or person recorded reaches another agent quoted, in double quotes,
 * beside who wrote it and when; never as the tool's own instruction. Its own quotes are escaped
 * (\\"), and so is a run of backslashes that would otherwise escape one or the closing quote, so
 * it cannot close the quote and go on as the tool's words. Other backslashes are left as they
 * are: control, bidi and invisible code points are shown as escapes by the text layer (oneLine,
 * text/sanitize.ts), and doubling those would make them read differently at each sink.
 */
export const quoted: Quote = (text) => `"${text.replace(/\\+(?="|$)/g, (run) => run + run).replace(/"/g, '\\"')}"`;

export function noteLine(n: Note, max = 300, q: Quote = asIs): string {
  return `${n.ts} note by ${q(n.agent)}: ${q(oneLine(n.text, max))}`;
}

/** The data of an item's annotations for HANDOFF.yml's `active` entries (bounded: the last 3 notes). */
export function annotationData(item: WorkItem): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (item.taken_over) out.taken_over = takeoverLine(item.taken_over);
  if (item.released) out.released = releaseLine(item.released);
  if (item.notes.length) {
    out.notes = item.notes.slice(-3).map((n) => noteLine(n));
    if (item.notes.length > 3) out.notes_total = item.notes.length;
  }
  return out;
}
