// The parallel audit (audit/parallel.ts) must reach exactly the one-thread verdict: same layer,
// seq, findings and counts, whatever the tampering and wherever the ranges are cut. Real workers
// run the compiled worker (`npm test` builds first): the library's (dist/audit/worker.js) and the
// CLI's, the same module bundled into one file (dist/cli/worker.js), on valid ledgers and above a
// floor. The verdict properties (every edit at every seq, random damage: about 190 ranges) check
// the ranges on this thread with the worker's own function (`rangesHere`, audit/range.ts): the
// cutting, the seams and the merging under test are the same, and a thread's start, most of what
// each case cost, is left out (the file took 22 s of the suite's time with threads).
import { closeSync, existsSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runAudit } from '../../audit/index.js';
import { cutRange } from '../../audit/parallel.js';
import type { AuditReport } from '../../audit/report.js';
import { canonicalLine } from '../../src/canonical.js';
import type { Trust } from '../../src/keys/trust.js';
import { ROOT } from '../helpers/cli.js';
import { buildLedger, floorOf, headForLines, serializeLedger, signerFor, type Json } from '../helpers/gen-ledger.js';
import { runs } from '../helpers/runs.js';

// `npm run soak` multiplies the runs; give those tests room beyond the 60 s default.
const SOAK_TIMEOUT = process.env.SOAK === '1' ? 60 * 60_000 : undefined;
import { NOW, freshDir, writeLedger } from './harness.js';

const libraryWorker = pathToFileURL(join(ROOT, 'dist/audit/worker.js'));
const workerUrl = pathToFileURL(join(ROOT, 'dist/cli/worker.js'));
const N = 12;

/** Both audits of the same bytes; the test compares everything a caller can see. */
async function both(files: { records: Buffer; head: Buffer }, trust: Trust, threads: number, floor?: Json, worker: URL | 'here' = 'here') {
  const w = writeLedger({ ...files, trust: JSON.stringify(trust) });
  let floorPath: string | undefined;
  if (floor) {
    floorPath = join(w.base, 'floor.json');
    writeFileSync(floorPath, canonicalLine(floor));
  }
  const opts = { dir: w.dir, trust, now: NOW, floorPath };
  const view = (r: AuditReport) => ({ ok: r.ok, layer: r.failed_layer, failure: r.failure, checked: r.checked, findings: r.findings, total: r.findings_total, warnings: r.warnings });
  return { one: view(await runAudit({ ...opts, threads: 1 })), many: view(await runAudit({ ...opts, threads, minBytes: 0, ...(worker === 'here' ? { rangesHere: true } : { workerUrl: worker }) })) };
}

// Tamperings that each leave a validly signed record (so the fault is in one layer).
const EDITS: Record<string, (r: Json, seq: number) => Json> = {
  prev: (r) => ({ ...r, prev_tail_hash: 'sha256:' + 'ab'.repeat(32) }),
  seq: (r, seq) => ({ ...r, seq: seq + 1 }),
  backwards: (r) => ({ ...r, ts: '2026-11-29T11:00:00.000Z' }),
  extra: (r) => ({ ...r, extra: 1 }),
  genesis: (r) => ({ v: 1, seq: r.seq, prev_tail_hash: r.prev_tail_hash, ts: r.ts, kind: 'genesis', agent: r.agent, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }),
};

describe('the parallel audit reaches the one-thread verdict', () => {
  it('really uses workers (a missing worker script fails the run) once there is enough to check', async () => {
    expect(existsSync(libraryWorker)).toBe(true);
    expect(existsSync(workerUrl)).toBe(true);
    const led = buildLedger({ count: N });
    const w = writeLedger(led);
    const missing = pathToFileURL(join(ROOT, 'dist/audit/no-such-worker.js'));
    await expect(runAudit({ dir: w.dir, trust: led.trust, now: NOW, threads: 2, minBytes: 0, workerUrl: missing })).rejects.toThrow();
    expect((await runAudit({ dir: w.dir, trust: led.trust, now: NOW, threads: 2, workerUrl: missing })).ok).toBe(true);
    expect((await runAudit({ dir: w.dir, trust: led.trust, now: NOW, threads: 1, minBytes: 0, workerUrl: missing })).ok).toBe(true);
  });

  it('on a valid ledger, cut into 2 to 4 ranges, on the library\'s and the CLI\'s workers', async () => {
    const led = buildLedger({ count: N });
    for (const worker of [libraryWorker, workerUrl]) {
      for (const threads of [2, 3, 4]) {
        const { one, many } = await both(serializeLedger(led), led.trust, threads, undefined, worker);
        expect(many, `${threads} threads`).toEqual(one);
        expect(one.ok).toBe(true);
      }
    }
  });

  it('a range checked here reaches what its thread reaches, on a damaged ledger too', async () => {
    const led = buildLedger({ count: N, edit: (r, seq) => (seq === 5 ? EDITS.prev(r, seq) : r) });
    const here = await both(serializeLedger(led), led.trust, 3);
    const thread = await both(serializeLedger(led), led.trust, 3, undefined, workerUrl);
    expect(here.many).toEqual(thread.many);
    expect(here.one.ok).toBe(false);
  });

  it('for every edit at every seq (so each lands on a seam and inside a range)', async () => {
    for (const [name, edit] of Object.entries(EDITS)) {
      for (let at = 1; at < N; at++) {
        const led = buildLedger({ count: N, edit: (r, seq) => (seq === at ? edit(r, seq) : r) });
        const { one, many } = await both(serializeLedger(led), led.trust, 3);
        expect(many, `${name} at ${at}`).toEqual(one);
        expect(one.ok, `${name} at ${at}`).toBe(false);
      }
    }
  });

  it('for an unpinned signer, a deleted line and a random byte change', async () => {
    const led = buildLedger({ count: N });
    const cases = fc.sample(fc.tuple(fc.nat(N - 1), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.integer({ min: 2, max: 4 })), runs(12, 500));
    for (const [at, byte, xor, threads] of cases) {
      const unpinned = buildLedger({ count: N, signerFor: (seq) => (seq === at ? signerFor('intruder') : null) });
      const a = await both(serializeLedger(unpinned), unpinned.trust, threads);
      expect(a.many, `unpinned at ${at}`).toEqual(a.one);

      const lines = led.lines.filter((_, i) => i !== at);
      const b = await both({ records: Buffer.from(lines.join('')), head: Buffer.from(headForLines(lines, signerFor('harness')).line) }, led.trust, threads);
      expect(b.many, `deleted ${at}`).toEqual(b.one);

      const records = Buffer.from(serializeLedger(led).records);
      records[byte % records.length] ^= xor;
      const c = await both({ records, head: Buffer.from(led.headLine) }, led.trust, threads);
      expect(c.many, `byte ${byte % records.length}`).toEqual(c.one);
    }
  }, SOAK_TIMEOUT);

  it('above a floor, and with a floor at HEAD', async () => {
    const led = buildLedger({ count: N, edit: (r, seq) => (seq === 9 ? EDITS.backwards(r, seq) : r) });
    for (const at of [2, 5, N - 1]) {
      const { one, many } = await both(serializeLedger(led), led.trust, 3, floorOf(led, at), workerUrl);
      expect(many, `floor ${at}`).toEqual(one);
    }
  });
});

describe('cutRange', () => {
  it('cuts only at line starts, in order, and keeps every byte', () => {
    const led = buildLedger({ count: 40 });
    const bytes = serializeLedger(led).records;
    const path = join(freshDir(), 'r');
    writeFileSync(path, bytes);
    const fd = openSync(path, 'r');
    for (const k of [1, 2, 3, 7, 40, 100]) {
      const cuts = cutRange(fd, 0, bytes.length, k);
      expect(cuts[0]).toBe(0);
      expect(cuts.at(-1)).toBe(bytes.length);
      for (const c of cuts.slice(1, -1)) expect(led.offsets, `k ${k}`).toContain(c);
      expect([...cuts].sort((a, b) => a - b)).toEqual(cuts);
      expect(new Set(cuts).size).toBe(cuts.length);
    }
    closeSync(fd);
  });
});
