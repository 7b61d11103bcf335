// Key records (SPEC 7, issue 25): the auditor's own fold, at the layer each fault fails. An
// admin key of the trust file authorizes machine keys in the ledger; a key record signed by
// anyone else, an authorized key used before its record, after its revocation or for another
// agent, and "*" or `admin` through a record all fail; a floor in the middle changes nothing.
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runAudit, runAuditSyncInternal } from '../../audit/index.js';
import type { Trust } from '../../src/keys/trust.js';
import { buildLedger, signerFor, type BuiltLedger } from '../helpers/gen-ledger.js';
import { runs } from '../helpers/runs.js';
import { NOW, audit, verdict, writeLedger } from './harness.js';

type Json = Record<string, unknown>;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** What record `seq` is, when it is not the generator's default: a key record, or who signs it as whom. */
interface Step {
  key?: { action: 'add' | 'revoke'; name: string; label: string; agents: string[]; extra?: Json };
  /** Who signs (a signer label); default: the admin, 'harness'. */
  by?: string;
  agent?: string;
}

const pub = (label: string) => signerFor(label).publicKey;

/** The trust file: `harness` is an admin for any agent; `plain` is pinned, not an admin. */
function trustOf(extra: Partial<Trust['keys'][number]> = {}): Trust {
  return {
    v: 1,
    keys: [
      { name: 'harness', alg: 'ed25519', key: pub('harness'), agents: ['*'], valid_from_seq: 0, revoked_at_seq: null, admin: true, ...extra },
      { name: 'plain', alg: 'ed25519', key: pub('plain'), agents: ['*'], valid_from_seq: 0, revoked_at_seq: null },
    ],
  };
}

/** A ledger of `count` records where `steps` says what some seqs are; HEAD signed by `headBy`. */
function keyLedger(count: number, steps: Record<number, Step>, headBy = 'harness'): BuiltLedger {
  return buildLedger({
    count,
    agent: (seq) => steps[seq]?.agent ?? 'agent-1',
    edit: (u, seq) => {
      const k = steps[seq]?.key;
      if (!k) return u;
      return { v: 1, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts, kind: 'key', agent: u.agent, action: k.action, name: k.name, alg: 'ed25519', key: pub(k.label), agents: k.agents, reason: 'test', ...(k.extra ?? {}) };
    },
    signerFor: (seq) => signerFor(steps[seq]?.by ?? 'harness'),
    headSigner: signerFor(headBy),
  });
}

const add = (name: string, label: string, agents = ['codex'], extra?: Json): Step => ({ key: { action: 'add', name, label, agents, extra } });
const revoke = (name: string, label: string, agents = ['codex']): Step => ({ key: { action: 'revoke', name, label, agents } });
const by = (label: string, agent = 'codex'): Step => ({ by: label, agent });

describe('key records: keys an admin authorized', () => {
  it('passes records and HEAD signed by a key an admin authorized, for its agent, after its record', () => {
    const led = keyLedger(8, { 2: add('m1', 'm1'), 3: by('m1'), 4: by('m1'), 7: by('m1') }, 'm1');
    const r = audit(led, { trust: trustOf() });
    expect(r.ok, JSON.stringify(r.failure)).toBe(true);
  });

  it('fails a key record signed by a key that is pinned but not an admin (key-pin, at its seq)', () => {
    const led = keyLedger(6, { 2: { ...add('m1', 'm1'), by: 'plain' }, 3: by('m1') });
    expect(verdict(audit(led, { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 2, code: 'KEY_RECORD_NOT_ADMIN' });
  });

  it('fails a key record signed by a key an admin authorized (delegation is one level)', () => {
    const led = keyLedger(6, { 2: add('m1', 'm1', ['codex']), 3: { ...add('m2', 'm2'), by: 'm1', agent: 'codex' }, 4: by('m2') });
    expect(verdict(audit(led, { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 3, code: 'KEY_RECORD_NOT_ADMIN' });
  });

  it('fails an authorized key used before its record', () => {
    const led = keyLedger(6, { 2: by('m1'), 3: add('m1', 'm1') });
    expect(verdict(audit(led, { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 2, code: 'PIN_UNPINNED' });
  });

  it('fails a key from the record after its revocation on (the revocation itself is the admin\'s)', () => {
    const led = keyLedger(8, { 2: add('m1', 'm1'), 3: by('m1'), 4: revoke('m1', 'm1'), 5: by('m1'), 6: by('m1') });
    const r = audit(led, { trust: trustOf() });
    expect(verdict(r)).toEqual({ layer: 'key-pin', seq: 5, code: 'KEY_REVOKED' });
    expect(r.findings.map((f) => f.seq)).toEqual([5, 6]);
  });

  it('fails a HEAD signed by a key revoked before HEAD\'s seq', () => {
    const led = keyLedger(6, { 2: add('m1', 'm1'), 3: by('m1'), 4: revoke('m1', 'm1') }, 'm1');
    expect(verdict(audit(led, { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: null, code: 'KEY_REVOKED' });
  });

  it('fails an authorized key signing for another agent than its record names', () => {
    const led = keyLedger(6, { 2: add('m1', 'm1', ['codex']), 3: by('m1', 'codex'), 4: by('m1', 'claude') });
    expect(verdict(audit(led, { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 4, code: 'KEY_AGENT' });
  });

  it('fails "*" or admin through a record at the schema layer', () => {
    expect(verdict(audit(keyLedger(5, { 2: add('m1', 'm1', ['*']) }), { trust: trustOf() }))).toEqual({ layer: 'schema', seq: 2, code: expect.any(String) });
    expect(verdict(audit(keyLedger(5, { 2: add('m1', 'm1', ['codex'], { admin: true }) }), { trust: trustOf() }))).toEqual({ layer: 'schema', seq: 2, code: expect.any(String) });
  });

  it('fails a second add of a key, and an add after its revoke (a revoke is final)', () => {
    expect(verdict(audit(keyLedger(6, { 2: add('m1', 'm1'), 3: add('m1b', 'm1') }), { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 3, code: 'KEY_RECORD_READD' });
    expect(verdict(audit(keyLedger(6, { 2: add('m1', 'm1'), 3: revoke('m1', 'm1'), 4: add('m1', 'm1') }), { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 4, code: 'KEY_RECORD_READD' });
  });

  it('fails a revoke of a key no record added', () => {
    expect(verdict(audit(keyLedger(5, { 2: revoke('m1', 'm1') }), { trust: trustOf() }))).toEqual({ layer: 'key-pin', seq: 2, code: 'KEY_RECORD_UNKNOWN' });
  });

  it('lets the trust file win: a record about a pinned key changes nothing', () => {
    // `plain` is pinned for any agent; an admin's revoke of it in the ledger does not revoke it.
    const led = keyLedger(6, { 2: { key: { action: 'revoke', name: 'plain', label: 'plain', agents: ['codex'] } }, 3: by('plain', 'claude') });
    expect(audit(led, { trust: trustOf() }).ok).toBe(true);
  });

  it('fails a key record by an admin key outside its own pin window', () => {
    const led = keyLedger(6, { 3: add('m1', 'm1'), 4: by('m1') });
    expect(verdict(audit(led, { trust: trustOf({ revoked_at_seq: 3 }) })).layer).toBe('key-pin');
  });
});

describe('key records: a floor in the middle', () => {
  it('carries the keys authorized at its seq, so an audit from it reaches the same verdict', () => {
    const led = keyLedger(10, { 2: add('m1', 'm1'), 3: by('m1'), 5: add('m2', 'm2', ['claude']), 6: by('m2', 'claude'), 7: by('m1'), 8: revoke('m1', 'm1') }, 'm2');
    const trust = trustOf();
    const w = writeLedger(led, trust);
    const floorPath = join(w.base, 'floor.json');
    // A floor at seq 6, as an earlier --advance would have kept it.
    writeFileSync(floorPath, JSON.stringify({
      v: 1, genesis: led.ids[0], seq: 6, id: led.ids[6], offset: led.offsets[6],
      keys: [
        { name: 'm1', key: pub('m1'), agents: ['codex'], added_at_seq: 2, added_by: led.ids[2], revoked_at_seq: null, revoked_by: null },
        { name: 'm2', key: pub('m2'), agents: ['claude'], added_at_seq: 5, added_by: led.ids[5], revoked_at_seq: null, revoked_by: null },
      ],
    }));
    const r = runAuditSyncInternal({ dir: w.dir, trust, now: NOW, floorPath, advance: true });
    expect(r.ok, JSON.stringify(r.failure)).toBe(true);
    expect(r.checked).toBe(3);
    // The advanced floor carries m1's revocation and m2, with the ids of the records that did it.
    expect(r.advanced!.keys).toEqual([
      { name: 'm1', key: pub('m1'), agents: ['codex'], added_at_seq: 2, added_by: led.ids[2], revoked_at_seq: 8, revoked_by: led.ids[8] },
      { name: 'm2', key: pub('m2'), agents: ['claude'], added_at_seq: 5, added_by: led.ids[5], revoked_at_seq: null, revoked_by: null },
    ]);
  });

  it('a floor without the keys fails closed: a key it does not carry is not accepted above it', () => {
    const led = keyLedger(8, { 2: add('m1', 'm1'), 3: by('m1'), 6: by('m1') });
    const trust = trustOf();
    const w = writeLedger(led, trust);
    const floorPath = join(w.base, 'floor.json');
    writeFileSync(floorPath, JSON.stringify({ v: 1, genesis: led.ids[0], seq: 4, id: led.ids[4], offset: led.offsets[4] }));
    expect(verdict(runAuditSyncInternal({ dir: w.dir, trust, now: NOW, floorPath }))).toEqual({ layer: 'key-pin', seq: 6, code: 'PIN_UNPINNED' });
  });
});

// The property: whatever the key records and who signs, the verdict of an audit from a floor that
// an earlier --advance kept equals the verdict of a full audit. (Only a floor that a passing
// audit kept exists: an audit that fails keeps none.)
describe('key records: the verdict with a floor equals the verdict without one', () => {
  const labels = ['m1', 'm2', 'm3'];
  const stepArb: fc.Arbitrary<Step | null> = fc.oneof(
    fc.constant(null),
    fc.record({ label: fc.constantFrom(...labels), agents: fc.subarray(['codex', 'claude'], { minLength: 1 }) }).map(({ label, agents }) => add(label, label, agents)),
    fc.constantFrom(...labels).map((l) => revoke(l, l)),
    fc.record({ label: fc.constantFrom(...labels), agent: fc.constantFrom('codex', 'claude') }).map(({ label, agent }) => by(label, agent)),
    fc.constant({ ...add('x', 'm3'), by: 'plain' }),
  );

  it('for random key records, uses and floors', () => {
    let compared = 0;
    let carried = 0;
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 12 }), fc.nat(), fc.constantFrom('harness', 'm1', 'm2'), (script, floorPick, headBy) => {
        const steps: Record<number, Step> = {};
        script.forEach((s, i) => s && (steps[i + 1] = s));
        const count = script.length + 1;
        const trust = trustOf();
        const led = keyLedger(count, steps, headBy);
        const full = audit(led, { trust });
        // The floor an earlier audit kept: the prefix through seq k, audited with --advance.
        const k = floorPick % count;
        const prefix = keyLedger(k + 1, steps, 'harness');
        const pw = writeLedger(prefix, trust);
        const floorPath = join(pw.base, 'floor.json');
        const kept = runAuditSyncInternal({ dir: pw.dir, trust, now: NOW, floorPath, advance: true });
        if (!kept.ok) return; // no floor is kept after a failed audit
        expect(kept.advanced).not.toBeNull();
        const w = writeLedger(led, trust);
        writeFileSync(join(w.base, 'floor.json'), JSON.stringify(kept.advanced));
        const fromFloor = runAuditSyncInternal({ dir: w.dir, trust, now: NOW, floorPath: join(w.base, 'floor.json') });
        // Findings below the floor are not read again (that is what a floor is for), so a fault
        // there cannot be in both; everything above it must agree.
        if (full.ok || (full.failure?.seq ?? Infinity) > k) {
          expect({ ...verdict(fromFloor), ok: fromFloor.ok }).toEqual({ ...verdict(full), ok: full.ok });
          compared++;
          if (kept.advanced!.keys?.length) carried++;
        }
      }),
      { numRuns: runs(60, 2000) },
    );
    // Not vacuous: floors were compared, and some of them carried authorized keys.
    expect(compared).toBeGreaterThan(10);
    expect(carried).toBeGreaterThan(0);
  });
});

describe('key records: the parallel audit reaches the one-thread verdict', () => {
  const big = (steps: Record<number, Step>, headBy = 'harness') => keyLedger(400, steps, headBy);
  const cases: [string, Record<number, Step>, string][] = [
    ['a key authorized early and used across every range', Object.assign({ 2: add('m1', 'm1') }, Object.fromEntries(Array.from({ length: 390 }, (_, i) => [i + 5, by('m1')]))), 'm1'],
    ['a key revoked in a later range and used after it', Object.assign({ 2: add('m1', 'm1'), 300: revoke('m1', 'm1') }, Object.fromEntries(Array.from({ length: 380 }, (_, i) => [i + 5, by('m1')]).filter(([s]) => s !== 300))), 'harness'],
    ['a key used for another agent in a later range', { 2: add('m1', 'm1'), 250: by('m1', 'claude'), 350: by('m1') }, 'harness'],
    ['a key record by a non-admin in a later range', { 2: add('m1', 'm1'), 260: { ...add('m2', 'm2'), by: 'plain' }, 270: by('m2') }, 'harness'],
  ];
  for (const [name, steps, headBy] of cases) {
    it(name, async () => {
      const trust = trustOf();
      const w = writeLedger(big(steps, headBy), trust);
      const one = runAuditSyncInternal({ dir: w.dir, trust, now: NOW });
      const many = await runAudit({ dir: w.dir, trust, now: NOW, threads: 3, minBytes: 0, workerUrl: pathToFileURL(join(ROOT, 'dist/cli/worker.js')) });
      expect({ ...verdict(many), ok: many.ok, checked: many.checked }).toEqual({ ...verdict(one), ok: one.ok, checked: one.checked });
    });
  }
});
