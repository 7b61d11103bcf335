// `ledger trust add | revoke | list`: the implementation (declared in trust.ts). The rules are
// src/keys/authorize.ts's; the Ledger appends under the writer lock.
import { LedgerError } from '../../errors.js';
import { Ledger, readSecretKey } from '../../index.js';
import type { ListedKey } from '../../ledger.js';
import { checkAgents, checkKeyName, checkPublicKey } from '../../requests/trust.js';
import { checkAgent, checkText } from '../../requests/fields.js';
import type { Flags } from '../flags.js';
import { agentOf, emit, keyPath, type CliIO, type Global } from './common.js';
import { writerOptions } from './remote-opts.js';
import type { TRUST_FLAGS } from './trust.js';

type TrustFlags = Flags<ReturnType<typeof TRUST_FLAGS>> & Global;

/**
 * The admin's own agent name (SPEC 7: a key record's `agent`): --agent, $LEDGER_AGENT, else
 * Policy: the key file's name (an admin's key pinned for "*" signs as any agent; the name says
 * whose key authorized the machine).
 */
function adminAgent(io: CliIO, f: TrustFlags): string {
  const given = agentOf(io, f);
  if (given !== undefined) return checkAgent(given);
  return checkAgent(readSecretKey(keyPath(io, f)).name);
}

export async function runTrust(io: CliIO, action: string | undefined, arg: string | undefined, f: TrustFlags): Promise<number> {
  if (action === 'add') {
    // Every flag is checked before anything is read (SPEC 10: a bad flag changes nothing).
    if (arg === undefined) throw new LedgerError('USAGE', 'trust add expected PUBLIC_KEY (the line `ledger init --remote` printed on the new machine has it)');
    const key = checkPublicKey(arg);
    const name = checkKeyName(f.name);
    if (f.agents === undefined) throw new LedgerError('USAGE', '--agents is required (the agents this key may sign for, e.g. --agents codex)');
    const agents = checkAgents(f.agents);
    const reason = checkText(f.reason, 'reason', 'why this key is authorized');
    const agent = adminAgent(io, f);
    const r = Ledger.open(writerOptions(io, f)).trustAdd({ key, name, agents, reason, agent }).records[0];
    emit(io, f, { ok: true, id: r.id, seq: r.seq, name, key, agents, accepted_from_seq: r.seq + 1 }, [`authorized key "${name}" (${key}) for ${agents.join(', ')}: accepted from seq ${r.seq + 1}`, r.id]);
    return 0;
  }
  if (action === 'revoke') {
    const name = checkKeyName(arg);
    const reason = checkText(f.reason, 'reason', 'why this key is retired');
    const agent = adminAgent(io, f);
    const r = Ledger.open(writerOptions(io, f)).trustRevoke({ name, reason, agent }).records[0];
    const key = (r.record as { key: string }).key;
    emit(io, f, { ok: true, id: r.id, seq: r.seq, name, key, rejected_from_seq: r.seq + 1 }, [`revoked key "${name}" (${key}): rejected from seq ${r.seq + 1}`, r.id]);
    return 0;
  }
  if (action === 'list') {
    if (arg !== undefined) throw new LedgerError('USAGE', `trust list takes no argument, got "${arg}"`);
    const keys = Ledger.open(writerOptions(io, f)).trustList();
    emit(io, f, { ok: true, keys }, keys.map(listLine));
    return 0;
  }
  throw new LedgerError('USAGE', action === undefined ? 'trust expected add, revoke or list' : `trust expected add, revoke or list, got "${action}"`, {}, 'see `ledger trust --help`');
}

function listLine(k: ListedKey): string {
  const agents = k.agents.join(',');
  if (k.source === 'trust-file') {
    const window = `from seq ${k.valid_from_seq}${k.revoked_at_seq === null ? '' : `, revoked from seq ${k.revoked_at_seq}`}`;
    return `${k.name}  ${k.key}  agents ${agents}  pinned in the trust file${k.admin ? ' (admin)' : ''}, ${window}`;
  }
  const a = k.added!;
  const added = `authorized by ${a.by} (agent ${a.agent}) at seq ${a.seq}, ${a.ts}: ${a.reason}`;
  const gone = k.revoked ? `; revoked by ${k.revoked.by} at seq ${k.revoked.seq}, ${k.revoked.ts}: ${k.revoked.reason}` : '';
  return `${k.name}  ${k.key}  agents ${agents}  ${added}${gone}`;
}
