// Layer 4, key-pin (SPEC 7, SPEC 8): pinned, in its seq window, for that agent; HEAD too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pinIndex } from '../../audit/keypin.js';
import { pinProblem, type Trust } from '../../src/keys/trust.js';
import { buildLedger, signerFor } from '../helpers/gen-ledger.js';
import { runs } from '../helpers/runs.js';
import { audit, verdict } from './harness.js';

describe('key-pin: records', () => {
  it('passes a key rotation done right (old key revoked where the new one starts)', () => {
    const led = buildLedger({ count: 12, keys: [{ name: 'harness' }, { name: 'harness-2', fromSeq: 6 }] });
    expect(led.trust.keys.map((k) => [k.valid_from_seq, k.revoked_at_seq])).toEqual([[0, 6], [6, null]]);
    expect(audit(led).ok).toBe(true);
  });

  it('fails a record by a key the trust file does not pin', () => {
    const led = buildLedger({ count: 6, signerFor: (seq) => (seq === 4 ? signerFor('intruder') : null) });
    expect(verdict(audit(led))).toEqual({ layer: 'key-pin', seq: 4, code: 'PIN_UNPINNED' });
  });

  it('fails a key used at and after its revocation, naming every record', () => {
    const led = buildLedger({ count: 6, keys: [{ name: 'harness', revokedAtSeq: 3 }] });
    const r = audit(led);
    expect(verdict(r)).toEqual({ layer: 'key-pin', seq: 3, code: 'PIN_REVOKED' });
    expect(r.findings.map((f) => f.seq)).toEqual([3, 4, 5, null]); // and HEAD, signed at seq 5
  });

  it('fails a key used before its valid_from_seq', () => {
    const led = buildLedger({ count: 8, keys: [{ name: 'harness' }, { name: 'harness-2', fromSeq: 4 }] });
    const trust: Trust = { v: 1, keys: led.trust.keys.map((k) => (k.name === 'harness-2' ? { ...k, valid_from_seq: 5 } : k)) };
    expect(verdict(audit(led, { trust }))).toEqual({ layer: 'key-pin', seq: 4, code: 'PIN_NOT_YET_VALID' });
  });

  it('fails a key signing for an agent it is not pinned for', () => {
    const led = buildLedger({ count: 6, keys: [{ name: 'harness', agents: ['alice', 'bob'] }], agent: (seq) => ['alice', 'bob', 'carol'][seq % 3] });
    expect(verdict(audit(led))).toEqual({ layer: 'key-pin', seq: 2, code: 'PIN_AGENT' });
  });
});

describe('key-pin: HEAD', () => {
  it('fails a HEAD signed by an unpinned key, with seq null', () => {
    const led = buildLedger({ count: 5, headSigner: signerFor('intruder') });
    expect(verdict(audit(led))).toEqual({ layer: 'key-pin', seq: null, code: 'PIN_UNPINNED' });
  });

  it('ignores agents for HEAD: a key pinned for one agent may sign HEAD', () => {
    const led = buildLedger({ count: 5, keys: [{ name: 'harness', agents: ['agent-1'] }] });
    expect(audit(led).ok).toBe(true);
  });
});

describe('key-pin: the indexed check agrees with pinProblem (src/keys/trust.ts)', () => {
  const keys = ['k0', 'k1', 'k2', 'k3'].map((l) => signerFor(l).publicKey);
  const agentArb = fc.constantFrom('alice', 'bob', 'carol', '*');
  const trustArb = fc
    .uniqueArray(
      fc.record({
        key: fc.constantFrom(...keys.slice(0, 3)),
        agents: fc.uniqueArray(agentArb, { minLength: 1, maxLength: 3 }),
        valid_from_seq: fc.nat(20),
        revoked_at_seq: fc.option(fc.nat(25), { nil: null }),
      }),
      { minLength: 1, maxLength: 3, selector: (k) => k.key },
    )
    .map((ks): Trust => ({ v: 1, keys: ks.map((k, i) => ({ name: `k${i}`, alg: 'ed25519', ...k })) }));

  it('on random trust files, keys, seqs and agents (yes exactly when pinProblem is null)', () => {
    fc.assert(
      fc.property(trustArb, fc.constantFrom(...keys), fc.nat(30), fc.option(fc.constantFrom('alice', 'bob', 'carol'), { nil: null }), (trust, key, seq, agent) => {
        expect(pinIndex(trust)(key, seq, agent)).toBe(pinProblem(trust, key, seq, agent) === null);
      }),
      { numRuns: runs(500, 50_000) },
    );
  });
});
