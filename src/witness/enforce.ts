// A consumer's witness policy (SPEC 13): the state of a ledger is accepted only when its HEAD is
// covered by a checkpoint that a quorum of the policy's witnesses stands behind. Each witness
// counts when its cosignature on that checkpoint verifies and it either confirms it online now
// (submitted again, the witness does not answer 409 with a larger size) or, when it cannot be
// asked, the cosignature is fresh (made within --max-age; any age without --max-age).
//
// Policy: online confirmation comes first, whatever the cosignature's age: a rewound ref still
// carries the checkpoint cosigned back then, fresh enough to pass a generous --max-age, and only
// the witness knows it has cosigned more since. A witness that answers 409 with a larger size
// refuses the state outright (freshness, exit 14), quorum or not; one that answers 422 (the same
// size with another root) is a fork (linkage, exit 11).
import { join } from 'node:path';
import type { Trust } from '../keys/trust.js';
import type { Head } from '../record.js';
import { CHECKPOINT_FILE, logNoteVerifier, withTree } from '../store/checkpoint.js';
import { ledgerPaths } from '../store/paths.js';
import type { FileOps } from '../fs/ops.js';
import { ledgerOrigin, parseCheckpoint } from '../tlog/checkpoint.js';
import { cosignatureTime, cosignatureVerifier } from '../tlog/cosignature.js';
import { formatNote, openNote, parseNote, type NoteVerifier } from '../tlog/note.js';
import { quorumMet, type Policy } from '../tlog/policy.js';
import { proveConsistency, type HashReader } from '../tlog/tree.js';
import { formatAddCheckpoint } from '../tlog/witness-protocol.js';
import { submitCheckpoint } from './client.js';

export interface WitnessCheck { name: string; counted: boolean; how: string }
export interface WitnessedVerdict { ok: boolean; failed: 'linkage' | 'signature' | 'freshness' | null; reason: string; witnesses: WitnessCheck[] }

/** The tree a check may need (a witness behind the checkpoint is brought up with a consistency proof). */
export type TreeAccess = <T>(size: number, root: Uint8Array, use: (r: HashReader) => T) => T | null;

/** The local copy's checkpoint and tree (.ledger/checkpoint, .ledger/tree or the records). */
export function localWitnessInput(ops: FileOps, dir: string, head: Head): { text: string | null; tree: TreeAccess } {
  let text: string | null;
  try {
    text = ops.readFile(join(dir, CHECKPOINT_FILE)).toString('utf8');
  } catch {
    text = null;
  }
  return { text, tree: (size, root, use) => withTree(ops, ledgerPaths(dir), size, root, head, use) };
}

/**
 * Whether the policy's quorum stands behind `text`, the checkpoint of `head`'s tree (null: none).
 * Never throws on what the checkpoint or a witness says: a failure is the verdict's layer.
 */
export async function checkWitnessed(o: { text: string | null; tree: TreeAccess; head: Head; trust: Trust; policy: Policy; nowMs: number; maxAgeMs: number | null; timeoutMs: number }): Promise<WitnessedVerdict> {
  const fail = (failed: WitnessedVerdict['failed'], reason: string, witnesses: WitnessCheck[] = []): WitnessedVerdict => ({ ok: false, failed, reason, witnesses });
  const origin = ledgerOrigin(o.head.genesis);
  const text = o.text;
  if (text === null) return fail('freshness', 'no checkpoint of HEAD: nothing a witness stands behind');
  let note;
  let cp;
  try {
    note = parseNote(text);
    cp = parseCheckpoint(note.text);
  } catch (e) {
    return fail('linkage', `the checkpoint beside HEAD is malformed: ${(e as Error).message}`);
  }
  // The log's signature: HEAD's key or a pinned one.
  const keys = [o.head.sig.key, ...o.trust.keys.map((k) => k.key)].filter((k, i, a) => a.indexOf(k) === i);
  const logVerifiers = keys.map((k) => logNoteVerifier(origin, k)).filter((v) => v !== null);
  const witnessVerifiers = o.policy.witnesses.map((w) => ({ w, v: cosignatureVerifier(w.vkey) }));
  const opened = openNote(note, [...logVerifiers, ...witnessVerifiers.map((x) => x.v)]);
  if (opened.invalid.length > 0) return fail('signature', `a signature on the checkpoint by ${opened.invalid[0].name} does not verify`);
  if (!opened.verified.some((x) => logVerifiers.includes(x.verifier as never))) return fail('signature', 'the checkpoint is not signed by HEAD\'s key or a pinned key');
  if (cp.origin !== origin) return fail('linkage', 'the checkpoint names another ledger');
  if (cp.size !== o.head.seq + 1) return fail('freshness', `the checkpoint covers ${cp.size} records, HEAD ${o.head.seq + 1}: HEAD is not the witnessed state`);
  const logOnly = formatNote({ text: note.text, sigs: note.sigs.filter((s) => s.name === origin) });

  const checks = await Promise.all(witnessVerifiers.map(async ({ w, v }): Promise<WitnessCheck & { rewound?: number; fork?: boolean }> => {
    const sig = opened.verified.find((x) => x.verifier === v)?.sig;
    const t = sig ? cosignatureTime(sig.sig) : null;
    const fresh = t !== null && (o.maxAgeMs === null || o.nowMs - t * 1000 <= o.maxAgeMs);
    if (w.url) {
      let a = await submitCheckpoint(w.url, formatAddCheckpoint({ oldSize: cp.size, proof: [], checkpointNote: logOnly }), o.timeoutMs);
      if (a.kind === 'conflict' && a.size < cp.size) {
        // The witness is behind this checkpoint: bring it up with a consistency proof (it then
        // stands behind this size from now on, as a writer's cosign would have made it).
        const old = a.size;
        const proof = old === 0 ? [] : o.tree(cp.size, cp.root, (r) => proveConsistency(cp.size, old, r));
        if (proof !== null) a = await submitCheckpoint(w.url, formatAddCheckpoint({ oldSize: old, proof, checkpointNote: logOnly }), o.timeoutMs);
      }
      // Attacker-controlled: a 200 counts only with a cosignature by this witness's policy key on
      // this very checkpoint (a junk or foreign answer confirms nothing).
      if (a.kind === 'cosigned') {
        return answeredCosignature(note.text, a.lines, v) ? { name: w.name, counted: true, how: 'confirmed online' } : { name: w.name, counted: false, how: 'answered without a valid cosignature by its policy key' };
      }
      if (a.kind === 'conflict' && a.size > cp.size) return { name: w.name, counted: false, how: `has cosigned ${a.size} records of this ledger`, rewound: a.size };
      if (a.kind === 'refused' && a.status === 422) return { name: w.name, counted: false, how: 'holds another tree of this size', fork: true };
      if (a.kind !== 'absent') return { name: w.name, counted: false, how: `refused: ${a.kind === 'refused' ? `${a.status} ${a.reason}` : `409 ${a.size}`}` };
    }
    if (!sig) return { name: w.name, counted: false, how: w.url ? 'unreachable, and no cosignature' : 'no cosignature' };
    return fresh ? { name: w.name, counted: true, how: `cosigned at ${new Date(t! * 1000).toISOString()}${w.url ? ' (unreachable now)' : ''}` } : { name: w.name, counted: false, how: `cosigned at ${new Date(t! * 1000).toISOString()}, older than --max-age${w.url ? ', and unreachable now' : ''}` };
  }));
  const witnesses = checks.map(({ name, counted, how }) => ({ name, counted, how }));
  const rewound = checks.find((c) => c.rewound !== undefined);
  if (rewound) return fail('freshness', `witness ${rewound.name} has cosigned ${rewound.rewound} records of this ledger, more than the ${cp.size} here: the ledger was rolled back`, witnesses);
  const fork = checks.find((c) => c.fork);
  if (fork) return fail('linkage', `witness ${fork.name} holds another tree of ${cp.size} records: a fork`, witnesses);
  const counted = new Set(checks.filter((c) => c.counted).map((c) => c.name));
  if (!quorumMet(o.policy, counted)) return fail('freshness', `the policy's quorum (${o.policy.quorum}) does not stand behind HEAD: ${witnesses.map((w) => `${w.name} ${w.how}`).join('; ') || 'no witnesses'}`, witnesses);
  return { ok: true, failed: null, reason: `HEAD is witnessed: ${witnesses.filter((w) => w.counted).map((w) => `${w.name} ${w.how}`).join('; ') || 'quorum none'}`, witnesses };
}

/** Whether a witness's 200 answer holds a cosignature by `v` on the checkpoint `text`. Never throws. */
function answeredCosignature(text: string, lines: string, v: NoteVerifier): boolean {
  try {
    const got = openNote(parseNote(text + '\n' + lines), [v]);
    return got.verified.length > 0 && got.invalid.length === 0;
  } catch {
    return false;
  }
}
