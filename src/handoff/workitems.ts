// The work items, derived from the ledger alone: a fold over the start/checkpoint/finish records
// in seq order. Pure: the same records always give the same state, which is what makes the views
// deterministic and lets ownership be decided under the writer lock from the published chain.
//
// Rules of the fold (no verb and no Ledger method writes a record that breaks them, but a record written
// with the formats alone, or by an older version, can):
//   start       makes its agent the owner under a new execution, open, with the start's lease
//   checkpoint  of the owning execution (same agent, same execution_id) renews the lease
//   finish      of the owning execution closes the item (status finished, no lease)
// Policy: a checkpoint or finish that does not come from the owning execution of an open item
// is kept in the log (it is in the ledger, and the views show it, marked) but changes nothing:
// ownership follows only the records the CLI's rules allow.
import type { LedgerRecord, Outcome } from '../record.js';
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

export interface WorkItem {
  slug: string;
  status: 'open' | 'finished';
  /** The agent of the current execution (open) or of the one that finished it. */
  owner: string;
  execution_id: string;
  summary: string;
  started_at: string;
  /** The current lease's end; null once finished. */
  lease_until: string | null;
  outcome: Outcome | null;
  /** Every record of this slug, oldest first. */
  entries: Entry[];
}

export interface WorkLog {
  genesis: string | null;
  /** The last start/checkpoint/finish record folded (or the genesis when there is none). */
  through: { seq: number; id: string } | null;
  /** Every work-item record of the ledger, oldest first. */
  entries: Entry[];
  items: Map<string, WorkItem>;
}

export function isWorkRecord(r: LedgerRecord): r is WorkRecord {
  return r.kind === 'start' || r.kind === 'checkpoint' || r.kind === 'finish';
}

/** Folds published records (oldest first); `maxSeq` stops the fold there (for `render --check`). */
export function foldWorkLog(records: Iterable<RecordAt>, maxSeq = Infinity): WorkLog {
  const log: WorkLog = { genesis: null, through: null, entries: [], items: new Map() };
  for (const at of records) {
    if (at.seq > maxSeq) break;
    const r = at.record;
    if (r.kind === 'genesis') {
      log.genesis = at.id;
      log.through = { seq: at.seq, id: at.id };
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
