// The index keys of a record: under which keys the causal layer finds it (view.ts asks by these).
// A NUL separates the namespace from the value: neither op ids nor digests contain one.
import type { LedgerRecord } from '../../record.js';

export const opKey = (op: string) => `o\0${op}`;
export const idKey = (id: string) => `i\0${id}`;
export const revokeKey = (target: string) => `r\0${target}`;
export const consumeKey = (handoff: string) => `c\0${handoff}`;
/** Retry identity (retry.ts): one operation's one execution's records of one kind. */
export const identityKey = (kind: string, op: string, exec: string) => `x\0${kind}\0${op}\0${exec}`;
/** A work item's records (start, checkpoint, finish, and any later kind that names a slug): its lease. */
export const workKey = (op: string) => `w\0${op}`;
/** One consumer's consume and consume_failed records of one operation (exactly once per operation). */
export const consumerKey = (op: string, consumer: string) => `k\0${op}\0${consumer}`;

/**
 * The keys under which a record is found. Checkpoints are found by id and as work-item records
 * (for the lease), not by op: a gate reads them only for an operation that is a work item. With
 * `id` null, all but the id key.
 */
export function keysOf(record: LedgerRecord, id: string | null): string[] {
  const keys = id === null ? [] : [idKey(id)];
  const r = record as LedgerRecord & Record<string, unknown>;
  const op = String(r.logical_operation_id);
  switch (record.kind as string) {
    case 'start':
    case 'finish':
      keys.push(opKey(op), workKey(op));
      break;
    case 'checkpoint':
      keys.push(workKey(op));
      break;
    case 'intent':
    case 'handoff':
      keys.push(opKey(op), identityKey(record.kind, op, String(r.execution_id)));
      break;
    case 'revoke':
      keys.push(revokeKey(String(r.target)));
      break;
    case 'consume':
      keys.push(consumeKey(String(r.handoff)), consumerKey(op, String(r.consumer)));
      break;
    case 'consume_failed':
      keys.push(consumerKey(op, String(r.consumer)));
      break;
    default:
      // A later kind that names a work item (a release, a note: SPEC 10) may change its lease.
      if (typeof r.logical_operation_id === 'string') keys.push(workKey(op));
      break;
  }
  return keys;
}
