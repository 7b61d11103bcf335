// `ledger status [--agent A]`: what an arriving agent reads first (SPEC 10, issue 14 item 4). Every
// open work item (owned or released) with its owner, its lease (live with the time left, lapsed
// and how long ago, or released), the age of its last checkpoint and that checkpoint's next
// action; then the intents still waiting for an outcome and the ambiguous or timed-out outcomes
// nothing resolved. A's own items come first. Pure: the records and `now` are passed in; built
// as data (the --json output, documented in docs/handoff-log.md) and then shaped into aligned columns.
import { formatTable } from '../text/table.js';
import { leaseLive, span } from './lease.js';
import { clipCell, fitLines, oneLine } from '../text/lines.js';
import type { OutcomeFold, PendingIntent, UnresolvedOutcome } from './unresolved.js';
import { openItems, ownerGone, takenFrom, type OwnerGone, type TakenFrom, type WorkItem, type WorkLog } from './workitems.js';
import { quoted } from './annotations.js';
import { takeoverStep } from './next-step.js';

export interface StatusItem {
  slug: string;
  /** null while the item is released (open, unowned). */
  owner: string | null;
  /** Whether the owner is the agent who asked (`--agent`). */
  mine: boolean;
  execution_id: string;
  summary: string;
  started_at: string;
  /** live: `ms` left; lapsed: `ms` since it lapsed; released: `ms` since the release. */
  lease: { state: 'live' | 'lapsed' | 'released'; until: string | null; ms: number };
  released: { by: string; at: string; seq: number; note: string | null } | null;
  taken_over: { from: string; by: string; at: string; forced: boolean; reason: string | null } | null;
  /** The latest checkpoint of the item (null: only starts so far). */
  last_checkpoint: { seq: number; kind: 'checkpoint' | 'finish'; ts: string; age_ms: number; agent: string; next: string } | null;
  notes: { count: number; latest: { agent: string; ts: string; text: string } | null };
  /** Set when the owner is gone (its hook's session-end or interrupted note, or a lapsed lease): take it over (issue 24.4). */
  owner_gone: OwnerGone | null;
}

export interface StatusReport {
  ok: true;
  now: string;
  /** Who asked (`--agent` or $LEDGER_AGENT), or null. */
  agent: string | null;
  through: { seq: number; id: string } | null;
  items: StatusItem[];
  /** Items another agent took over from the asker in the last day, on which the asker wrote nothing since (issue 24.2). */
  taken_from_you: TakenFrom[];
  pending_intents: (PendingIntent & { age_ms: number })[];
  unresolved_outcomes: (UnresolvedOutcome & { age_ms: number })[];
}

function itemStatus(item: WorkItem, agent: string | null, now: Date): StatusItem {
  const t = now.getTime();
  // Policy: the last checkpoint (or, for a reopened item, the finish before it) that came from an
  // owning execution: a stray record's next action is not the owner's.
  const cp = item.entries.findLast((e) => e.record.kind !== 'start' && !e.stray);
  const r = item.released;
  const lease: StatusItem['lease'] = r !== null
    ? { state: 'released', until: null, ms: Math.max(0, t - Date.parse(r.ts)) }
    : leaseLive(item.lease_until!, now)
      ? { state: 'live', until: item.lease_until, ms: Date.parse(item.lease_until!) - t }
      : { state: 'lapsed', until: item.lease_until, ms: t - Date.parse(item.lease_until!) };
  const o = item.taken_over;
  const latestNote = item.notes.length ? item.notes[item.notes.length - 1] : null;
  return {
    slug: item.slug,
    owner: item.owner,
    mine: agent !== null && item.owner === agent,
    execution_id: item.execution_id,
    summary: item.summary,
    started_at: item.started_at,
    lease,
    released: r ? { by: r.agent, at: r.ts, seq: r.seq, note: r.note } : null,
    taken_over: o ? { from: o.agent, by: o.by, at: o.at, forced: o.forced === true, reason: o.reason ?? null } : null,
    last_checkpoint: cp && cp.record.kind !== 'start'
      ? { seq: cp.seq, kind: cp.record.kind, ts: cp.record.ts, age_ms: Math.max(0, t - Date.parse(cp.record.ts)), agent: cp.record.agent, next: cp.record.next }
      : null,
    notes: { count: item.notes.length, latest: latestNote ? { agent: latestNote.agent, ts: latestNote.ts, text: latestNote.text } : null },
    owner_gone: ownerGone(item, now, leaseLive),
  };
}

/** The status as of `now` from a folded work log and the outcome fold. */
export function statusOf(log: WorkLog, outcomes: OutcomeFold, agent: string | null, now: Date): StatusReport {
  const t = now.getTime();
  const items = openItems(log).map((i) => itemStatus(i, agent, now));
  // Policy: the asker's own items first (openItems is by slug, and the sort is stable), then the
  // rest by slug; released items are nobody's, so they never count as the asker's own.
  items.sort((a, b) => Number(b.mine) - Number(a.mine));
  const age = (ts: string) => Math.max(0, t - Date.parse(ts));
  return {
    ok: true,
    now: now.toISOString(),
    agent,
    through: log.through,
    items,
    taken_from_you: agent === null ? [] : takenFrom(log, agent, t - TAKEN_FROM_WINDOW_MS),
    pending_intents: outcomes.pendingIntents().map((p) => ({ ...p, age_ms: age(p.ts) })),
    unresolved_outcomes: outcomes.unresolvedOutcomes().map((u) => ({ ...u, age_ms: age(u.ts) })),
  };
}

/** Policy: a returning owner is told about items taken over from it in the last day. */
export const TAKEN_FROM_WINDOW_MS = 24 * 3_600_000;

/** "fix-tz was taken over from you by codex at T (forced: "reason"); now finished (success) by codex". */
export function takenFromLine(t: TakenFrom): string {
  const now = t.status === 'finished' ? `finished (${t.outcome}) by ${t.owner}: nothing left for you on it; do not checkpoint or restart it` : t.owner === null ? 'released since, nobody owns it' : `owned by ${t.owner} now`;
  return `${t.slug} was TAKEN OVER from you by ${t.by} at ${t.at}${t.forced ? ' while your lease was live' : ''}${t.reason !== null ? `: ${quoted(oneLine(t.reason, 160))}` : ''}; ${now}`;
}

/** Policy: the text form lists at most this many rows per section; --json has every one. */
export const STATUS_MAX_ROWS = 30;

/**
 * The narrowest a last column is kept in the table at a terminal's width; below it, the column
 * goes under each row as a line of its own (`next: ...`), whole, wrapped by fitLines.
 */
const MIN_LAST_COLUMN = 24;
/** The narrowest the first column (the item's slug) is cut to when the table is still too wide; the whole slug is then on the line under the row. */
const MIN_FIRST_COLUMN = 12;

function section<T>(title: string, rows: T[], header: string[], row: (x: T) => string[], extra: (x: T) => string[] = () => [], width?: number, lastMax = Infinity): string[] {
  if (rows.length === 0) return [`${title}: none`];
  const shown = rows.slice(0, STATUS_MAX_ROWS);
  const full = [header, ...shown.map(row)];
  const last = header.length - 1;
  const clipLast = (c: string[], max: number) => [...c.slice(0, -1), clipCell(c[last], max)];
  let cells = full.map((c, i) => (i === 0 ? c : clipLast(c, lastMax)));
  let under: (string | null)[] = cells.map(() => null);
  if (width !== undefined) {
    // Issue 26: at a terminal's width, the last column is cut to what is left of the line (with
    // a `…`), or, when that is too little to read, goes under its row, whole (fitLines wraps
    // it); and when even the other columns are too wide, the first is cut, and said whole there.
    const tableWidth = (t: string[][]) => formatTable(t).reduce((m, l) => Math.max(m, [...l.trimEnd()].length), 0);
    const room = width - 2 - tableWidth(cells.map((c) => c.slice(0, -1))) - 2;
    if (room >= MIN_LAST_COLUMN) cells = full.map((c, i) => (i === 0 ? c : clipLast(c, Math.min(room, lastMax))));
    else {
      cells = full.map((c) => c.slice(0, -1));
      const over = tableWidth(cells) - (width - 2);
      const firstMax = Math.max(MIN_FIRST_COLUMN, Math.max(...cells.map((c) => [...c[0]].length)) - Math.max(0, over));
      under = full.map((c, i) => (i === 0 ? null : `${[...c[0]].length > firstMax ? `${c[0]}: ` : ''}${header[last].toLowerCase()}: ${c[last]}`));
      cells = cells.map((c, i) => (i === 0 ? c : [clipCell(c[0], firstMax), ...c.slice(1)]));
    }
  }
  const table = formatTable(cells).map((line) => line.trimEnd());
  const out = [`${title}: ${rows.length}`, `  ${table[0]}`];
  shown.forEach((x, i) => out.push(`  ${table[i + 1]}`, ...(under[i + 1] !== null ? [`      ${under[i + 1]}`] : []), ...extra(x).map((l) => `      ${l}`)));
  if (rows.length > shown.length) out.push(`  … (${rows.length - shown.length} more; --json lists all)`);
  return out;
}

const ago = (ms: number) => `${span(ms)} ago`;

export function leaseCell(l: StatusItem['lease']): string {
  if (l.state === 'live') return `live, ${span(l.ms)} left`;
  if (l.state === 'lapsed') return `LAPSED ${ago(l.ms)}`;
  return `released ${ago(l.ms)}`;
}

/** The NEXT cell's most, quotes included, when it stays in the table (the text cut with a `…`). */
const NEXT_CELL = 72;

/** The text form: aligned columns, a loud line under an item that was taken over. */
export function formatStatus(s: StatusReport, width?: number): string[] {
  const who = s.agent && s.items.some((i) => i.mine) ? `, ${s.agent}'s own first` : '';
  // Policy (issue 26): "through seq N" is the work log's last record, not HEAD; said so.
  const out = [`status at ${s.now}, work log through seq ${s.through?.seq ?? 0}`];
  out.push(...section(`open work items${who}`, s.items, ['ITEM', 'OWNER', 'LEASE', 'LAST CHECKPOINT', 'NEXT'], (i) => [
    i.slug,
    i.owner === null ? `nobody (released by ${i.released!.by})` : i.mine ? `${i.owner} (you)` : i.owner,
    leaseCell(i.lease),
    i.last_checkpoint ? `${ago(i.last_checkpoint.age_ms)}${i.last_checkpoint.agent !== i.owner ? ` by ${i.last_checkpoint.agent}` : ''}${i.last_checkpoint.kind === 'finish' ? ' (a finish)' : ''}` : 'none yet',
    i.last_checkpoint ? quoted(oneLine(i.last_checkpoint.next, 300)) : `(summary) ${quoted(oneLine(i.summary, 300))}`,
  ], (i) => [
    ...(i.taken_over ? [`TAKEN OVER from ${i.taken_over.from} by ${i.taken_over.by}${i.taken_over.forced ? ' (live lease)' : ''}${i.taken_over.reason !== null ? `: ${quoted(oneLine(i.taken_over.reason, 100))}` : ''}`] : []),
    ...(i.released?.note ? [`released by ${i.released.by}: ${quoted(oneLine(i.released.note, 100))}`] : []),
    ...(i.notes.latest ? [`note by ${i.notes.latest.agent}${i.notes.count > 1 ? ` (latest of ${i.notes.count})` : ''}: ${quoted(oneLine(i.notes.latest.text, 100))}`] : []),
    ...(i.owner_gone && !i.mine && i.owner !== null ? [`OWNER GONE: ${takeoverStep(i.slug, i.owner, i.owner_gone, new Date(s.now), 'cli')}`] : []),
  ], width, NEXT_CELL));
  for (const t of s.taken_from_you) out.push(takenFromLine(t));
  out.push(...section('pending intents (no outcome since)', s.pending_intents, ['OPERATION', 'EXECUTION', 'AGENT', 'AGE', 'ACTION'], (p) => [
    p.logical_operation_id, p.execution_id, p.agent, ago(p.age_ms), oneLine(p.action, 70),
  ], undefined, width));
  out.push(...section('unresolved outcomes (ambiguous or timeout, no success or cancel since)', s.unresolved_outcomes, ['OPERATION', 'EXECUTION', 'OUTCOME', 'AGENT', 'AGE', 'RECORD'], (u) => [
    u.logical_operation_id, u.execution_id, u.outcome, u.agent, ago(u.age_ms), `seq ${u.seq} (${u.kind})`,
  ], undefined, width));
  if (s.agent && !s.items.some((i) => i.mine)) out.push(`${s.agent} owns no open item: \`ledger start SLUG\` takes one (a released one needs no --takeover)`);
  return width === undefined ? out : fitLines(out, width);
}
