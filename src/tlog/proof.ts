// C2SP tlog-proof (c2sp.org/tlog-proof@v1): an entry's index, its inclusion proof and the
// (cosigned) checkpoint it is proven in, offline-verifiable. Pure: no I/O. Attacker-controlled.
//
//   c2sp.org/tlog-proof@v1
//   [extra <base64>]
//   index <decimal>
//   <base64 hash>...          the inclusion proof, leaf's sibling first
//   <empty line>
//   <the signed checkpoint, verbatim>
import { LedgerError } from '../errors.js';
import { fromBase64, parseDecimal, parseHash, quote, toBase64 } from './hash.js';
import { parseNote, type Note } from './note.js';

export const PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
// Policy: at most 63 proof hashes (a tree of 2^53 leaves needs 53), and a proof file of at most
// 1 MiB, so a hostile one costs little to refuse.
export const MAX_PROOF_HASHES = 63;
export const MAX_PROOF_BYTES = 1 << 20;

export interface TlogProof {
  extra: Uint8Array | null;
  index: number;
  proof: Uint8Array[];
  /** The signed checkpoint, exactly as it was written. */
  checkpointNote: string;
  /** The checkpoint note, parsed. */
  note: Note;
}

export function formatProof(p: { extra?: Uint8Array | null; index: number; proof: readonly Uint8Array[]; checkpointNote: string }): string {
  const lines = [PROOF_HEADER];
  if (p.extra) lines.push(`extra ${toBase64(p.extra)}`);
  lines.push(`index ${p.index}`, ...p.proof.map(toBase64), '');
  return lines.join('\n') + '\n' + p.checkpointNote;
}

export function parseProof(input: Uint8Array | string): TlogProof {
  const bad = (why: string) => new LedgerError('INPUT_PROOF', `malformed tlog-proof: ${why}`, { why });
  if (input.length > MAX_PROOF_BYTES) throw bad(`more than ${MAX_PROOF_BYTES} bytes`);
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  const lines = text.split('\n');
  let i = 0;
  if (lines[i++] !== PROOF_HEADER) throw bad(`the first line is not ${PROOF_HEADER}`);
  let extra: Uint8Array | null = null;
  if (lines[i]?.startsWith('extra ')) {
    extra = fromBase64(lines[i].slice(6));
    if (extra === null) throw bad('the extra line is not base64');
    i++;
  }
  const m = /^index (.*)$/.exec(lines[i++] ?? '');
  const index = m ? parseDecimal(m[1]) : null;
  if (index === null) throw bad(`expected "index <decimal>", got ${quote(lines[i - 1] ?? '')}`);
  const proof: Uint8Array[] = [];
  for (; i < lines.length && lines[i] !== ''; i++) {
    if (proof.length === MAX_PROOF_HASHES) throw bad(`more than ${MAX_PROOF_HASHES} proof hashes`);
    proof.push(parseHash(lines[i], 'a tlog-proof inclusion line', 'INPUT_PROOF'));
  }
  if (i >= lines.length) throw bad('no empty line before the checkpoint');
  // The checkpoint after the empty line, as bytes: the note decoder checks its UTF-8.
  const offset = lines.slice(0, i + 1).reduce((n, l) => n + l.length + 1, 0);
  const rest = typeof input === 'string' ? input.slice(offset) : input.subarray(offset);
  const note = parseNote(rest);
  const checkpointNote = typeof rest === 'string' ? rest : Buffer.from(rest).toString('utf8');
  return { extra, index, proof, checkpointNote, note };
}
