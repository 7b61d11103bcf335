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
//
// Beside the work items, the same pass folds their operations' story (operations.ts): each
// finish, the handoffs of a work item's operation, and the consume, consume_failed and revoke
// records that name them. The fold takes a record or leaves it, deciding from the records before
// it only, and a record it leaves changes nothing (`WorkLogFold.add` says which): so a fold over
// the records it took gives the state a fold over every record gives (what fold-memo.ts keeps).
import type { LedgerRecord, NoteEvent, Outcome, Takeover } from '../record.js';
import type { RecordAt } from '../store/read.js';
import { OperationFold, type Operation } from './operations.js';

export const WORK_KINDS = ['start', 'checkpoint', 'finish'] as const;
/**
 * Every kind of record the fold may take (it takes each of the work log's, and the others only
 * where they are part of a work item's story): the fold memo holds no other (fold-memo.ts).
 */
export const WORK_FOLD_KINDS: ReadonlySet<string> = new Set(['genesis', 'start', 'checkpoint', 'finish', 'release', 'note', 'handoff', 'consume', 'consume_failed', 'revoke']);
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
  /** A hook's note for its agent: the session ended with work unrecorded, or was interrupted. */
  event: NoteEvent | null;
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
  /** The last record the fold took (or the genesis when there is none): what the views were rendered through. */
  through: { seq: number; id: string } | null;
  /** The time of the last record the fold took, the genesis aside (null: none): the views' "as of". */
  newest_ts: string | null;
  /** Every start/checkpoint/finish record of the ledger, oldest first. */
  entries: Entry[];
  /** Every release and note record, oldest first (merge with `entries` by seq for one log). */
  annotations: Annotation[];
  items: Map<string, WorkItem>;
  /** The work items' operations that have a terminal record, by slug (operations.ts). */
  operations: Map<string, Operation>;
}

export function isWorkRecord(r: LedgerRecord): r is WorkRecord {
  return r.kind === 'start' || r.kind === 'checkpoint' || r.kind === 'finish';
}

/** Folds published records (oldest first); `maxSeq` stops the fold there (for `render --check`). */
export function foldWorkLog(records: Iterable<RecordAt>, maxSeq = Infinity): WorkLog {
  const fold = new WorkLogFold();
  for (const at of records) {
    if (at.seq > maxSeq) break;
    fold.add(at);
  }
  return fold.log;
}

/** The fold, one record at a time, in seq order. */
export class WorkLogFold {
  private readonly story = new OperationFold();
  readonly log: WorkLog = { genesis: null, through: null, newest_ts: null, entries: [], annotations: [], items: new Map(), operations: this.story.operations };

  /** Folds the next record; whether the fold took it (one it did not take changed nothing). */
  add(at: RecordAt): boolean {
    const log = this.log;
    const r = at.record;
    if (r.kind === 'genesis') {
      log.genesis = at.id;
      log.through = { seq: at.seq, id: at.id };
      return true;
    }
    if (r.kind === 'release' || r.kind === 'note') {
      log.annotations.push(foldAnnotation(log, at.seq, at.id, r));
    } else if (isWorkRecord(r)) {
      const item = log.items.get(r.logical_operation_id);
      const entry = foldWork(log, at.seq, at.id, r, item);
      // A finish of a work item is its operation's attempt (one with no item then is a stray the story leaves out).
      if (r.kind === 'finish' && item !== undefined) this.story.attempt(at.seq, at.id, r, entry.stray);
    } else if (r.kind === 'handoff') {
      // Policy (operations.ts): a handoff is in the story when its operation is a work item.
      if (!log.items.has(r.logical_operation_id)) return false;
      this.story.attempt(at.seq, at.id, r, false);
    } else if (!this.story.other(at.seq, at.id, r)) return false;
    log.through = { seq: at.seq, id: at.id };
    log.newest_ts = r.ts;
    return true;
  }
}

/** A start, checkpoint or finish: the item it makes, renews, closes (or, not from its owner, only logs). */
function foldWork(log: WorkLog, seq: number, id: string, r: WorkRecord, item: WorkItem | undefined): Entry {
  const entry: Entry = { seq, id, record: r, stray: false };
  const slug = r.logical_operation_id;
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
      taken_over: r.takeover && r.takeover.agent !== r.agent ? { ...r.takeover, by: r.agent, at: r.ts, seq } : null,
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
  return entry;
}

/** A release changes the item only when its owning execution wrote it; a note never does. */
function foldAnnotation(log: WorkLog, seq: number, id: string, r: LedgerRecord<'release' | 'note'>): Annotation {
  const slug = r.logical_operation_id;
  const item = log.items.get(slug);
  if (r.kind === 'note') {
    const note: Note = { kind: 'note', seq, id, ts: r.ts, agent: r.agent, slug, text: r.text, event: r.event ?? null, stray: item === undefined };
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

/**
 * A view's open items when it shows at most `limit` (HANDOFF.yml's `active`, HANDOFF.md's open
 * items): the ones whose last start or checkpoint is newest, in slug order, and how many are
 * open in all.
 */
export function newestOpenItems(log: WorkLog, limit: number): { items: WorkItem[]; total: number } {
  const open = openItems(log);
  if (open.length <= limit) return { items: open, total: open.length };
  const last = (i: WorkItem) => i.entries[i.entries.length - 1]?.seq ?? -1;
  const newest = new Set([...open].sort((a, b) => last(b) - last(a)).slice(0, limit));
  return { items: open.filter((i) => newest.has(i)), total: open.length };
}

/** Why an item's owner is gone, so that the next agent may take it over (issue 24.4). */
export interface OwnerGone {
  /** lease-lapsed: the lease ran out; session-end / interrupted: the owner's own latest record on the item is its hook's note. */
  why: 'lease-lapsed' | 'session-ended' | 'interrupted';
  /** When (the note's ts, or the lease's end). */
  at: string;
  /** The note's seq (null for a lapsed lease). */
  seq: number | null;
  /** The note's text (what the hook recorded: the reason it ended). */
  detail: string | null;
  /** Whether the lease is still live (a takeover then needs force and a reason). */
  live: boolean;
}

/**
 * Whether the owner of an open, owned item is gone (issue 24.4): its own latest record on the
 * item (start, checkpoint or note of the current execution's owner) is a session-end or
 * interrupted note its hook wrote, or its lease lapsed. null: the owner is (as far as the ledger
 * says) still at work, or the item is finished or released.
 */
export function ownerGone(item: WorkItem, now: Date, live: (until: string, now: Date) => boolean): OwnerGone | null {
  if (item.status !== 'open' || item.owner === null || item.lease_until === null) return null;
  const owner = item.owner;
  const lastWork = item.entries.findLast((e) => !e.stray && e.record.agent === owner && e.record.execution_id === item.execution_id);
  const lastNote = item.notes.findLast((n) => n.agent === owner);
  const isLive = live(item.lease_until, now);
  if (lastNote && lastNote.event !== null && (!lastWork || lastNote.seq > lastWork.seq)) {
    return { why: lastNote.event === 'interrupted' ? 'interrupted' : 'session-ended', at: lastNote.ts, seq: lastNote.seq, detail: lastNote.text, live: isLive };
  }
  if (!isLive) return { why: 'lease-lapsed', at: item.lease_until, seq: null, detail: null, live: false };
  return null;
}

/** An item another agent took over from `agent` (and `agent` wrote nothing on it since). */
export interface TakenFrom {
  slug: string;
  by: string;
  at: string;
  seq: number;
  forced: boolean;
  reason: string | null;
  status: 'open' | 'finished';
  outcome: Outcome | null;
  /** Who holds it now (null: released), and who finished it. */
  owner: string | null;
}

/**
 * The items taken over from `agent` since `sinceMs` on which `agent` wrote nothing after the
 * takeover: what a returning owner must be told before it touches them again (issue 24.2).
 */
export function takenFrom(log: WorkLog, agent: string, sinceMs: number): TakenFrom[] {
  const out: TakenFrom[] = [];
  for (const item of log.items.values()) {
    const take = item.entries.findLast((e) => e.record.kind === 'start' && e.record.agent !== agent && e.record.takeover?.agent === agent);
    if (!take || take.record.kind !== 'start' || Date.parse(take.record.ts) < sinceMs) continue;
    const mineAfter = item.entries.some((e) => e.seq > take.seq && e.record.agent === agent) || item.notes.some((n) => n.seq > take.seq && n.agent === agent);
    if (mineAfter) continue;
    const t = take.record.takeover!;
    out.push({ slug: item.slug, by: take.record.agent, at: take.record.ts, seq: take.seq, forced: t.forced === true, reason: t.reason ?? null, status: item.status, outcome: item.outcome, owner: item.owner });
  }
  return out.sort((a, b) => b.seq - a.seq);
}
