// A project the library writes, in a mkdtemp folder: a ledger, the key that signs it (written as
// a key file, so the CLI can write to the same project), a trust file that pins that key, and a
// clock the test moves by hand (no test waits on the real one).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Ledger, LedgerError, writeSecretKey, type Draft, type Trust } from '../../src/index.js';
import { trustEntry } from '../../src/formats.js';
import { FIXED_SEED } from '../helpers/fixed-keys.js';
import { scratch, snapshot } from '../helpers/cli.js';

/** A day before the test started: the CLI (real clock) can audit what the library wrote. */
export const T0 = Math.floor(Date.now() / 1000) * 1000 - 86_400_000;

export interface LibraryProject {
  root: string;
  dir: string;
  key: string;
  trust: Trust;
  ledger: Ledger;
  clock: { t: number };
  cleanup: () => void;
}

export function libraryProject(): LibraryProject {
  const s = scratch('ledger-library-');
  const key = join(s.dir, 'keys/harness.key');
  writeSecretKey(key, 'harness', FIXED_SEED);
  const clock = { t: T0 };
  const dir = join(s.dir, '.ledger');
  const { ledger } = Ledger.init({ dir, key, agent: 'harness', now: () => new Date(clock.t) });
  const trust: Trust = { v: 1, keys: [trustEntry('harness', ledger.head().sig.key)] };
  writeFileSync(join(s.dir, 'keys/trust.json'), JSON.stringify(trust));
  return { root: s.dir, dir, key, trust, ledger, clock, cleanup: s.cleanup };
}

/** Asserts that `call` is refused with `code` and leaves records.jsonl and HEAD byte-identical. */
export async function expectRefused(p: LibraryProject, code: string, call: () => unknown): Promise<LedgerError> {
  const before = snapshot(p.dir);
  let err: unknown = null;
  try {
    await call();
  } catch (e) {
    err = e;
  }
  expect(err, 'the call was not refused').toBeInstanceOf(LedgerError);
  expect((err as LedgerError).code, (err as Error).message).toBe(code);
  expect(snapshot(p.dir)).toEqual(before);
  return err as LedgerError;
}

export const handoff = (op: string, exec: string, outcome = 'success', agent = 'lib'): Draft =>
  ({ kind: 'handoff', agent, logical_operation_id: op, execution_id: exec, outcome, evidence: {}, invariants: {}, depends_on: [] }) as Draft;

export const intent = (op: string, exec: string, action = 'apply migration 17', agent = 'lib'): Draft =>
  ({ kind: 'intent', agent, logical_operation_id: op, execution_id: exec, action }) as Draft;

/** A record without the fields that differ between two ledgers making the same claims. */
export function claimOf(r: object): Record<string, unknown> {
  const { v: _v, seq: _s, prev_tail_hash: _p, ts: _t, sig: _g, lease_until: _l, ...rest } = r as Record<string, unknown>;
  return rest;
}
