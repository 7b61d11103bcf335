// `ledger trust add | revoke | list` (SPEC 7, issue 25): an admin authorizes a machine's key, or
// revokes it, with a `key` record in the ledger; no trust-file change, no commit, no pull. The
// rules are here and are decided under the writer lock on the HEAD the record is built on (as
// causal/ and handoff/ decide theirs): the store's transact appends, and its step 5b refuses a
// signer that is not an admin (KEY_NOT_ACCEPTED, exit 13) before anything is written.
import { LedgerError } from '../errors.js';
import type { Draft, Head, LedgerRecord } from '../record.js';
import type { Signer } from '../sign.js';
import { transact, type AppendResult, type StoreOptions } from '../store/append.js';
import { foldGrants, keyRecords } from '../store/grants.js';
import type { LedgerPaths } from '../store/paths.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import { pinOf, type Grants, type KeyGrant } from '../keys/grants.js';
import type { Trust } from '../keys/trust.js';

export type { TrustAddRequest, TrustRevokeRequest } from '../requests/trust.js';
import type { TrustAddRequest, TrustRevokeRequest } from '../requests/trust.js';

/** The grants through HEAD under `trust`. */
function grantsNow(ops: FileOps, paths: LedgerPaths, head: Head, trust: Trust): Grants {
  return foldGrants(trust, keyRecords(ops, paths, head));
}

/** `ledger trust add`: a `key` add record, decided on the HEAD it is built on. */
export function trustAdd(store: StoreOptions, signer: Signer, trust: Trust, req: TrustAddRequest): AppendResult {
  const ops = store.ops ?? realFileOps;
  return transact(store, signer, ({ paths, head }) => {
    // Policy: refused rather than written: a record about a pinned key would change nothing.
    if (pinOf(trust, req.key)) throw new LedgerError('INPUT_CONFLICT', `key ${req.key} is pinned in the trust file already; the trust file's pin wins over any record`, {}, 'to change what it may sign, edit its entry in the trust file');
    const grants = grantsNow(ops, paths, head, trust);
    const had = grants.get(req.key);
    if (had) throw new LedgerError('INPUT_CONFLICT', `key ${req.key} was authorized as "${had.name}" at seq ${had.added_at_seq}${had.revoked_at_seq === null ? '' : ` and revoked at seq ${had.revoked_at_seq} (a revoke is final)`}`, {}, had.revoked_at_seq === null ? '`ledger trust list` shows it' : 'the machine makes a new key (`ledger keygen`), and an admin authorizes that one');
    const same = [...grants.values()].find((g) => g.revoked_at_seq === null && g.name === req.name);
    if (same) throw new LedgerError('INPUT_CONFLICT', `the name "${req.name}" belongs to key ${same.key} (authorized at seq ${same.added_at_seq})`, {}, `choose another --name, or retire that key first: \`ledger trust revoke ${req.name} --reason TEXT\``);
    return [{ kind: 'key', agent: req.agent, action: 'add', name: req.name, alg: 'ed25519', key: req.key, agents: req.agents, reason: req.reason } as Draft];
  });
}

/**
 * `ledger trust revoke NAME`: a `key` revoke record for the key a record authorized under that
 * name. Policy: by name, since the name is what `trust list` and the authorize line show; the
 * record names the key too, so the auditor never depends on names.
 */
export function trustRevoke(store: StoreOptions, signer: Signer, trust: Trust, req: TrustRevokeRequest): AppendResult {
  const ops = store.ops ?? realFileOps;
  return transact(store, signer, ({ paths, head }) => {
    const grants = grantsNow(ops, paths, head, trust);
    const g = [...grants.values()].find((x) => x.revoked_at_seq === null && x.name === req.name);
    if (!g) {
      const pinned = trust.keys.find((k) => k.name === req.name);
      if (pinned) throw new LedgerError('INPUT_CONFLICT', `"${req.name}" is pinned in the trust file, not authorized by a key record; the trust file's pin wins over any record`, {}, 'to retire it, set its "revoked_at_seq" in the trust file');
      const gone = [...grants.values()].find((x) => x.name === req.name);
      throw new LedgerError('INPUT_NOT_FOUND', gone ? `the key named "${req.name}" was revoked already, at seq ${gone.revoked_at_seq}` : `no key named "${req.name}" is authorized in this ledger`, {}, '`ledger trust list` shows the keys and their names');
    }
    return [{ kind: 'key', agent: req.agent, action: 'revoke', name: g.name, alg: 'ed25519', key: g.key, agents: g.agents, reason: req.reason } as Draft];
  });
}

/** One key as `trust list` shows it. */
export interface ListedKey {
  name: string;
  key: string;
  agents: string[];
  /** Where the key is trusted from: the trust file, or a `key` record. */
  source: 'trust-file' | 'record';
  admin: boolean;
  /** Trust file: valid_from_seq / revoked_at_seq; record: the seqs after which it is accepted and rejected. */
  valid_from_seq: number;
  revoked_at_seq: number | null;
  /** Record only: who authorized it and when, and who revoked it. */
  added?: { seq: number; id: string; by: string; agent: string; ts: string; reason: string };
  revoked?: { seq: number; id: string; by: string; agent: string; ts: string; reason: string };
}

/** `ledger trust list`: the pinned keys, then the keys records authorized, with who did it and when. */
export function trustList(paths: LedgerPaths, head: Head, trust: Trust, ops: FileOps = realFileOps): ListedKey[] {
  const records = keyRecords(ops, paths, head);
  const grants = foldGrants(trust, records);
  const byId = new Map(records.map((r) => [r.id, r.record] as const));
  const who = (id: string, seq: number): NonNullable<ListedKey['added']> => {
    const r = byId.get(id) as LedgerRecord<'key'>;
    return { seq, id, by: pinOf(trust, r.sig.key)?.name ?? r.sig.key, agent: r.agent, ts: r.ts, reason: r.reason };
  };
  const pinned: ListedKey[] = trust.keys.map((k) => ({ name: k.name, key: k.key, agents: k.agents, source: 'trust-file', admin: k.admin === true, valid_from_seq: k.valid_from_seq, revoked_at_seq: k.revoked_at_seq }));
  const granted: ListedKey[] = [...grants.values()].map((g: KeyGrant) => ({
    name: g.name, key: g.key, agents: g.agents, source: 'record', admin: false,
    valid_from_seq: g.added_at_seq + 1, revoked_at_seq: g.revoked_at_seq === null ? null : g.revoked_at_seq + 1,
    added: who(g.added_by, g.added_at_seq),
    ...(g.revoked_by !== null ? { revoked: who(g.revoked_by, g.revoked_at_seq!) } : {}),
  }));
  return [...pinned, ...granted];
}
