// `ledger prove`, `ledger verify-proof` and `ledger head --checkpoint|--vkey` (see proof.ts, read.ts).
import { resolve } from 'node:path';
import { EXIT, LedgerError, Ledger, readProof, readPolicy, readTrust } from '../../index.js';
import { SIG_ED25519, formatVkey, verifyRecordProof, type ProofLayer } from '../../formats.js';
import { parseDuration } from '../../requests/fields.js';
import { emit, ledgerDir, trustPath, type CliIO, type Global } from './common.js';

const LAYER_EXIT: Record<ProofLayer, number> = { schema: EXIT.schema, linkage: EXIT.linkage, signature: EXIT.signature, 'key-pin': EXIT.keyPin, freshness: EXIT.freshness };

export function runProve(io: CliIO, ref: string, f: Global): number {
  const p = Ledger.open({ dir: ledgerDir(io, f), env: io.env }).prove(ref);
  if (f.json) emit(io, f, { ok: true, ...p }, '');
  else io.stdout(p.proof);
  return 0;
}

export function runVerifyProof(io: CliIO, file: string, f: Global & { trust?: string; policy?: string; maxAge?: string }): number {
  if (file === '') throw new LedgerError('USAGE', 'verify-proof takes the proof file');
  if (f.policy === undefined) throw new LedgerError('USAGE', '--policy is required: the tlog-policy naming the witnesses and their quorum (`quorum none` for none)');
  const maxAgeMs = f.maxAge === undefined ? null : parseDuration(f.maxAge, 'max-age');
  // No ledger is read: the trust file is --trust or $LEDGER_TRUST, never looked for in a project.
  const tp = f.trust ?? io.env.LEDGER_TRUST;
  if (!tp) throw new LedgerError('USAGE', '--trust is required (or $LEDGER_TRUST): the keys that may sign the ledger');
  const trust = readTrust(resolve(io.cwd, tp));
  const policy = readPolicy(resolve(io.cwd, f.policy), f.policy);
  const proof = readProof(resolve(io.cwd, file));
  const v = verifyRecordProof(proof, trust, policy, Date.now(), maxAgeMs);
  const code = v.failed === null ? EXIT.ok : LAYER_EXIT[v.failed];
  emit(io, f, { ...v, exit_code: code }, [v.ok ? `ok: ${v.reason}${v.witnesses.length ? `; cosigned by ${v.witnesses.join(', ')}` : ''}` : `${v.failed}: ${v.reason}`]);
  return code;
}

export function runCheckpointShow(io: CliIO, f: Global & { vkey: boolean; vkeys: boolean; checkpoint: boolean }): number {
  if ([f.vkey, f.vkeys, f.checkpoint].filter(Boolean).length > 1) throw new LedgerError('USAGE', '--checkpoint, --vkey and --vkeys print different things: give one');
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const c = ledger.treeCheckpoint();
  if (f.vkeys) {
    // Policy: HEAD's key and the trust file's: every writer of a team is pinned there or
    // authorized by an admin's key record; one authorized in the ledger adds its own line
    // (`ledger head --vkey` on that machine after its first write) to witness.conf.
    const vkeys = [c.vkey, ...readTrust(trustPath(io, f)).keys.map((k) => logVkey(c.origin, k.key))].filter((v, i, a) => v !== null && a.indexOf(v) === i) as string[];
    emit(io, f, { ok: true, origin: c.origin, vkeys }, vkeys);
    return 0;
  }
  if (f.vkey) {
    emit(io, f, { ok: true, origin: c.origin, vkey: c.vkey }, [c.vkey]);
    return 0;
  }
  if (c.note === null) throw new LedgerError('INPUT_NOT_FOUND', 'no checkpoint beside HEAD', {}, 'the next append signs one (a ledger from before checkpoints has none)');
  if (f.json) emit(io, f, { ok: true, ...c, checkpoint: c.note }, '');
  else io.stdout(c.note);
  return 0;
}

/** The log verifier key of `origin` for a base64url Ed25519 key (a trust-file entry's), or null for a malformed one. */
function logVkey(origin: string, key: string): string | null {
  const raw = Buffer.from(key, 'base64url');
  return raw.length === 32 && raw.toString('base64url') === key ? formatVkey({ name: origin, type: SIG_ED25519, publicKey: new Uint8Array(raw) }) : null;
}
