// A writer collecting cosignatures (SPEC 13): the checkpoint beside HEAD goes to each witness the
// policy names with a URL, with a consistency proof from the size the witness last cosigned; the
// cosignatures that verify under the policy's keys are kept beside the checkpoint, so `prove`
// carries them. A witness that is down, slow or refuses delays nothing: it is reported, never
// waited on past the timeout (issue 27).
import { join } from 'node:path';
import { replaceFileUnsynced } from '../fs/durable.js';
import type { FileOps } from '../fs/ops.js';
import { CHECKPOINT_FILE, withTree } from '../store/checkpoint.js';
import { acquireLock } from '../store/lock.js';
import type { LedgerPaths } from '../store/paths.js';
import { parseCheckpoint } from '../tlog/checkpoint.js';
import { cosignatureVerifier } from '../tlog/cosignature.js';
import { formatNote, openNote, parseNote, type NoteSignature } from '../tlog/note.js';
import type { Policy } from '../tlog/policy.js';
import { proveConsistency } from '../tlog/tree.js';
import { formatAddCheckpoint } from '../tlog/witness-protocol.js';
import { submitCheckpoint, type WitnessAnswer } from './client.js';

export interface WitnessOutcome { witness: string; url: string | null; outcome: 'cosigned' | 'conflict' | 'refused' | 'absent' | 'no-url'; detail: string }

/**
 * Submits `.ledger/checkpoint` to every policy witness with a URL, in parallel, each answer
 * bounded by `timeoutMs`; keeps the valid cosignatures in the checkpoint file. Each is asked
 * from size 0 first: its 409 says the size it last cosigned, and the second try proves from there.
 */
export async function collectCosignatures(ops: FileOps, paths: LedgerPaths, policy: Policy, timeoutMs: number): Promise<WitnessOutcome[]> {
  const text = ops.readFile(join(paths.dir, CHECKPOINT_FILE)).toString('utf8');
  const note = parseNote(text);
  const cp = parseCheckpoint(note.text);
  // The consistency proof from a witness's size, from the tree file when it gives the root.
  const consistency = (old: number) => withTree(ops, paths, cp.size, cp.root, null, (r) => proveConsistency(cp.size, old, r));
  // Only the log's own signatures go to a witness (a witness ignores the rest anyway).
  const logOnly = formatNote({ text: note.text, sigs: note.sigs.filter((s) => s.name === cp.origin) });
  const ask = async (w: Policy['witnesses'][number]): Promise<{ out: WitnessOutcome; sig?: NoteSignature }> => {
    if (!w.url) return { out: { witness: w.name, url: null, outcome: 'no-url', detail: 'the policy gives no URL' } };
    const verifier = cosignatureVerifier(w.vkey);
    let old = 0;
    let a: WitnessAnswer = { kind: 'absent', reason: '' };
    // At most two tries: the first from 0 (or what it said), the second from the size a 409 gives.
    for (let tries = 0; tries < 2; tries++) {
      const proof = old === 0 ? [] : consistency(old);
      if (proof === null) return { out: { witness: w.name, url: w.url, outcome: 'refused', detail: 'the tree file does not give the checkpoint\'s root: append once to rebuild it' } };
      a = await submitCheckpoint(w.url, formatAddCheckpoint({ oldSize: old, proof, checkpointNote: logOnly }), timeoutMs);
      if (a.kind !== 'conflict') break;
      if (a.size > cp.size) return { out: { witness: w.name, url: w.url, outcome: 'conflict', detail: `the witness has cosigned ${a.size} records of this ledger, more than this checkpoint's ${cp.size}: this copy is behind or rewound` } };
      old = a.size;
    }
    if (a.kind === 'cosigned') {
      try {
        const got = openNote(parseNote(note.text + '\n' + a.lines), [verifier]);
        if (got.verified.length > 0) return { out: { witness: w.name, url: w.url, outcome: 'cosigned', detail: `size ${cp.size}` }, sig: got.verified[0].sig };
        return { out: { witness: w.name, url: w.url, outcome: 'refused', detail: 'its answer has no cosignature by its policy key' } };
      } catch (e) {
        return { out: { witness: w.name, url: w.url, outcome: 'refused', detail: `a malformed answer: ${(e as Error).message}` } };
      }
    }
    if (a.kind === 'conflict') return { out: { witness: w.name, url: w.url, outcome: 'conflict', detail: `still told ${a.size}` } };
    return { out: { witness: w.name, url: w.url, outcome: a.kind, detail: a.kind === 'refused' ? `${a.status} ${a.reason}` : a.reason } };
  };
  const results = await Promise.all(policy.witnesses.map(ask));
  const fresh = results.flatMap((r) => (r.sig ? [r.sig] : []));
  if (fresh.length > 0) {
    // The log's signatures, then every cosignature: the new ones replace a witness's older one.
    const keep = note.sigs.filter((s) => !fresh.some((f) => f.name === s.name && f.keyId === s.keyId));
    const updated = formatNote({ text: note.text, sigs: [...keep, ...fresh] });
    // Only if the checkpoint is still the one sent (an append in between replaced it: that one is
    // collected for next).
    // Under the writer lock, so an append never has its newer checkpoint replaced by this one.
    const lock = acquireLock(ops, paths.lock, 10_000);
    try {
      if (ops.readFile(join(paths.dir, CHECKPOINT_FILE)).toString('utf8') === text) replaceFileUnsynced(ops, paths.dir, CHECKPOINT_FILE, Buffer.from(updated), 0o644);
    } finally {
      lock.release();
    }
  }
  return results.map((r) => r.out);
}
