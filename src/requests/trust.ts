// `ledger trust add | revoke` as requests (SPEC 7): their fields, checked before anything is read
// (SPEC 10: a bad flag changes nothing). The rules are ../causal/authorize.ts's.
import { fromBase64url } from '../canonical.js';
import { LedgerError } from '../errors.js';
import { AGENT_RE } from '../record.js';
import { pointEncodingProblem } from '../sign.js';
import { KEY_NAME_RE } from '../keys/secret-key.js';

export interface TrustAddRequest { key: string; name: string; agents: string[]; reason: string; agent: string }
export interface TrustRevokeRequest { name: string; reason: string; agent: string }

/** A public key as typed: base64url of 32 bytes that can be a key (SPEC 4). Throws INPUT_KEY. */
export function checkPublicKey(key: string): string {
  const raw = fromBase64url(key, 32);
  if (!raw) throw new LedgerError('INPUT_KEY', `PUBLIC_KEY must be base64url (no padding) of 32 bytes, got "${key.length > 60 ? `${key.slice(0, 60)}…` : key}"`, {}, 'copy it from the line `ledger init --remote` printed on the new machine, or from `ledger keygen`');
  const bad = pointEncodingProblem(raw);
  if (bad) throw new LedgerError('INPUT_KEY', `PUBLIC_KEY ${key} cannot be authorized: ${bad}`);
  return key;
}

/** --agents A,B: agent names only (never "*": SPEC 7, delegation through a record is scoped). */
export function checkAgents(list: string): string[] {
  const agents = list.split(',').map((a) => a.trim()).filter((a) => a !== '');
  if (agents.length === 0) throw new LedgerError('USAGE', '--agents expected a comma-separated list of agent names, e.g. --agents codex,claude');
  for (const a of agents) {
    if (a === '*') throw new LedgerError('USAGE', '--agents cannot be "*": a key authorized in the ledger signs only for the agents named (only the trust file pins a key for any agent)');
    if (!AGENT_RE.test(a)) throw new LedgerError('USAGE', `--agents: "${a}" is not an agent name (1-64 chars of [A-Za-z0-9._@-])`);
  }
  return [...new Set(agents)];
}

export function checkKeyName(name: string | undefined): string {
  if (name === undefined) throw new LedgerError('USAGE', '--name is required (what to call this key: the machine or sandbox)');
  if (!KEY_NAME_RE.test(name)) throw new LedgerError('USAGE', `--name must be 1-64 chars of [A-Za-z0-9._@-], got "${name}"`);
  return name;
}

