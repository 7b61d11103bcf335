// Keys authorized inside the ledger (SPEC 7, "admin keys and key records"): the writer's fold of
// `key` records, beside the trust file's pins. Pure: no I/O (store/grants.ts reads the records).
// The auditor folds the same records with its own code (audit/keyrecords.ts): it is the
// independent second reader, and test/keys/grants.test.ts holds the two to the same answers.
//
//   - a `key` record counts only when its signer is a trust-file key with `admin: true` whose
//     pin holds for that record (agent and seq);
//   - `add` at seq s: the key is accepted for its `agents` from s + 1 on;
//   - `revoke` at seq r: rejected from r + 1 on; a revoke is final;
//   - a trust-file pin always wins over a record for the same key.
import { fromBase64url } from '../canonical.js';
import type { LedgerRecord } from '../record.js';
import { pointEncodingProblem } from '../sign.js';
import { pinProblem, type Trust, type TrustKey } from './trust.js';

/** One key a `key` record authorized: the same facts a floor carries (record.ts FloorKey). */
export interface KeyGrant {
  name: string;
  key: string;
  agents: string[];
  added_at_seq: number;
  added_by: string;
  revoked_at_seq: number | null;
  revoked_by: string | null;
}

/** The keys authorized by records, by public key. */
export type Grants = Map<string, KeyGrant>;

const short = (k: string) => (k.length > 12 ? `${k.slice(0, 12)}…` : k);

/** The trust-file entry for a key, if any. */
export function pinOf(trust: Trust, key: string): TrustKey | undefined {
  return trust.keys.find((k) => k.key === key);
}

/** Why the `key` record at `seq` does not count, or null when it does (it is then `applyKeyRecord`'s). */
export function keyRecordProblem(trust: Trust, grants: ReadonlyMap<string, KeyGrant>, r: LedgerRecord<'key'>, seq: number): string | null {
  const signer = pinOf(trust, r.sig.key);
  if (!signer || signer.admin !== true) return `the key record at seq ${seq} is signed by ${signer ? `key "${signer.name}"` : `key ${short(r.sig.key)}`}, which is not an admin key in the trust file`;
  const pin = pinProblem(trust, r.sig.key, seq, r.agent);
  if (pin) return `the key record at seq ${seq}: ${pin}`;
  const raw = fromBase64url(r.key, 32);
  const enc = raw ? pointEncodingProblem(raw) : 'not 32 bytes';
  if (enc) return `the key record at seq ${seq} names a key that cannot be authorized: ${enc}`;
  // SPEC 7: a trust-file pin always wins; a record about a pinned key changes nothing.
  if (pinOf(trust, r.key)) return null;
  const had = grants.get(r.key);
  if (r.action === 'add') {
    // Policy: one authorization per key, ever. A second add would make its agents ambiguous,
    // and an add after a revoke would undo a revoke, which SPEC 7 makes final.
    if (had) return `the key record at seq ${seq} adds key ${short(r.key)}, which seq ${had.added_at_seq} already ${had.revoked_at_seq === null ? 'authorized' : `authorized and seq ${had.revoked_at_seq} revoked (a revoke is final)`}`;
    // Policy: names are unique among the keys a record authorized and did not revoke, so
    // `trust revoke NAME` always means one key.
    for (const g of grants.values()) {
      if (g.revoked_at_seq === null && g.name === r.name) return `the key record at seq ${seq} adds a key named "${r.name}", a name seq ${g.added_at_seq} already gave another key`;
    }
    return null;
  }
  if (!had) return `the key record at seq ${seq} revokes key ${short(r.key)}, which no key record authorized`;
  if (had.revoked_at_seq !== null) return `the key record at seq ${seq} revokes key ${short(r.key)} again (seq ${had.revoked_at_seq} revoked it)`;
  if (had.name !== r.name) return `the key record at seq ${seq} revokes key ${short(r.key)} as "${r.name}", but it was authorized as "${had.name}"`;
  return null;
}

/** Applies a `key` record that counts (keyRecordProblem said null). */
export function applyKeyRecord(trust: Trust, grants: Grants, r: LedgerRecord<'key'>, seq: number, id: string): void {
  if (pinOf(trust, r.key)) return;
  if (r.action === 'add') {
    grants.set(r.key, { name: r.name, key: r.key, agents: [...r.agents], added_at_seq: seq, added_by: id, revoked_at_seq: null, revoked_by: null });
  } else {
    const had = grants.get(r.key)!;
    grants.set(r.key, { ...had, revoked_at_seq: seq, revoked_by: id });
  }
}

/**
 * Why `key` may not sign for `agent` at `seq` under the trust file and the keys records
 * authorized, or null when it may (SPEC 7). Agent null: HEAD (only the seq window applies).
 * `grants` may be the fold through any seq at or past `seq`: a key's window is one interval,
 * fixed by its add and its revoke.
 */
export function acceptProblem(trust: Trust, grants: ReadonlyMap<string, KeyGrant> | null, key: string, seq: number, agent: string | null): string | null {
  if (pinOf(trust, key)) return pinProblem(trust, key, seq, agent);
  const g = grants?.get(key);
  if (!g) return `key ${key} is not pinned in the trust file nor authorized by an admin's key record`;
  if (seq <= g.added_at_seq) return `key "${g.name}" is authorized from seq ${g.added_at_seq + 1} (by the key record at seq ${g.added_at_seq})`;
  if (g.revoked_at_seq !== null && seq > g.revoked_at_seq) return `key "${g.name}" was revoked at seq ${g.revoked_at_seq}`;
  if (agent !== null && !g.agents.includes(agent)) return `key "${g.name}" may not sign for agent "${agent}" (authorized for: ${g.agents.join(', ')})`;
  return null;
}

/** True when the trust file names an admin key (only then can a record authorize anything). */
export function hasAdmin(trust: Trust): boolean {
  return trust.keys.some((k) => k.admin === true);
}

/**
 * Policy: the name a machine's key is authorized under when nobody chose one: `machine-` and the key's
 * first eight characters (a key name is 1-64 of [A-Za-z0-9._@-], so "_" reads as ".").
 * Deterministic, so the line `init --remote` prints and the one a refused write prints agree.
 */
export function machineName(key: string): string {
  return `machine-${key.slice(0, 8).replace(/_/g, '.')}`;
}

/** The exact command an admin runs, anywhere, to authorize `key` for `agents` (SPEC 7). */
export function authorizeCommand(key: string, agents: readonly string[]): string {
  return `ledger trust add ${key} --name ${machineName(key)} --agents ${agents.join(',')} --reason "new machine"`;
}
