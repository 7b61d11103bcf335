// C2SP tlog-witness add-checkpoint (c2sp.org/tlog-witness), the pure half: the request body's
// format and the witness's decision. The server (src/witness/) does the I/O around it: it reads
// the log's state, calls decideAddCheckpoint, persists the new state durably, then answers.
//
//   request:  "old <size>\n" <base64 proof hash>"\n"... "\n" <signed checkpoint>
//   response: 200 with cosignature lines; 409 "<latest size>\n" (text/x.tlog.size); 400, 403,
//             404, 422 as the protocol assigns them.
import { LedgerError } from '../errors.js';
import { parseCheckpoint, type Checkpoint } from './checkpoint.js';
import { EMPTY_ROOT, hashEqual, parseDecimal, parseHash, quote, toBase64 } from './hash.js';
import { formatSignatureLine, openNote, parseNote, type Note, type NoteSignature, type NoteSigner, type NoteVerifier } from './note.js';
import { verifyConsistency } from './verify.js';

export const MAX_CONSISTENCY_LINES = 63;

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  /** The signed checkpoint exactly as sent. */
  checkpointNote: string;
}

export function formatAddCheckpoint(r: AddCheckpointRequest): string {
  return `old ${r.oldSize}\n` + r.proof.map((h) => toBase64(h) + '\n').join('') + '\n' + r.checkpointNote;
}

/** Parses a request body (attacker-controlled). Throws INPUT_NOTE when malformed (a 400). */
export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const bad = (why: string) => new LedgerError('INPUT_NOTE', `malformed add-checkpoint request: ${why}`, { why });
  const lines = body.split('\n');
  const m = /^old (.*)$/.exec(lines[0]);
  const oldSize = m ? parseDecimal(m[1]) : null;
  if (oldSize === null) throw bad(`expected "old <size>", got ${quote(lines[0])}`);
  const proof: Uint8Array[] = [];
  let i = 1;
  for (; i < lines.length && lines[i] !== ''; i++) {
    if (proof.length === MAX_CONSISTENCY_LINES) throw bad(`more than ${MAX_CONSISTENCY_LINES} proof lines`);
    proof.push(parseHash(lines[i], 'a consistency proof line', 'INPUT_NOTE'));
  }
  if (i >= lines.length) throw bad('no empty line before the checkpoint');
  return { oldSize, proof, checkpointNote: lines.slice(i + 1).join('\n') };
}

/** What a witness remembers of one log: the latest checkpoint it cosigned. */
export interface LogState {
  origin: string;
  size: number;
  root: Uint8Array;
}

export type Decision =
  | { status: 200; state: LogState; checkpoint: Checkpoint; note: Note; logSigs: NoteSignature[] }
  | { status: 400 | 403 | 404 | 422; reason: string }
  | { status: 409; size: number; reason: string };

/**
 * The witness's judgement of one add-checkpoint request (tlog-witness "add-checkpoint"), in the
 * protocol's order. `logKeys(origin)` gives the verifiers of the logs it witnesses (null: an
 * unknown origin); `state(origin)` the latest it cosigned (null: never). Nothing is cosigned
 * unless every check passes; the caller persists `state` before it answers.
 */
export function decideAddCheckpoint(
  body: string,
  logKeys: (origin: string) => readonly NoteVerifier[] | null,
  state: (origin: string) => LogState | null,
): Decision {
  let req: AddCheckpointRequest;
  let note: Note;
  let cp: Checkpoint;
  try {
    req = parseAddCheckpoint(body);
    note = parseNote(req.checkpointNote);
    cp = parseCheckpoint(note.text);
  } catch (e) {
    return { status: 400, reason: (e as Error).message };
  }
  const keys = logKeys(cp.origin);
  if (keys === null) return { status: 404, reason: `unknown log ${quote(cp.origin)}` };
  const opened = openNote(note, keys);
  if (opened.invalid.length > 0) return { status: 403, reason: `a signature by ${opened.invalid[0].name} does not verify` };
  if (opened.verified.length === 0) return { status: 403, reason: 'no signature by a key of this log' };
  if (req.oldSize > cp.size) return { status: 400, reason: `old size ${req.oldSize} is larger than the checkpoint's ${cp.size}` };
  const last = state(cp.origin);
  const lastSize = last?.size ?? 0;
  if (req.oldSize !== lastSize) return { status: 409, size: lastSize, reason: `old size ${req.oldSize} is not the latest cosigned, ${lastSize}` };
  if (cp.size === 0 && !hashEqual(cp.root, EMPTY_ROOT)) return { status: 422, reason: 'a tree of size 0 must have the empty root' };
  if (req.oldSize === 0) {
    if (req.proof.length !== 0) return { status: 422, reason: 'a proof from size 0 must be empty' };
  } else if (!verifyConsistency(last!.size, cp.size, last!.root, cp.root, req.proof)) {
    return { status: 422, reason: last!.size === cp.size ? 'the same size with a different root' : 'the consistency proof does not verify' };
  }
  return { status: 200, state: { origin: cp.origin, size: cp.size, root: cp.root }, checkpoint: cp, note, logSigs: opened.verified.map((v) => v.sig) };
}

/** The 200 body: one cosignature line per witness key over the checkpoint's text. */
export function cosignatureLines(text: string, cosigners: readonly NoteSigner[]): string {
  return cosigners.map((c) => formatSignatureLine({ name: c.name, keyId: c.keyId, sig: c.sign(text) })).join('');
}
