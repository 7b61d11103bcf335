// The writer's fold of key records (src/keys/grants.ts) and the auditor's own (audit/keyrecords.ts)
// are two implementations of SPEC 7 on purpose (the auditor is the independent second reader);
// this property holds them to the same answers: which key records count, and which key may sign
// for which agent at which seq.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldKeyRecord, grantFault, keyRecordFault, type KeyTable } from '../../audit/keyrecords.js';
import { acceptProblem, applyKeyRecord, authorizeCommand, keyRecordProblem, machineName, type Grants } from '../../src/keys/grants.js';
import type { Trust, TrustKey } from '../../src/keys/trust.js';
import type { LedgerRecord } from '../../src/record.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { runs } from '../helpers/runs.js';

const pub = (l: string) => signerFor(l).publicKey;
const labels = ['admin', 'plain', 'm1', 'm2', 'm3'];

const trust: Trust = {
  v: 1,
  keys: [
    { name: 'admin', alg: 'ed25519', key: pub('admin'), agents: ['ops'], valid_from_seq: 0, revoked_at_seq: 30, admin: true },
    { name: 'plain', alg: 'ed25519', key: pub('plain'), agents: ['*'], valid_from_seq: 0, revoked_at_seq: null },
  ],
};
const pins = new Map<string, TrustKey>(trust.keys.map((k) => [k.key, k]));

function keyRecord(seq: number, signer: string, agent: string, action: 'add' | 'revoke', label: string, name: string, agents: string[]): LedgerRecord<'key'> {
  return { v: 1, seq, prev_tail_hash: null, ts: '2026-11-29T12:00:00.000Z', kind: 'key', agent, action, name, alg: 'ed25519', key: pub(label), agents, reason: 'r', sig: { alg: 'ed25519', key: pub(signer), value: '' } } as LedgerRecord<'key'>;
}

describe('the writer\'s fold and the auditor\'s agree', () => {
  const op = fc.record({
    signer: fc.constantFrom('admin', 'admin', 'plain', 'm1'),
    agent: fc.constantFrom('ops', 'codex'),
    action: fc.constantFrom<'add' | 'revoke'>('add', 'revoke'),
    label: fc.constantFrom(...labels),
    name: fc.constantFrom('a', 'b', 'c'),
    agents: fc.subarray(['codex', 'claude'], { minLength: 1 }),
  });
  it('on which key records count and which keys may sign', () => {
    let counted = 0;
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), fc.array(fc.record({ label: fc.constantFrom(...labels), seq: fc.nat(40), agent: fc.option(fc.constantFrom('codex', 'claude', 'ops'), { nil: null }) }), { maxLength: 20 }), (ops, uses) => {
        const grants: Grants = new Map();
        const table: KeyTable = new Map();
        ops.forEach((o, i) => {
          const seq = i * 3 + 1;
          const r = keyRecord(seq, o.signer, o.agent, o.action, o.label, o.name, o.agents);
          // The auditor checks the signer's own pin in the ordinary key-pin check; the writer's
          // keyRecordProblem includes it: compare the two as a whole.
          const signerOk = acceptProblem(trust, grants, r.sig.key, seq, r.agent) === null;
          const writer = keyRecordProblem(trust, grants, r, seq) === null;
          const auditor = signerOk && keyRecordFault(pins, table, r, seq) === null;
          expect(writer).toBe(auditor);
          if (writer) {
            counted++;
            applyKeyRecord(trust, grants, r, seq, `id${seq}`);
            foldKeyRecord(pins, table, r, seq, `id${seq}`);
          }
        });
        for (const u of uses) {
          const key = pub(u.label);
          const writer = acceptProblem(trust, grants, key, u.seq, u.agent) === null;
          const auditor = pins.has(key) ? acceptProblem(trust, null, key, u.seq, u.agent) === null : grantFault(table, key, u.seq, u.agent) === null;
          expect(writer).toBe(auditor);
          if (writer && !pins.has(key)) accepted++;
        }
      }),
      { numRuns: runs(300, 20000) },
    );
    expect(counted).toBeGreaterThan(20);
    expect(accepted).toBeGreaterThan(5);
  });
});

describe('the authorize line', () => {
  it('is one exact command, with a name a key name may be', () => {
    const key = pub('m1');
    expect(authorizeCommand(key, ['codex', 'claude'])).toBe(`ledger trust add ${key} --name ${machineName(key)} --agents codex,claude --reason "new machine"`);
    expect(machineName('ab_cd-EFxyz')).toBe('machine-ab.cd-EF');
    expect(machineName(key)).toMatch(/^[A-Za-z0-9._@-]{1,64}$/);
  });
});
