// The auditor's own fold of `key` records (SPEC 7, "admin keys and key records"). It is written
// here, apart from the writer's (src/keys/grants.ts), on purpose: the auditor is the independent
// second reader, and test/audit/keyrecords.test.ts holds the two folds to the same answers.
//
// A `key` record counts only when its signer is a trust-file key marked `admin: true` whose pin
// holds at the record's seq for its agent. `add` at s: accepted for its agents from s + 1;
// `revoke` at r: rejected from r + 1, for good. A trust-file pin always wins over a record for the
// same key. Each authorized key's acceptance is one interval (s, r], so the fold's state is a map
// of keys to intervals: small, and exactly what a floor carries (record.ts FloorKey).
import { fromBase64url } from '../src/canonical.js';
import type { FloorKey, LedgerRecord, TrustFloor } from '../src/record.js';
import { pointEncodingProblem } from '../src/sign.js';
import type { Trust, TrustKey } from '../src/keys/trust.js';

/** The keys authorized by records so far, by public key. */
export type KeyTable = Map<string, FloorKey>;

export interface KeyFault { code: string; reason: string }

/** The table a floor carries (empty for a floor without `keys`, or no floor). */
export function tableFromFloor(floor: TrustFloor | null): KeyTable {
  const t: KeyTable = new Map();
  for (const k of floor?.keys ?? []) t.set(k.key, { ...k, agents: [...k.agents] });
  return t;
}

/** The table as a floor writes it, in the order keys were added. */
export function tableToFloor(t: KeyTable): FloorKey[] {
  return [...t.values()].sort((a, b) => a.added_at_seq - b.added_at_seq);
}

const abbrev = (k: string) => `${k.slice(0, 12)}…`;

/**
 * Whether the `key` record `r` at `seq` counts; its fault otherwise. `pins` is the trust file
 * indexed by key (keypin.ts).
 */
export function keyRecordFault(pins: ReadonlyMap<string, TrustKey>, table: KeyTable, r: LedgerRecord<'key'>, seq: number): KeyFault | null {
  const signer = pins.get(r.sig.key);
  // Policy: a key record that does not count is a key-pin finding at its seq, not silently
  // skipped: a machine's key signing key records is exactly what delegation must not allow.
  if (signer === undefined || signer.admin !== true) {
    return { code: 'KEY_RECORD_NOT_ADMIN', reason: `the key record at seq ${seq} is signed by ${signer ? `"${signer.name}"` : abbrev(r.sig.key)}, not by an admin key of the trust file` };
  }
  // The signer's own pin (window and agent) is the ordinary key-pin check of this record.
  const bytes = fromBase64url(r.key, 32);
  const bad = bytes === null ? 'not 32 bytes' : pointEncodingProblem(bytes);
  if (bad !== null) return { code: 'KEY_RECORD_BAD_KEY', reason: `the key record at seq ${seq} names a key that cannot sign: ${bad}` };
  // SPEC 7: a trust-file pin always wins; a record about a pinned key counts and changes nothing.
  if (pins.has(r.key)) return null;
  const known = table.get(r.key);
  if (r.action === 'add') {
    // Policy: one add per key, ever (an add after a revoke would undo a revoke, which SPEC 7
    // makes final), and a name held by one authorized key at a time (revoke is by name).
    if (known !== undefined) return { code: 'KEY_RECORD_READD', reason: `the key record at seq ${seq} adds ${abbrev(r.key)} again (added at seq ${known.added_at_seq}${known.revoked_at_seq === null ? '' : `, revoked at seq ${known.revoked_at_seq}: a revoke is final`})` };
    for (const k of table.values()) {
      if (k.revoked_at_seq === null && k.name === r.name) return { code: 'KEY_RECORD_NAME', reason: `the key record at seq ${seq} gives the name "${r.name}" that the key added at seq ${k.added_at_seq} holds` };
    }
    return null;
  }
  // Policy: a revoke names a key a record added, not yet revoked, under the name it was added as.
  if (known === undefined) return { code: 'KEY_RECORD_UNKNOWN', reason: `the key record at seq ${seq} revokes ${abbrev(r.key)}, which no key record added` };
  if (known.revoked_at_seq !== null) return { code: 'KEY_RECORD_REVOKED', reason: `the key record at seq ${seq} revokes ${abbrev(r.key)}, already revoked at seq ${known.revoked_at_seq}` };
  if (known.name !== r.name) return { code: 'KEY_RECORD_NAME', reason: `the key record at seq ${seq} revokes ${abbrev(r.key)} as "${r.name}", added as "${known.name}"` };
  return null;
}

/** Folds a `key` record that counts into the table. */
export function foldKeyRecord(pins: ReadonlyMap<string, TrustKey>, table: KeyTable, r: LedgerRecord<'key'>, seq: number, id: string): void {
  if (pins.has(r.key)) return;
  if (r.action === 'add') table.set(r.key, { name: r.name, key: r.key, agents: [...r.agents], added_at_seq: seq, added_by: id, revoked_at_seq: null, revoked_by: null });
  else table.set(r.key, { ...table.get(r.key)!, revoked_at_seq: seq, revoked_by: id });
}

/**
 * Whether a key the trust file does not pin may sign at `seq` for `agent` (null: HEAD) under the
 * table; its fault otherwise. Valid for any table folded through seq - 1 or later.
 */
export function grantFault(table: KeyTable, key: string, seq: number, agent: string | null): KeyFault | null {
  const g = table.get(key);
  if (g === undefined) return { code: 'PIN_UNPINNED', reason: `key ${key} is neither pinned in the trust file nor authorized by an admin's key record` };
  if (seq <= g.added_at_seq) return { code: 'KEY_NOT_YET_VALID', reason: `key "${g.name}" is authorized only from seq ${g.added_at_seq + 1}` };
  if (g.revoked_at_seq !== null && seq > g.revoked_at_seq) return { code: 'KEY_REVOKED', reason: `key "${g.name}" was revoked at seq ${g.revoked_at_seq}` };
  if (agent !== null && !g.agents.includes(agent)) return { code: 'KEY_AGENT', reason: `key "${g.name}" may not sign for agent "${agent}" (authorized for ${g.agents.join(', ')})` };
  return null;
}
