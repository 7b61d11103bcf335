// Secret key files, trust files and pins, as formats (SPEC 7). Pure: no I/O (key-file.ts and
// trust-file.ts read and write them). Both formats are parsed strictly: unknown fields, duplicate keys, bad
// base64url and unpinnable keys are refused with the reason.
import { fromBase64url, parseJsonStrict } from '../canonical.js';
import { pointEncodingProblem } from '../sign.js';
import { LedgerError } from '../errors.js';
import { AGENT_RE } from '../record.js';

export interface TrustKey {
  name: string;
  alg: 'ed25519';
  key: string;
  agents: string[];
  valid_from_seq: number;
  revoked_at_seq: number | null;
  /** SPEC 7: an admin key may authorize other keys inside the ledger with `key` records. */
  admin?: boolean;
}
export interface Trust { v: 1; keys: TrustKey[] }

import { KEY_NAME_RE, exactFields } from './secret-key.js';

export { parseSecretKeyFile, formatSecretKeyFile, type SecretKeyFile } from './secret-key.js';


/**
 * Checks one base64url public key for pinning; throws INPUT_TRUST naming `where`.
 *
 * Policy: the trust file is read by every audit and gate, so its keys get the byte checks that
 * cost nothing (canonical y, not of small order, as SPEC 4 requires). The deeper checks (the
 * bytes decode to a curve point, the point lies in the prime-order subgroup) need curve
 * arithmetic and ~10 ms of loading, and are `ledger doctor`'s (publicKeyProblem). Neither can
 * let a bad signature through: both verifiers check the cofactorless equation, under which a key
 * off the curve verifies nothing and a torsion component cannot be used to forge.
 */
export function assertPinnableKey(key: unknown, where: string): void {
  const raw = fromBase64url(key, 32);
  if (!raw) throw new LedgerError('INPUT_TRUST', `${where}: "key" must be base64url (no padding) of 32 bytes`);
  const problem = pointEncodingProblem(raw);
  if (problem) throw new LedgerError('INPUT_TRUST', `${where}: key ${String(key)} cannot be pinned: ${problem}`);
}

/** Parses a trust file's text (SPEC 7). Attacker-controlled only if the harness is careless. */
export function parseTrust(text: string, path = 'trust file'): Trust {
  const o = exactFields(parseJsonStrict(text, path), ['v', 'keys'], path, 'INPUT_TRUST');
  if (o.v !== 1) throw new LedgerError('INPUT_TRUST', `${path}: "v" must be 1`);
  if (!Array.isArray(o.keys) || o.keys.length === 0) {
    throw new LedgerError('INPUT_TRUST', `${path}: "keys" must be a non-empty array`);
  }
  const seen = new Set<string>();
  const keys = o.keys.map((entry, i): TrustKey => {
    const where = `${path}: keys[${i}]`;
    // `admin` is the one optional member (SPEC 7); the six others are required.
    const hasAdmin = entry !== null && typeof entry === 'object' && Object.hasOwn(entry, 'admin');
    const k = exactFields(entry, ['name', 'alg', 'key', 'agents', 'valid_from_seq', 'revoked_at_seq', ...(hasAdmin ? ['admin'] : [])], where, 'INPUT_TRUST');
    if (hasAdmin && typeof k.admin !== 'boolean') throw new LedgerError('INPUT_TRUST', `${where}: "admin" must be true or false`);
    if (typeof k.name !== 'string' || !KEY_NAME_RE.test(k.name)) throw new LedgerError('INPUT_TRUST', `${where}: "name" must be 1-64 chars of [A-Za-z0-9._@-]`);
    if (k.alg !== 'ed25519') throw new LedgerError('INPUT_TRUST', `${where}: "alg" must be "ed25519"`);
    assertPinnableKey(k.key, where);
    if (!Array.isArray(k.agents) || k.agents.length === 0 || !k.agents.every((a) => a === '*' || (typeof a === 'string' && AGENT_RE.test(a)))) {
      throw new LedgerError('INPUT_TRUST', `${where}: "agents" must be a non-empty array of agent names or "*"`);
    }
    if (!Number.isSafeInteger(k.valid_from_seq) || (k.valid_from_seq as number) < 0) {
      throw new LedgerError('INPUT_TRUST', `${where}: "valid_from_seq" must be an integer >= 0`);
    }
    if (k.revoked_at_seq !== null && (!Number.isSafeInteger(k.revoked_at_seq) || (k.revoked_at_seq as number) < 0)) {
      throw new LedgerError('INPUT_TRUST', `${where}: "revoked_at_seq" must be null or an integer >= 0`);
    }
    // Policy: an inverted window is a mistake; an empty one (equal) records a key revoked before use.
    if (k.revoked_at_seq !== null && (k.revoked_at_seq as number) < (k.valid_from_seq as number)) {
      throw new LedgerError('INPUT_TRUST', `${where}: "revoked_at_seq" (${k.revoked_at_seq}) is before "valid_from_seq" (${k.valid_from_seq})`);
    }
    // Policy: one entry per key. Two entries for one key would make the pin depend on which a
    // reader consults first; a key that needs two windows is a rotation, done with two keys.
    if (seen.has(k.key as string)) throw new LedgerError('INPUT_TRUST', `${where}: key ${String(k.key)} is pinned twice`);
    seen.add(k.key as string);
    return k as unknown as TrustKey;
  });
  return { v: 1, keys };
}

export function formatTrust(trust: Trust): string {
  return JSON.stringify(trust, null, 2) + '\n';
}

export function trustEntry(name: string, publicKey: string, validFromSeq = 0, o: { admin?: boolean; agents?: string[] } = {}): TrustKey {
  return { name, alg: 'ed25519', key: publicKey, agents: o.agents ?? ['*'], valid_from_seq: validFromSeq, revoked_at_seq: null, ...(o.admin ? { admin: true } : {}) };
}

/**
 * Why the key may not sign this record, or null when the pin holds (SPEC 7): the key is pinned,
 * `valid_from_seq <= seq`, not revoked at `seq`, and `agent` is one it may sign for. For HEAD,
 * pass agent null: only pinning and the seq window apply.
 */
export function pinProblem(trust: Trust, key: string, seq: number, agent: string | null): string | null {
  const pin = trust.keys.find((k) => k.key === key);
  if (!pin) return `key ${key} is not pinned in the trust file`;
  if (seq < pin.valid_from_seq) return `key "${pin.name}" is not valid before seq ${pin.valid_from_seq}`;
  if (pin.revoked_at_seq !== null && seq >= pin.revoked_at_seq) return `key "${pin.name}" is revoked from seq ${pin.revoked_at_seq}`;
  if (agent !== null && !pin.agents.includes('*') && !pin.agents.includes(agent)) {
    return `key "${pin.name}" may not sign for agent "${agent}" (allowed: ${pin.agents.join(', ')})`;
  }
  return null;
}
