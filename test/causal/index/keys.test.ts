// src/causal/index/keys.ts: the keys under which the causal layer finds each kind of record.
import { describe, expect, it } from 'vitest';
import { consumeKey, consumerKey, idKey, identityKey, keysOf, opKey, revokeKey, workKey } from '../../../src/causal/index/keys.js';
import type { LedgerRecord } from '../../../src/record.js';

describe('keys', () => {
  it('file each kind where the causal layer looks for it', () => {
    const base = { v: 1, seq: 1, prev_tail_hash: null, ts: '', agent: 'a', sig: {} };
    const id = 'sha256:' + 'a'.repeat(64);
    const t = 'sha256:' + 'b'.repeat(64);
    const k = (r: Record<string, unknown>) => keysOf({ ...base, ...r } as unknown as LedgerRecord, id);
    expect(k({ kind: 'intent', logical_operation_id: 'o', execution_id: 'e', action: 'x' })).toEqual([idKey(id), opKey('o'), identityKey('intent', 'o', 'e')]);
    expect(k({ kind: 'handoff', logical_operation_id: 'o', execution_id: 'e' })).toEqual([idKey(id), opKey('o'), identityKey('handoff', 'o', 'e')]);
    expect(k({ kind: 'revoke', target: t, reason: 'r' })).toEqual([idKey(id), revokeKey(t)]);
    expect(k({ kind: 'consume', logical_operation_id: 'o', consumer: 'c', handoff: t })).toEqual([idKey(id), consumeKey(t), consumerKey('o', 'c')]);
    expect(k({ kind: 'consume_failed', logical_operation_id: 'o', consumer: 'c', consume: t, handoff: t })).toEqual([idKey(id), consumerKey('o', 'c')]);
    // The work item's records: start and finish are also outcomes of the operation; a checkpoint only renews its lease.
    expect(k({ kind: 'start', logical_operation_id: 'o' })).toEqual([idKey(id), opKey('o'), workKey('o')]);
    expect(k({ kind: 'finish', logical_operation_id: 'o' })).toEqual([idKey(id), opKey('o'), workKey('o')]);
    expect(k({ kind: 'checkpoint', logical_operation_id: 'o' })).toEqual([idKey(id), workKey('o')]);
    // A later kind that names a slug (a release, say) is a work-item record; one that does not is found by id.
    expect(k({ kind: 'release', logical_operation_id: 'o' })).toEqual([idKey(id), workKey('o')]);
    expect(k({ kind: 'genesis', nonce: 'n' })).toEqual([idKey(id)]);
  });
});
