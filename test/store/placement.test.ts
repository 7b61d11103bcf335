// The batch fast paths must produce exactly the bytes of the plain definitions: one
// canonicalisation around "sig" equals canonicalLine of the signed record, and signatures made
// on two cores equal those made one by one.
import { LedgerCache } from '../../src/cache/ledger-cache.js';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalAroundSig, canonicalJson, canonicalLine, digestOf, headDigest, textsAroundSig, writeAroundSig } from '../../src/canonical.js';
import { headProblems } from '../../src/record.js';
import { createSigner, signingMessage, verifySig } from '../../src/sign.js';
import { parseHead, signHead } from '../../src/store/head.js';
import { PARALLEL_THRESHOLD } from '../../src/sign-batch.js';
import { ROOT } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';

const safeJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.string({ unit: 'binary' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'binary' }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

// Strings with lone surrogates are refused by canonicalJson; keep only what it accepts.
const acceptable = (v: unknown) => {
  try {
    canonicalJson(v);
    return true;
  } catch {
    return false;
  }
};

describe('canonicalAroundSig', () => {
  it('equals canonicalLine of the record with its sig, for any member names and values', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }).filter((k) => k !== 'sig'), safeJson, { maxKeys: 8 }),
        fc.record({ alg: fc.constant('ed25519'), key: fc.string(), value: fc.string() }),
        (unsigned, sig) => {
          fc.pre(acceptable(unsigned) && acceptable(sig));
          const { unsignedText, lineWithSig } = canonicalAroundSig(unsigned);
          expect(unsignedText).toBe(canonicalJson(unsigned));
          expect(lineWithSig(sig)).toBe(canonicalLine({ ...unsigned, sig }));
        },
      ),
      { numRuns: runs(500, 50_000) },
    );
  });

  it('writeAroundSig writes the same line into a buffer, and the id of the text without sig, at any offset', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }).filter((k) => k !== 'sig'), safeJson, { maxKeys: 8 }),
        fc.record({ alg: fc.constant('ed25519'), key: fc.string(), value: fc.string() }),
        fc.nat({ max: 40 }),
        (unsigned, sig, offset) => {
          fc.pre(acceptable(unsigned) && acceptable(sig));
          const texts = textsAroundSig(unsigned);
          const member = Buffer.from('"sig":' + canonicalJson(sig), 'utf8');
          const buf = Buffer.alloc(offset + (texts.before.length + texts.after.length) * 3 + member.length + 2 + 5, 0x7e);
          const w = writeAroundSig(texts, buf, offset, member);
          expect(buf.subarray(offset, w.end).toString('utf8')).toBe(canonicalLine({ ...unsigned, sig }));
          expect(buf.subarray(w.memberAt, w.memberAt + member.length).equals(member)).toBe(true);
          expect(w.id).toBe(digestOf(canonicalJson(unsigned)));
          expect(buf.subarray(0, offset).every((b) => b === 0x7e)).toBe(true);
        },
      ),
      { numRuns: runs(500, 50_000) },
    );
    for (const unsigned of [{}, { a: 1 }, { z: 1 }, { a: 'é', z: '日本' }]) {
      const sig = { alg: 'ed25519', key: 'k', value: 'v' };
      const member = Buffer.from('"sig":' + canonicalJson(sig));
      const buf = Buffer.alloc(200);
      const w = writeAroundSig(textsAroundSig(unsigned), buf, 3, member);
      expect(buf.subarray(3, w.end).toString('utf8')).toBe(canonicalLine({ ...unsigned, sig }));
    }
  });

  it('handles members that all sort before, or all after, "sig"', () => {
    for (const unsigned of [{}, { a: 1 }, { z: 1 }, { sia: 1, sih: 2 }, { 'sig\u0000': 1, SIG: 2 }]) {
      const sig = { alg: 'ed25519', key: 'k', value: 'v' };
      expect(canonicalAroundSig(unsigned).lineWithSig(sig)).toBe(canonicalLine({ ...unsigned, sig }));
    }
  });

  it('keeps a member named "__proto__" as a member, not a prototype', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    for (const unsigned of [JSON.parse('{"__proto__":[1],"z":2}'), { ...JSON.parse('{"__proto__":{"a":1}}'), deep }]) {
      const sig = { alg: 'ed25519', key: 'k', value: 'v' };
      expect(canonicalAroundSig(unsigned).lineWithSig(sig)).toBe(canonicalLine({ ...unsigned, sig }));
      expect(canonicalAroundSig(unsigned).unsignedText).toContain('"__proto__":');
    }
  });

  it('refuses an unsigned record that already has a sig', () => {
    expect(() => canonicalAroundSig({ sig: 1 })).toThrow(/no sig/);
  });
});

describe('signHead (one canonicalisation for the digest and the line)', () => {
  const signer = createSigner(new Uint8Array(randomBytes(32)));
  const digest = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => 'sha256:' + Buffer.from(b).toString('hex'));
  const time = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((t) => new Date(t).toISOString());
  const unsignedHead = fc.record({ v: fc.constant(1 as const), genesis: digest, seq: fc.maxSafeNat(), tail: digest, size: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), ts: time });

  it('signs headDigest and writes exactly canonicalLine of the signed HEAD, which parses back to it', () => {
    fc.assert(
      fc.property(unsignedHead, (u) => {
        const { head, bytes } = signHead(u, signer);
        expect(head).toEqual({ ...u, sig: head.sig });
        expect(bytes.toString('utf8')).toBe(canonicalLine(head));
        expect(headProblems(head)).toEqual([]);
        expect(verifySig('head', headDigest(head), head.sig)).toBe(true);
        expect(parseHead(bytes, 'HEAD')).toEqual(head);
      }),
      { numRuns: runs(100, 5_000) },
    );
  });

  it('parseHead hands out copies: changing one changes neither the cache nor the next', () => {
    const { bytes } = signHead({ v: 1, genesis: `sha256:${'a'.repeat(64)}`, seq: 3, tail: `sha256:${'b'.repeat(64)}`, size: 99, ts: '2030-01-01T00:00:00.000Z' }, signer);
    const cache = new LedgerCache(true, '/nonexistent-state');
    const first = parseHead(bytes, 'HEAD', cache);
    first.seq = 7;
    first.sig.value = 'x';
    const again = parseHead(bytes, 'HEAD', cache);
    expect(again.seq).toBe(3);
    expect(verifySig('head', headDigest(again), again.sig)).toBe(true);
  });
});

describe('when a batch is large enough to sign on two cores', () => {
  it('yields the same signatures as signing one by one', () => {
    const signer = createSigner(new Uint8Array(randomBytes(32)));
    const messages = Array.from({ length: PARALLEL_THRESHOLD + 17 }, (_, i) => signingMessage('record', `sha256:${String(i).padStart(64, '0')}`));
    const parallel = signer.signProduced!(messages.length, (i) => messages[i]);
    expect(parallel).toHaveLength(messages.length);
    messages.forEach((m, i) => expect(Buffer.from(parallel[i]).equals(Buffer.from(signer.sign(m))), `message ${i}`).toBe(true));
  });

  it('has its worker take part also in a host run as `node --input-type=module -e` (whose flag a worker must not inherit)', () => {
    // The main thread's own signing function counts what it signed: fewer than all means the
    // worker signed the rest. (Before the worker was started without the host's flags, it failed
    // to start there and the main thread signed everything, correctly but alone.)
    const script = `
      import { generateKeyPairSync, sign, verify } from 'node:crypto';
      const { signProduced } = await import(${JSON.stringify(join(ROOT, 'dist/src/sign-batch.js'))});
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
      const count = 20000;
      const msgs = Array.from({ length: count }, (_, i) => Buffer.from(String(100000 + i)));
      let mine = 0;
      const sigs = signProduced(count, (i) => msgs[i], pkcs8, (m) => (mine++, sign(null, m, privateKey)));
      const bad = sigs.filter((s, i) => !verify(null, msgs[i], publicKey, s)).length;
      console.log(JSON.stringify({ mine, count, bad }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { mine: number; count: number; bad: number };
    expect(out.bad).toBe(0);
    expect(out.mine).toBeLessThan(out.count);
  });
});

describe('canonicalJson on a value that contains itself', () => {
  it('throws a coded INPUT_CANONICAL error, not a stack overflow', () => {
    const a: Record<string, unknown> = { x: [1] };
    (a.x as unknown[]).push(a);
    expect(() => canonicalJson(a)).toThrow(expect.objectContaining({ code: 'INPUT_CANONICAL' }));
    const shared = {};
    expect(canonicalJson({ p: shared, q: [shared] })).toBe('{"p":{},"q":[{}]}');
  });
});

describe('when a batch is placed straight into its output buffer (issue 26: no text kept per record)', () => {
  const draftOf = (i: number, note: string) => ({ kind: 'handoff', agent: 'bench', logical_operation_id: `op_${i % 7}`, execution_id: `exec_${i}`, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: note } }, depends_on: [] });
  // ASCII, two- three- and four-byte UTF-8, and members that sort before and after "sig".
  const NOTES = ['14 passed', 'déjà vu', '日本語のテスト', 'emoji 🚀 ok', 'a"quote\\and\nnewline'];

  /** A new ledger in a temporary folder, given to `use` with its directory; removed after. */
  async function withLedger(use: (ledger: import('../../src/ledger.js').Ledger, dir: string) => Promise<void> | void): Promise<void> {
    const { Ledger } = await import('../../src/ledger.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'placement-'));
    try {
      const { ledger } = Ledger.init({ dir: join(dir, '.ledger'), key: createSigner(new Uint8Array(randomBytes(32))), agent: 'bench' });
      await use(ledger, join(dir, '.ledger'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('writes, for a batch signed on two cores, exactly canonicalLine of each signed record, chained, at the offsets it reports', async () => {
    const { readFileSync } = await import('node:fs');
    const { recordId } = await import('../../src/canonical.js');
    await withLedger(async (ledger, dir) => {
      const drafts = Array.from({ length: PARALLEL_THRESHOLD + 9 }, (_, i) => draftOf(i, NOTES[i % NOTES.length]));
      const res = ledger.append(drafts as never);
      const bytes = readFileSync(join(dir, 'records.jsonl'));
      const lines = bytes.toString('utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(drafts.length + 1);
      let prevId = recordId(JSON.parse(lines[0]) as object);
      res.records.forEach((r, i) => {
        const line = lines[i + 1];
        const record = JSON.parse(line) as { prev_tail_hash: string; sig: { value: string } };
        expect(line + '\n', `line ${i + 1}`).toBe(canonicalLine(record));
        expect(record.prev_tail_hash).toBe(prevId);
        expect(recordId(record)).toBe(r.id);
        expect(verifySig('record', r.id, record.sig as never)).toBe(true);
        expect(bytes.subarray(r.offset, r.offset + Buffer.byteLength(line)).toString('utf8')).toBe(line);
        prevId = r.id;
      });
      // The tree, hashed line by line as the signatures were made (growTree), is the one the
      // records give when hashed afresh, and HEAD's checkpoint names its root.
      const { storedHashesOfRecords, CHECKPOINT_FILE, TREE_FILE } = await import('../../src/store/checkpoint.js');
      const { ledgerPaths } = await import('../../src/store/paths.js');
      const { realFileOps } = await import('../../src/fs/ops.js');
      const { parseCheckpoint } = await import('../../src/tlog/checkpoint.js');
      const { parseNote } = await import('../../src/tlog/note.js');
      const { treeHash, arrayReader } = await import('../../src/tlog/tree.js');
      const head = res.head;
      const fresh = storedHashesOfRecords(realFileOps, ledgerPaths(dir), head, head.seq + 1);
      expect(Buffer.from(readFileSync(join(dir, TREE_FILE))).equals(Buffer.from(fresh))).toBe(true);
      const stored = Array.from({ length: fresh.length / 32 }, (_, k) => fresh.subarray(k * 32, k * 32 + 32));
      const cp = parseCheckpoint(parseNote(readFileSync(join(dir, CHECKPOINT_FILE))).text);
      expect(cp.size).toBe(head.seq + 1);
      expect(Buffer.from(cp.root).equals(Buffer.from(treeHash(head.seq + 1, arrayReader(stored))))).toBe(true);
    });
  });

  it('refuses a batch whose last record is too long, past the two-core threshold, and writes nothing', async () => {
    const { MAX_LINE_BYTES } = await import('../../src/record.js');
    const { readFileSync } = await import('node:fs');
    await withLedger((ledger, dir) => {
      const before = [readFileSync(join(dir, 'records.jsonl')), readFileSync(join(dir, 'HEAD'))];
      const drafts = Array.from({ length: PARALLEL_THRESHOLD + 2 }, (_, i) => draftOf(i, 'x'));
      // Each text within its limit; the line (two bytes a character) past MAX_LINE_BYTES.
      const big = draftOf(drafts.length, 'x');
      big.invariants = Object.fromEntries(Array.from({ length: Math.ceil(MAX_LINE_BYTES / 8000) + 1 }, (_, k) => [`inv_${k}`, { ok: true, detail: 'é'.repeat(4000) }])) as never;
      drafts.push(big);
      expect(() => ledger.append(drafts as never)).toThrow(new RegExp(`record ${drafts.length} would be \\d+ bytes; a record line is at most ${MAX_LINE_BYTES}`));
      expect([readFileSync(join(dir, 'records.jsonl')), readFileSync(join(dir, 'HEAD'))]).toEqual(before);
    });
  });
});
