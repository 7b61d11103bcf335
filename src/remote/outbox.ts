// The --offline queue (SPEC 11): when the remote cannot be reached and the writer said
// --offline, the drafts it decided wait here, in the per-user state directory, not published
// and not in the local copy. `ledger sync` replays each entry through the store's transact
// (sync.ts), so every rule that depends on order is decided again on the remote's tail; what
// a rule refuses now (a `start` whose item another machine took meanwhile) is dropped and
// reported, never published.
import { LedgerError } from '../errors.js';
import type { Draft } from '../record.js';
import { readStateJson, writeStateJson, type RemotePaths } from './state.js';

export interface OutboxEntry {
  drafts: Draft[];
  /** The local HEAD the drafts were decided on. */
  decided_on: { seq: number; tail: string };
  at: string;
}

interface OutboxFile { v: 1; entries: OutboxEntry[] }

export function readOutbox(p: RemotePaths): OutboxEntry[] {
  const v = readStateJson(p.outbox) as OutboxFile | null;
  if (v === null) return [];
  if (v.v !== 1 || !Array.isArray(v.entries)) throw new LedgerError('OP_CORRUPT', `${p.outbox} is malformed`, {}, 'restore it, or remove it (its queued writes are then lost)');
  return v.entries;
}

/** Replaced whole, durably: the queue is small, and a crash leaves the old queue or the new. */
export function writeOutbox(p: RemotePaths, entries: readonly OutboxEntry[]): void {
  writeStateJson(p.outbox, { v: 1, entries });
}

export function appendOutbox(p: RemotePaths, entry: OutboxEntry): void {
  writeOutbox(p, [...readOutbox(p), entry]);
}
