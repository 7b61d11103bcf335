// C2SP signed-note (src/tlog/note.ts) against Go's sumdb/note tests and the signed-note spec's
// example (fixtures/tlog/SOURCES.md), then the checkpoint, cosignature, proof and policy formats.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { formatCheckpoint, ledgerOrigin, parseCheckpoint } from '../../src/tlog/checkpoint.js';
import { cosignatureTime, cosignatureVerifier, cosignedMessage, createCosigner } from '../../src/tlog/cosignature.js';
import { EMPTY_ROOT, fromBase64, leafHash } from '../../src/tlog/hash.js';
import {
  SIG_COSIGNATURE_V1, SIG_ED25519, ed25519NoteSigner, ed25519NoteVerifier, formatVkey, keyIdOf, openNote, parseNote, parseVkey, signNote,
} from '../../src/tlog/note.js';
import { parsePolicy, quorumMet } from '../../src/tlog/policy.js';
import { formatProof, parseProof } from '../../src/tlog/proof.js';

const FIX = new URL('../../fixtures/tlog/', import.meta.url);
const go = JSON.parse(readFileSync(new URL('go-sumdb.json', FIX), 'utf8'));
const c2sp = JSON.parse(readFileSync(new URL('c2sp-examples.json', FIX), 'utf8'));
const N = go.note;

/** The seed in Go's "PRIVATE+KEY+<name>+<id>+base64(0x01 || seed)" signer-key text (test only). */
function goSeed(skey: string): { name: string; seed: Uint8Array } {
  const [, , name, , ...rest] = skey.split('+');
  const key = rest.join('+');
  const raw = fromBase64(key)!;
  expect(raw[0]).toBe(SIG_ED25519);
  return { name, seed: raw.subarray(1) };
}

const codeOf = (f: () => unknown): string | null => {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof LedgerError ? e.code : `not a LedgerError: ${String(e)}`;
  }
};

describe('signed-note against Go sumdb/note', () => {
  it('parses the vkeys and computes their key IDs (TestNewVerifier)', () => {
    const p = parseVkey(N.peterVkey);
    expect(p.name).toBe('PeterNeumann');
    expect(p.keyId).toBe(0xc74f20a3);
    expect(keyIdOf(p.name, SIG_ED25519, p.publicKey)).toBe(0xc74f20a3);
    expect(formatVkey(p)).toBe(N.peterVkey);
    expect(parseVkey(N.enochVkey).keyId).toBe(0xaf0cfe78);
  });

  it('refuses every mangled vkey: each substring and each byte changed (TestNewVerifier)', () => {
    const k: string = N.peterVkey;
    let refused = 0;
    for (let i = 0; i <= k.length; i++) {
      for (let j = i + 1; j <= k.length; j++) {
        if (i === 0 && j === k.length) continue;
        expect(codeOf(() => parseVkey(k.slice(i, j))), k.slice(i, j)).toBe('INPUT_KEY');
        refused++;
      }
    }
    for (let i = 0; i < k.length; i++) {
      const m = k.slice(0, i) + String.fromCharCode(k.charCodeAt(i) + 1) + k.slice(i + 1);
      expect(codeOf(() => parseVkey(m)), m).toBe('INPUT_KEY');
      refused++;
    }
    for (const b of N.badVkeys) expect(codeOf(() => parseVkey(b)), b).toBe('INPUT_KEY');
    expect(refused).toBe((k.length * (k.length + 1)) / 2 - 1 + k.length);
  });

  it('signs the text to the exact note Go writes (TestSign)', () => {
    const { name, seed } = goSeed(N.peterSkey);
    const signer = ed25519NoteSigner(name, seed);
    expect(signer.keyId).toBe(0xc74f20a3);
    expect(signNote(N.text, [signer])).toBe(N.signed);
    // An old signature by the same key is replaced, not kept beside the new one.
    const stale = parseNote(N.text + '\n' + N.enochSig.replace('EnochRoot', 'PeterNeumann').replace('rwz+eB', 'x08go/')).sigs;
    expect(signNote(N.text, [signer], stale.filter((s) => s.keyId === 0xc74f20a3))).toBe(N.signed);
  });

  it('opens with one, both and no verifiers as Go does (TestOpen)', () => {
    const peter = ed25519NoteVerifier(parseVkey(N.peterVkey));
    const enoch = ed25519NoteVerifier(parseVkey(N.enochVkey));
    const note = parseNote(N.text + '\n' + N.peterSig + N.enochSig);
    expect(note.text).toBe(N.text);
    let o = openNote(note, [peter]);
    expect(o.verified.map((v) => v.sig.name)).toEqual(['PeterNeumann']);
    expect(o.unknown.map((s) => s.name)).toEqual(['EnochRoot']);
    o = openNote(note, [peter, enoch]);
    expect(o.verified.map((v) => v.sig.name)).toEqual(['PeterNeumann', 'EnochRoot']);
    o = openNote(note, []);
    expect([o.verified.length, o.unknown.length, o.invalid.length]).toEqual([0, 2, 0]);
    // Two verifiers of the same name and key ID: ambiguous, so that signature is not trusted.
    o = openNote(parseNote(N.text + '\n' + N.enochSig), [enoch, peter, enoch]);
    expect(o.verified.length).toBe(0);
    expect(o.invalid.length).toBe(1);
    // A corrupted signature of a known key is invalid, never verified.
    const corrupt = N.peterSig.slice(0, 60) + 'ABCD' + N.peterSig.slice(60);
    o = openNote(parseNote(N.text + '\n' + corrupt), [peter]);
    expect([o.verified.length, o.invalid.length]).toEqual([0, 1]);
    // The same line twice counts once.
    o = openNote(parseNote(N.text + '\n' + N.peterSig + N.peterSig + N.enochSig + N.enochSig), [peter]);
    expect([o.verified.length, o.unknown.length]).toEqual([1, 1]);
  });

  it('refuses the malformed notes of TestOpen and more than 100 signatures (INPUT_NOTE)', () => {
    const bad: (string | Uint8Array)[] = [
      N.text,
      N.text + '\n',
      N.text + '\n' + N.peterSig.slice(0, -1),
      '\x01' + N.text + '\n' + N.peterSig,
      Uint8Array.from([0xff, ...Buffer.from(N.text + '\n' + N.peterSig)]),
      N.text + '\n' + '— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=',
      N.text + '\n' + N.peterSig + 'Unexpected line.\n',
      N.text + '\n' + N.peterSig.repeat(101),
      N.text + '\n' + '— a+b AAAAAAAA\n',
    ];
    for (const b of bad) expect(codeOf(() => parseNote(b)), JSON.stringify(String(b).slice(-40))).toBe('INPUT_NOTE');
  });
});

describe('signed-note against the C2SP example', () => {
  it('verifies the spec example with its vkey', () => {
    const v = parseVkey(c2sp.signedNote.vkey);
    expect(v.keyId).toBe(0x530d903a);
    const o = openNote(parseNote(c2sp.signedNote.note), [ed25519NoteVerifier(v)]);
    expect(o.verified.length).toBe(1);
    expect(o.text).toBe('This is an example message.\n');
  });
});

describe('checkpoints (tlog-checkpoint), against Go sumdb/tlog', () => {
  it('parses the three-line tree note and refuses the bad ones', () => {
    const c = parseCheckpoint(go.tlog.tree);
    expect(c.origin).toBe('go.sum database tree');
    expect(c.size).toBe(123456789012);
    expect(Buffer.from(c.root).toString('base64')).toBe(go.tlog.helloWorldRecordHash);
    expect(formatCheckpoint(c)).toBe(go.tlog.tree);
    for (const b of go.tlog.badTrees) expect(codeOf(() => parseCheckpoint(b)), b).toBe('INPUT_NOTE');
    for (const b of ['a\n01\n' + Buffer.from(EMPTY_ROOT).toString('base64') + '\n', 'a\n1\n', '\n1\nAA==\n', 'a\n9007199254740992\n' + Buffer.from(EMPTY_ROOT).toString('base64') + '\n']) {
      expect(codeOf(() => parseCheckpoint(b)), b).toBe('INPUT_NOTE');
    }
  });
  it('names a ledger by its genesis id', () => {
    expect(ledgerOrigin('sha256:' + 'ab'.repeat(32))).toBe('handoff-ledger/' + 'ab'.repeat(32));
    expect(codeOf(() => ledgerOrigin('sha256:AB'))).toBe('INPUT_SCHEMA');
  });
});

describe('cosignature/v1', () => {
  const seed = new Uint8Array(32).fill(7);
  const text = formatCheckpoint({ origin: 'example.com/log', size: 3, root: leafHash('x') });
  it('signs the message the spec lays out, with a key ID of type 0x04, and verifies', () => {
    expect(Buffer.from(cosignedMessage(1679315147, 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n')).toString())
      .toBe('cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n');
    const c = createCosigner('witness.example/w1', seed, () => 1_700_000_000_123);
    expect(c.keyId).toBe(keyIdOf('witness.example/w1', SIG_COSIGNATURE_V1, c.publicKey));
    const vk = parseVkey(formatVkey(c));
    expect(vk.type).toBe(SIG_COSIGNATURE_V1);
    const note = parseNote(signNote(text, [c]));
    expect(cosignatureTime(note.sigs[0].sig)).toBe(1_700_000_000);
    expect(openNote(note, [cosignatureVerifier(vk)]).verified.length).toBe(1);
    // An Ed25519 (0x01) verifier of the same key does not accept it: the key IDs differ.
    const plain = ed25519NoteVerifier({ ...vk, type: SIG_ED25519, keyId: keyIdOf(vk.name, SIG_ED25519, vk.publicKey) });
    expect(openNote(note, [plain]).verified.length).toBe(0);
    // Another timestamp in the bytes breaks the signature.
    const sig = Uint8Array.from(note.sigs[0].sig);
    sig[7] ^= 1;
    expect(cosignatureVerifier(vk).verify(text, sig)).toBe(false);
    expect(() => c.signAt(text, 0)).toThrow(RangeError);
  });
});

describe('tlog-proof', () => {
  it('reads the spec example up to its checkpoint, and writes what it reads', () => {
    const peter = ed25519NoteSigner(goSeed(N.peterSkey).name, goSeed(N.peterSkey).seed);
    const cpText = 'example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n';
    const head: string = c2sp.tlogProofExampleHead;
    const note = signNote(cpText, [peter]);
    const text = head.slice(0, head.indexOf('\n\n') + 2) + note;
    const p = parseProof(text);
    expect(p.index).toBe(73894);
    expect(p.proof.length).toBe(5);
    expect(p.extra).not.toBe(null);
    expect(p.note.text).toBe(cpText);
    expect(formatProof(p)).toBe(text);
  });
  it('refuses a malformed proof (INPUT_PROOF) or checkpoint (INPUT_NOTE)', () => {
    const ok = formatProof({ index: 0, proof: [], checkpointNote: N.signed });
    expect(parseProof(ok).index).toBe(0);
    for (const b of [ok.replace('@v1', '@v2'), ok.replace('index 0', 'index 00'), ok.replace('index 0\n', 'index 0\nAAAA\n'), ok.replace('index 0\n\n', 'index 0\n'), 'c2sp.org/tlog-proof@v1\nindex 1\n' + 'AA==\n'.repeat(64) + '\n']) {
      expect(codeOf(() => parseProof(b)), b.slice(0, 60)).toMatch(/^INPUT_(PROOF|NOTE)$/);
    }
    expect(codeOf(() => parseProof(ok.replace(N.peterSig, '')))).toBe('INPUT_NOTE');
  });
});

describe('tlog-policy', () => {
  const w = (i: number) => formatVkey(createCosigner(`w${i}.example`, new Uint8Array(32).fill(i), () => 1000));
  const log = formatVkey(ed25519NoteSigner('example.com/log', new Uint8Array(32).fill(99)));
  const example = (c2sp.policyShape as string)
    .replace('log <vkey>', `log ${log}`)
    .replace(/witness (\w+) <vkey>/g, (_m, n: string) => `witness ${n} ${w(n.charCodeAt(0) * 10 + Number(n[1]))}`);

  it('reads the spec example and decides its two-level quorum', () => {
    const p = parsePolicy(example);
    expect(p.logs.length).toBe(1);
    expect(p.witnesses.map((x) => x.name)).toEqual(['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3']);
    expect(quorumMet(p, new Set(['X1', 'X2', 'Y3']))).toBe(true);
    expect(quorumMet(p, new Set(['X1', 'Y1', 'Y2', 'Y3']))).toBe(false);
    expect(quorumMet(p, new Set(['X1', 'X2', 'X3']))).toBe(false);
    expect(quorumMet(parsePolicy('  # none\nquorum none\n'), new Set())).toBe(true);
  });

  it('refuses what the spec forbids (INPUT_POLICY), naming the line', () => {
    const bad = [
      '',
      'quorum none\nquorum none\n',
      'quorum X\n',
      `witness A ${w(1)}\nwitness B ${w(1)}\nquorum A\n`,
      `witness A ${w(1)}\nwitness A ${w(2)}\nquorum A\n`,
      `witness A ${w(1)}\ngroup G 2 A\nquorum G\n`,
      `witness A ${w(1)}\ngroup G 0 A\nquorum G\n`,
      `witness A ${w(1)}\ngroup G any A A\nquorum G\n`,
      `witness A ${w(1)}\ngroup G any none\nquorum G\n`,
      `group G any A\nwitness A ${w(1)}\nquorum G\n`,
      `witness A ${log}\nquorum A\n`,
      `log ${w(1)}\nquorum none\n`,
      'frobnicate\nquorum none\n',
      'quorum none\x0b\n',
    ];
    for (const b of bad) expect(codeOf(() => parsePolicy(b)), JSON.stringify(b)).toBe('INPUT_POLICY');
  });
});

describe('the add-checkpoint request (tlog-witness)', () => {
  it('parses the spec example body', async () => {
    const { parseAddCheckpoint } = await import('../../src/tlog/witness-protocol.js');
    const r = parseAddCheckpoint(c2sp.addCheckpointExample);
    expect(r.oldSize).toBe(20852014);
    expect(r.proof.length).toBe(4);
    const note = parseNote(r.checkpointNote);
    expect(parseCheckpoint(note.text)).toMatchObject({ origin: 'example.com/behind-the-sofa', size: 20852163 });
    expect(note.sigs.length).toBe(2);
  });
});
