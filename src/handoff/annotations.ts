// How a takeover, a release and a note read, wherever they are shown (HANDOFF.md, HANDOFF.yml,
// resume, status), so the four say the same thing in the same words (issue 14). Pure; the
// text a record carries is cleaned (plainText/oneLine) before it is placed in a line.
import { plainText } from './excerpt.js';
import { oneLine, shortId } from './text.js';
import type { Annotation, Note, Release, WorkItem } from './workitems.js';

type TakenOver = NonNullable<WorkItem['taken_over']>;

/** "from claude by codex at T while its lease was live: <reason>". */
export function takeoverText(t: TakenOver, max = 300): string {
  const live = t.forced ? ' while its lease was live' : ` after its lease lapsed at ${t.lease_until}`;
  return `from ${t.agent} by ${t.by} at ${t.at}${live}${t.reason !== undefined ? `: ${oneLine(t.reason, max)}` : ''}`;
}

/** "TAKEN OVER from claude by codex ...: <reason>": loud on purpose. */
export function takeoverLine(t: TakenOver, max = 300): string {
  return `TAKEN OVER ${takeoverText(t, max)}`;
}

/** "RELEASED by claude at T: <note>": open, unowned, the next start takes it. */
export function releaseLine(r: Release, max = 300): string {
  return `RELEASED by ${r.agent} at ${r.ts}, nobody owns it (the next \`ledger start\` takes it without --takeover)${r.note !== null ? `: ${oneLine(r.note, max)}` : ''}`;
}

export function noteLine(n: Note, max = 300): string {
  return `${n.ts} note by ${n.agent}: ${oneLine(n.text, max)}`;
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

/** A release or note as a HANDOFF.md log entry (the same shape as the workflow's entries). */
export function annotationEntryLines(a: Annotation): string[] {
  const out = [`### ${a.ts} · ${a.agent} · ${a.kind} · ${a.slug}`, '', `- **Record:** seq ${a.seq}, ${shortId(a.id)}…${a.kind === 'release' ? `, execution ${a.execution_id}` : ''}`];
  if (a.stray) out.push(a.kind === 'release' ? '- **Not from the owning execution:** written around the CLI; it changed no ownership' : '- **No such work item then:** written around the CLI');
  const text = a.kind === 'note' ? a.text : a.note;
  const label = a.kind === 'note' ? 'Note' : 'Released';
  if (text === null) out.push(`- **${label}:** handed back without a note; open, nobody owns it`);
  else {
    const lines = plainText(text).replace(/\n+$/, '').split('\n');
    out.push(lines.length === 1 ? `- **${label}:** ${lines[0]}` : `- **${label}:**`, ...(lines.length === 1 ? [] : lines.map((l) => (l === '' ? '' : `  ${l}`))));
  }
  return out;
}
