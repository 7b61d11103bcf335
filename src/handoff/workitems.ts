// The work items, derived from the ledger alone: a fold over the start/checkpoint/finish records
// (and the release/note records that annotate them, issue 14) in seq order. Pure: the same records always give the same state, which is what makes the views
// deterministic and lets ownership be decided under the writer lock from the published chain.
//
// Rules of the fold (no verb and no Ledger method writes a record that breaks them, but a record written
// with the formats alone, or by an older version, can):
//   start       makes its agent the owner under a new execution, open, with the start's lease
//   checkpoint  of the owning execution (same agent, same execution_id) renews the lease
//   finish      of the owning execution closes the item (status finished, no lease)
//   release     of the owning execution hands it back: still open, no owner, no lease; the next
//               start (anyone's) takes it without --takeover
//   note        attaches to the item; changes no ownership and no lease
// Policy: a checkpoint or finish that does not come from the owning execution of an open item
// is kept in the log (it is in the ledger, and the views show it, marked) but changes nothing:
// ownership follows only the records the CLI's rules allow.
import type { LedgerRecord, Outcome, Takeover } from '../record.js';
import type { RecordAt } from '../store/read.js';

export const WORK_KINDS = ['start', 'checkpoint', 'finish'] as const;
export type WorkKind = (typeof WORK_KINDS)[number];
export type WorkRecord = LedgerRecord<WorkKind>;

export interface Entry {
  seq: number;
  id: string;
  record: WorkRecord;
  /** True when the record did not come from the owning execution (see the fold's Policy). */
  stray: boolean;
}

/** A release record (`ledger release`): the owner handed the item back. */
export interface Release {
  kind: 'release';
  seq: number;
  id: string;
  ts: string;
  agent: string;
  slug: string;
  execution_id: string;
  note: string | null;
  /** True when it did not come from the owning execution of an open item: it changed nothing. */
  stray: boolean;
}

/** A note record (`ledger note`): anyone's remark on a work item. */
export interface Note {
  kind: 'note';
  seq: number;
  id: string;
  ts: string;
  agent: string;
  slug: string;
  text: string;
  /** True when no work item of that slug existed then (written around the CLI). */
  stray: boolean;
}

/** The records beside the work itself, in the log as they came. */
export type Annotation = Release | Note;

/** How the current execution took the item from another agent (its start's `takeover`). */
export interface TakenOver extends Takeover {
  /** Who took it over (the start's agent), when, and in which record. */
  by: string;
  at: string;
  seq: number;
}

export interface WorkItem {
  slug: string;
  status: 'open' | 'finished';
  /** The agent of the current execution (open) or of the one that finished it; null while released. */
  owner: string | null;
  /** The current execution (while released: the one that released it). */
  execution_id: string;
  summary: string;
  started_at: string;
  /** The current lease's end; null once finished. */
  lease_until: string | null;
  outcome: Outcome | null;
  /** Every start/checkpoint/finish record of this slug, oldest first. */
  entries: Entry[];
  /** Set while the item is open and unowned: the release that handed it back. */
  released: Release | null;
  /** Set when the current execution's start took the item from another agent. */
  taken_over: TakenOver | null;
  /** Every note on this slug, oldest first (across reopenings). */
  notes: Note[];
}

export interface WorkLog {
  genesis: string | null;
  /** The last work-log record folded (or the genesis when there is none). */
  through: { seq: number; id: string } | null;
  /** Every start/checkpoint/finish record of the ledger, oldest first. */
  entries: Entry[];
  /** Every release and note record, oldest first (merge with `entries` by seq for one log). */
  annotations: Annotation[];
  items: Map<string, WorkItem>;
}

export function isWorkRecord(r: LedgerRecord): r is WorkRecord {
  return r.kind === 'start' || r.kind === 'checkpoint' || r.kind === 'finish';
}

/** Folds published records (oldest first); `maxSeq` stops the fold there (for `render --check`). */
export function foldWorkLog(records: Iterable<RecordAt>, maxSeq = Infinity): WorkLog {
  const log: WorkLog = { genesis: null, through: null, entries: [], annotations: [], items: new Map() };
  for (const at of records) {
    if (at.seq > maxSeq) break;
    const r = at.record;
    if (r.kind === 'genesis') {
      log.genesis = at.id;
      log.through = { seq: at.seq, id: at.id };
      continue;
    }
    if (r.kind === 'release' || r.kind === 'note') {
      log.through = { seq: at.seq, id: at.id };
      log.annotations.push(foldAnnotation(log, at.seq, at.id, r));
      continue;
    }
    if (!isWorkRecord(r)) continue;
    log.through = { seq: at.seq, id: at.id };
    const entry: Entry = { seq: at.seq, id: at.id, record: r, stray: false };
    const slug = r.logical_operation_id;
    const item = log.items.get(slug);
    if (r.kind === 'start') {
      log.items.set(slug, {
        slug,
        status: 'open',
        owner: r.agent,
        execution_id: r.execution_id,
        summary: r.summary,
        started_at: r.ts,
        lease_until: r.lease_until,
        outcome: null,
        entries: [...(item?.entries ?? []), entry],
        released: null,
        taken_over: r.takeover && r.takeover.agent !== r.agent ? { ...r.takeover, by: r.agent, at: r.ts, seq: at.seq } : null,
        notes: item?.notes ?? [],
      });
    } else {
      const owning = item !== undefined && item.status === 'open' && item.owner === r.agent && item.execution_id === r.execution_id;
      entry.stray = !owning;
      if (item) item.entries.push(entry);
      if (owning && r.kind === 'checkpoint') item.lease_until = r.lease_until;
      if (owning && r.kind === 'finish') {
        item.status = 'finished';
        item.lease_until = null;
        item.outcome = r.outcome;
      }
    }
    log.entries.push(entry);
  }
  return log;
}

/** A release changes the item only when its owning execution wrote it; a note never does. */
function foldAnnotation(log: WorkLog, seq: number, id: string, r: LedgerRecord<'release' | 'note'>): Annotation {
  const slug = r.logical_operation_id;
  const item = log.items.get(slug);
  if (r.kind === 'note') {
    const note: Note = { kind: 'note', seq, id, ts: r.ts, agent: r.agent, slug, text: r.text, stray: item === undefined };
    item?.notes.push(note);
    return note;
  }
  const owning = item !== undefined && item.status === 'open' && item.owner === r.agent && item.execution_id === r.execution_id;
  const release: Release = { kind: 'release', seq, id, ts: r.ts, agent: r.agent, slug, execution_id: r.execution_id, note: r.note ?? null, stray: !owning };
  if (owning) {
    item.owner = null;
    item.lease_until = null;
    item.released = release;
    item.taken_over = null;
  }
  return release;
}

/** The latest checkpoint or finish of an item, or null when it has only starts. */
export function latestCheckpoint(item: WorkItem): Entry | null {
  for (let i = item.entries.length - 1; i >= 0; i--) {
    const e = item.entries[i];
    if (e.record.kind !== 'start') return e;
  }
  return null;
}

/** Open items, by slug (a stable order: the views must not depend on insertion order). */
export function openItems(log: WorkLog): WorkItem[] {
  return [...log.items.values()].filter((i) => i.status === 'open').sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}
