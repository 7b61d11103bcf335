// Every format a witness, a verifier or a consumer reads from someone else (a signed note, a
// checkpoint, a vkey, a tlog-proof checked all the way, a tlog-policy, an add-checkpoint body,
// a witness's config, a trust file, a key file), changed a few bytes at a time from a valid one: it parses,
// or it is refused with a coded LedgerError on one line (issue 27: "A malformed note, proof,
// policy or witness answer: one line with its exit code"); never another exception.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { LedgerError } from '../../src/errors.js';
import { createSigner } from '../../src/sign.js';
import { createCosigner } from '../../src/tlog/cosignature.js';
import { formatCheckpoint, parseCheckpoint } from '../../src/tlog/checkpoint.js';
import { formatVkey, parseNote, parseVkey, signNote, ed25519NoteSigner, openNote, ed25519NoteVerifier } from '../../src/tlog/note.js';
import { formatProof, parseProof } from '../../src/tlog/proof.js';
import { parsePolicy } from '../../src/tlog/policy.js';
import { formatAddCheckpoint, parseAddCheckpoint } from '../../src/tlog/witness-protocol.js';
import { parseWitnessConfig, formatWitnessConfig } from '../../src/witness/config.js';
import { parseTrust } from '../../src/keys/trust.js';
import { formatSecretKeyFile, parseSecretKeyFile } from '../../src/keys/secret-key.js';
import { verifyRecordProof } from '../../src/tlog/record-proof.js';
import { runs } from '../helpers/runs.js';

const origin = 'handoff-ledger/' + 'ab'.repeat(32);
const logSigner = ed25519NoteSigner(origin, new Uint8Array(32).fill(7));
const cos = createCosigner('witness.test/w1', new Uint8Array(32).fill(9), () => 1_800_000_000_000);
const cpText = formatCheckpoint({ origin, size: 5, root: new Uint8Array(32).fill(3) });
const note = signNote(cpText, [logSigner, cos]);
const logVkey = formatVkey({ name: origin, type: logSigner.type, publicKey: logSigner.publicKey });
const wVkey = formatVkey(cos);
const policy = `log ${logVkey}\nwitness W1 ${wVkey} http://127.0.0.1:1\nquorum W1\n`;
const proof = formatProof({ extra: Buffer.from('{"agent":"a","kind":"note","seq":3}'), index: 3, proof: [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)], checkpointNote: note });
const add = formatAddCheckpoint({ oldSize: 2, proof: [new Uint8Array(32).fill(1)], checkpointNote: note });
const trustText = readFileSync(join(ROOT, 'fixtures/ledgers/linkage-head-tail/trust.json'), 'utf8');
const wconf = formatWitnessConfig({ name: 'witness.test/w1', logs: [parseVkey(logVkey)] });

const keyFile = formatSecretKeyFile('harness', new Uint8Array(32).fill(5));

// Each format with what reads it: a note is also opened under the log's key, and a proof is
// checked through to its verdict, as `ledger verify-proof` does.
const samples: Record<string, [string, (s: string) => unknown]> = {
  note: [note, (s) => openNote(parseNote(s), [ed25519NoteVerifier(parseVkey(logVkey))])],
  checkpoint: [cpText, parseCheckpoint],
  vkey: [wVkey, (s) => parseVkey(s)],
  proof: [proof, (s) => verifyRecordProof(parseProof(s), parseTrust(trustText), parsePolicy(policy), 1_800_000_000_000, null)],
  policy: [policy, (s) => parsePolicy(s)],
  'add-checkpoint': [add, parseAddCheckpoint],
  'witness.conf': [wconf, (s) => parseWitnessConfig(s)],
  trust: [trustText, (s) => parseTrust(s)],
  'key file': [keyFile, (s) => parseSecretKeyFile(s)],
};

const edit = fc.record({ at: fc.nat(), op: fc.constantFrom('del', 'ins', 'rep', 'dup', 'cut'), ch: fc.constantFrom('\n', ' ', '\u2014', '+', '-', '0', '9', 'A', '=', '\0', '\t', '\r', '\u{1F600}', 'x', '"', '{', '}', ':', '/'), n: fc.integer({ min: 1, max: 40 }) });
/** `s` with each edit applied in turn: a deletion, an insertion, a replacement, a copy, a cut. */
function mutate(s: string, edits: { at: number; op: string; ch: string; n: number }[]): string {
  for (const e of edits) {
    const i = s.length === 0 ? 0 : e.at % (s.length + 1);
    if (e.op === 'del') s = s.slice(0, i) + s.slice(i + e.n);
    else if (e.op === 'ins') s = s.slice(0, i) + e.ch.repeat(e.n % 3 + 1) + s.slice(i);
    else if (e.op === 'rep') s = s.slice(0, i) + e.ch + s.slice(i + 1);
    else if (e.op === 'dup') s = s.slice(0, i) + s.slice(i, i + e.n) + s.slice(i);
    else s = s.slice(0, i);
  }
  return s;
}
describe('when a format read from others is changed a few bytes at a time', () => {
  for (const [name, [valid, parse]] of Object.entries(samples)) {
    it(`${name}: the unchanged one is read`, () => {
      expect(parse(valid)).toBeTruthy();
    });
    it(`property: ${name}: a changed one parses, or is refused with a coded one-line LedgerError`, () => {
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
          const s = mutate(valid, edits);
          try {
            parse(s);
          } catch (e) {
            if (!(e instanceof LedgerError)) throw new Error(`${name} threw ${(e as Error)?.constructor?.name}: ${(e as Error)?.message} on ${JSON.stringify(s).slice(0, 300)}`);
            expect(e.code).toMatch(/^[A-Z_]+$/);
            expect(e.message).not.toMatch(/[\n\r]/);
          }
        }),
        { numRuns: runs(300, 30_000) },
      );
    });
  }
});
