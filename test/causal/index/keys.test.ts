// src/causal/index/keys.ts: the keys under which the causal layer finds each kind of record.
import { describe, expect, it } from 'vitest';
import { consumeKey, idKey, identityKey, keysOf, opKey, revokeKey } from '../../../src/causal/index/keys.js';
import type { LedgerRecord } from '../../../src/record.js';

describe('keys', () => {
  it('file each kind where the causal layer looks for it', () => {
    const base = { v: 1, seq: 1, prev_tail_hash: null, ts: '', agent: 'a', sig: {} };
    const id = 'sha256:' + 'a'.repeat(64);
    const t = 'sha256:' + 'b'.repeat(64);
    expect(keysOf({ ...base, kind: 'intent', logical_operation_id: 'o', execution_id: 'e', action: 'x' } as unknown as LedgerRecord, id)).toEqual([idKey(id), opKey('o'), identityKey('intent', 'o', 'e')]);
    expect(keysOf({ ...base, kind: 'revoke', target: t, reason: 'r' } as unknown as LedgerRecord, id)).toEqual([idKey(id), revokeKey(t)]);
    expect(keysOf({ ...base, kind: 'consume', handoff: t } as unknown as LedgerRecord, id)).toEqual([idKey(id), consumeKey(t)]);
    expect(keysOf({ ...base, kind: 'checkpoint', logical_operation_id: 'o' } as unknown as LedgerRecord, id)).toEqual([idKey(id)]);
  });
});
