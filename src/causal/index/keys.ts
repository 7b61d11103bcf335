// The index keys of a record: under which keys the causal layer finds it (view.ts asks by these).
// A NUL separates the namespace from the value: neither op ids nor digests contain one.
import type { LedgerRecord } from '../../record.js';

export const opKey = (op: string) => `o\0${op}`;
export const idKey = (id: string) => `i\0${id}`;
export const revokeKey = (target: string) => `r\0${target}`;
export const consumeKey = (handoff: string) => `c\0${handoff}`;
/** Retry identity (retry.ts): one operation's one execution's records of one kind. */
export const identityKey = (kind: string, op: string, exec: string) => `x\0${kind}\0${op}\0${exec}`;

/**
 * The keys under which a record is found. Checkpoints are found only by id: nothing here needs
 * them by op. With `id` null, all but the id key (see RecordIndex's unhashed tail).
 */
export function keysOf(record: LedgerRecord, id: string | null): string[] {
  const keys = id === null ? [] : [idKey(id)];
  const r = record as LedgerRecord & Record<string, unknown>;
  switch (record.kind) {
    case 'start':
    case 'intent':
      keys.push(opKey(String(r.logical_operation_id)));
      if (record.kind === 'intent') keys.push(identityKey(record.kind, String(r.logical_operation_id), String(r.execution_id)));
      break;
    case 'handoff':
    case 'finish':
      keys.push(opKey(String(r.logical_operation_id)));
      if (record.kind === 'handoff') keys.push(identityKey(record.kind, String(r.logical_operation_id), String(r.execution_id)));
      break;
    case 'revoke':
      keys.push(revokeKey(String(r.target)));
      break;
    case 'consume':
      keys.push(consumeKey(String(r.handoff)));
      break;
    default:
      break;
  }
  return keys;
}
