// `ledger verify-proof` (SPEC 13): a tlog-proof of one ledger record checked offline, with only
// the proof, the consumer's trust file and its tlog-policy. Pure: no I/O; `now` passed in.
// The checks in order, each failure reported as the audit layer it is (SPEC 8 exit codes):
//   schema (10)     the record in `extra` is a canonical, well-formed record line
//   signature (12)  the checkpoint is signed by a key of the ledger (the trust file's, or a `log`
//                   line of the policy for its origin); no known signature fails; the record's
//                   own signature verifies
//   key-pin (13)    the record's key is pinned for its seq and agent
//   linkage (11)    the inclusion proof places the record's leaf at its seq under the root
//   freshness (14)  the policy's quorum of witnesses cosigned it (within --max-age when given)
import { recordId } from '../canonical.js';
import type { Trust } from '../keys/trust.js';
import { pinProblem } from '../keys/trust.js';
import { decodeRecordLine, LineProblem } from '../record-line.js';
import { verifySig } from '../sign.js';
import { parseCheckpoint, isLedgerOrigin, type Checkpoint } from './checkpoint.js';
import { cosignatureTime, cosignatureVerifier } from './cosignature.js';
import { fromBase64url } from '../canonical.js';
import { leafHash } from './hash.js';
import { SIG_ED25519, ed25519NoteVerifier, keyIdOf, openNote, type NoteVerifier } from './note.js';
import { quorumMet, type Policy } from './policy.js';
import type { TlogProof } from './proof.js';
import { verifyInclusion } from './verify.js';

export type ProofLayer = 'schema' | 'linkage' | 'signature' | 'key-pin' | 'freshness';

export interface ProofVerdict {
  ok: boolean;
  failed: ProofLayer | null;
  reason: string;
  seq: number;
  id: string | null;
  origin: string | null;
  size: number | null;
  /** The policy's witnesses whose cosignatures verified (and were fresh enough), by policy name. */
  witnesses: string[];
}

export function verifyRecordProof(p: TlogProof, trust: Trust, policy: Policy, now: number, maxAgeMs: number | null): ProofVerdict {
  const v: ProofVerdict = { ok: false, failed: null, reason: '', seq: p.index, id: null, origin: null, size: null, witnesses: [] };
  const fail = (layer: ProofLayer, reason: string) => ({ ...v, failed: layer, reason });
  // schema: the record itself, from the unauthenticated `extra` line (bound below by the proof).
  if (p.extra === null) return fail('schema', 'the proof carries no record (no extra line)');
  const d = decodeRecordLine(p.extra, { schema: true, seq: p.index });
  if (d instanceof LineProblem) return fail('schema', `the record ${d.why}`);
  v.id = d.id;
  let cp: Checkpoint;
  try {
    cp = parseCheckpoint(p.note.text);
  } catch (e) {
    return fail('schema', (e as Error).message);
  }
  v.origin = cp.origin;
  v.size = cp.size;
  if (!isLedgerOrigin(cp.origin) || cp.extensions.length > 0) return fail('schema', `the checkpoint's origin ${JSON.stringify(cp.origin)} is not a ledger's, or it has extension lines`);
  // signature: the log's key. Policy: a policy `log` line for the origin, or any trust-file key
  // under the origin's name (the ledger's checkpoints are signed by HEAD's key, which is pinned).
  const logKeys: NoteVerifier[] = policy.logs.filter((l) => l.vkey.name === cp.origin).map((l) => ed25519NoteVerifier(l.vkey));
  for (const k of trust.keys) {
    const pub = fromBase64url(k.key, 32);
    const keyId = pub && keyIdOf(cp.origin, SIG_ED25519, pub);
    // The same key from the policy and the trust file is one verifier (two would be ambiguous).
    if (pub && !logKeys.some((l) => l.keyId === keyId)) logKeys.push(ed25519NoteVerifier({ name: cp.origin, type: SIG_ED25519, publicKey: pub, keyId: keyId! }));
  }
  const witnessKeys = policy.witnesses.map((w) => ({ name: w.name, verifier: cosignatureVerifier(w.vkey) }));
  const opened = openNote(p.note, [...logKeys, ...witnessKeys.map((w) => w.verifier)]);
  if (opened.invalid.length > 0) return fail('signature', `a signature by ${opened.invalid[0].name} does not verify`);
  const byLog = opened.verified.filter((x) => logKeys.includes(x.verifier));
  if (byLog.length === 0) return fail('signature', 'the checkpoint has no signature by a key of the trust file or a log of the policy');
  if (!verifySig('record', recordId(d.record), d.record.sig)) return fail('signature', 'the record\'s signature does not verify');
  const pin = pinProblem(trust, d.record.sig.key, d.record.seq, d.record.agent);
  if (pin) return fail('key-pin', pin);
  // linkage: the record's line is the leaf at its seq under the signed root.
  if (!verifyInclusion(p.index, cp.size, leafHash(p.extra), p.proof, cp.root)) return fail('linkage', `the inclusion proof does not place record ${p.index} under the checkpoint's root`);
  // freshness: the quorum, counting cosignatures within --max-age when it is given.
  const fresh = new Set<string>();
  for (const w of witnessKeys) {
    const sig = opened.verified.find((x) => x.verifier === w.verifier)?.sig;
    if (!sig) continue;
    const t = cosignatureTime(sig.sig)!;
    if (maxAgeMs !== null && now - t * 1000 > maxAgeMs) continue;
    fresh.add(w.name);
  }
  v.witnesses = [...fresh];
  if (!quorumMet(policy, fresh)) {
    return fail('freshness', `the policy's quorum (${policy.quorum}) did not cosign this checkpoint${maxAgeMs !== null ? ' within --max-age' : ''}: cosigned by ${v.witnesses.length ? v.witnesses.join(', ') : 'none'}`);
  }
  return { ...v, ok: true, reason: `record ${p.index} ${d.id} is in ${cp.origin} at tree size ${cp.size}` };
}
