// Three fixed records built by hand from SPEC 4-6 with the fixed test key: a genesis, a handoff
// with evidence, invariants and depends_on, and the HEAD that publishes both. test/canonical.test.ts
// pins their bytes and ids; other tests may use them as known-good inputs.
import { canonicalLine, digestOf, headDigest, recordId } from '../../src/canonical.js';
import type { Head, LedgerRecord } from '../../src/record.js';
import { makeSig } from '../../src/sign.js';
import { fixedSigner } from './fixed-keys.js';

export function goldenGenesis(): LedgerRecord<'genesis'> {
  const unsigned = {
    v: 1 as const,
    seq: 0,
    prev_tail_hash: null,
    ts: '2026-11-29T17:00:00.000Z',
    kind: 'genesis' as const,
    agent: 'harness',
    nonce: 'AAECAwQFBgcICQoLDA0ODw', // bytes 0x00..0x0f
    name: 'golden',
  };
  return { ...unsigned, sig: makeSig('record', recordId(unsigned), fixedSigner()) };
}

export function goldenHandoff(): LedgerRecord<'handoff'> {
  const unsigned = {
    v: 1 as const,
    seq: 1,
    prev_tail_hash: recordId(goldenGenesis()),
    ts: '2026-11-29T17:05:00.000Z',
    kind: 'handoff' as const,
    agent: 'agent-a',
    logical_operation_id: 'migrate_schema_17',
    execution_id: 'execution_002',
    outcome: 'success' as const,
    evidence: {
      schema: { digest: digestOf('CREATE TABLE t (id integer);\n'), source: 'file:db/schema.sql' },
      test_log: { digest: digestOf('42 passed\n'), source: 'cmd:npm test' },
    },
    invariants: {
      tests_pass: { ok: true, detail: '42 passed, 0 failed' },
      no_data_loss: { ok: false, detail: 'not checked: no prod snapshot' },
    },
    depends_on: [{ logical_operation_id: 'backup_db', outcome: 'success' as const }],
    note: 'schema migrated – café ☕', // non-ASCII, so the UTF-8 bytes are pinned too
  };
  return { ...unsigned, sig: makeSig('record', recordId(unsigned), fixedSigner()) };
}

export function goldenHead(): Head {
  const size = Buffer.byteLength(canonicalLine(goldenGenesis()) + canonicalLine(goldenHandoff()), 'utf8');
  const unsigned = {
    v: 1 as const,
    genesis: recordId(goldenGenesis()),
    seq: 1,
    tail: recordId(goldenHandoff()),
    size,
    ts: '2026-11-29T17:05:00.001Z',
  };
  return { ...unsigned, sig: makeSig('head', headDigest(unsigned), fixedSigner()) };
}
