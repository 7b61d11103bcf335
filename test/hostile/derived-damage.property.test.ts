// The files a ledger keeps beside its records, and this user's own state, damaged any way (a
// flipped byte, anywhere or near the end, a cut, junk after, emptied, removed, another such
// file's bytes). These files are derived or kept for speed (docs/guarantees.md: the index is
// trusted only to locate; the per-user state saves work, never decides): `.ledger/index/` (the
// record index's segment and the work-log fold memo), `.ledger/tree`, `.ledger/checkpoint`
// (signed: a damaged one holds the gate, SPEC 13), and the state directory's chain memo, floor
// and writer marks. After the damage, the read verbs (status, log, pending) answer exactly as
// before, a gate as before or held (never proceeding where it held), and nothing is thrown, not
// even a coded refusal; and a writer appends and checkpoints (a writer mark that no longer
// parses refuses it), after which the ledger audits clean, its checkpoint and tree included.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { Ledger, auditLedger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { trustEntry } from '../../src/keys/trust.js';
import { createSigner } from '../../src/sign.js';
import { runs } from '../helpers/runs.js';

const signer = createSigner(new Uint8Array(32).fill(4));
const trust = { v: 1 as const, keys: [trustEntry('harness', signer.publicKey, 0, { admin: true })] };
const OPS = ['op1', 'op2', 'op3', 'task-one'];
const handoff = (op: string, outcome: string): Draft => ({ kind: 'handoff', agent: 'ann', logical_operation_id: op, execution_id: 'e1', outcome, evidence: {}, invariants: { tests: { ok: true, detail: 'ok' } }, depends_on: [] }) as Draft;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)]));
}

describe('when a derived file or this user\'s state is damaged', () => {
  let root = '';
  let clock = Date.parse('2026-06-01T10:00:00.000Z');
  const now = () => new Date(clock);
  const open = () => Ledger.open({ dir: join(root, '.ledger'), key: signer, now, stateDir: join(root, 'state'), trust });
  const answers = (l: Ledger) => {
    const s = l.status({ agent: 'ann' });
    return {
      reads: JSON.stringify({ items: s.items, through: s.through, intents: s.pending_intents, unresolved: s.unresolved_outcomes, log: l.log({}).map((r) => r.id), pending: l.pendingReport({ now: clock }) }),
      gates: OPS.map((op) => {
        const g = l.gate({ op, now: clock });
        return { ok: g.ok, failed: g.failed_term, terms: g.terms };
      }),
    };
  };
  let base: ReturnType<typeof answers>;
  let kept: Map<string, Buffer>;
  let derived: string[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'derived-damage-'));
    const { ledger } = Ledger.init({ dir: join(root, '.ledger'), key: signer, agent: 'ann', now, stateDir: join(root, 'state'), trust });
    const tick = () => (clock += 60_000);
    await ledger.start({ slug: 'task-one', agent: 'ann', summary: 'the first item', views: false });
    tick();
    await ledger.checkpoint({ slug: 'task-one', agent: 'ann', done: 'd', state: 's', next: 'n', views: false });
    tick();
    await ledger.start({ slug: 'task-two', agent: 'bob', summary: 'the second item', views: false });
    ledger.append([{ kind: 'intent', agent: 'ann', logical_operation_id: 'op1', execution_id: 'e1', action: 'deploy' } as Draft, handoff('op1', 'success')]);
    ledger.append(handoff('op2', 'timeout'));
    // Past the index's delta and the fold memo's stride: a segment and a memo are written.
    ledger.append(Array.from({ length: 300 }, (_, i) => handoff(`ci-${i}`, 'success')));
    tick();
    const r = ledger.append(handoff('op3', 'success'));
    ledger.revoke({ agent: 'ann', target: r.records[0].id, reason: 'a bad build' });
    tick();
    await ledger.finish({ slug: 'task-one', agent: 'ann', done: 'd', state: 's', next: 'n', views: false });
    // Every cache and derived file made and used once, then the answers from a fresh Ledger.
    answers(open());
    base = answers(open());
    kept = new Map(filesUnder(root).map((p) => [p, readFileSync(p)]));
    derived = [...kept.keys()].filter((p) => !/\/\.ledger\/(records\.jsonl|HEAD)$/.test(p));
    const names = derived.map((p) => relative(root, p));
    for (const want of [/^\.ledger\/index\/.*\.seg$/, /^\.ledger\/index\/work-fold\.json$/, /^\.ledger\/tree$/, /^\.ledger\/checkpoint$/, /^state\/chain\//, /^state\/floor\//, /^state\/marks\//]) {
      expect(names.some((n) => want.test(n)), `${want} among ${names.join(', ')}`).toBe(true);
    }
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Every file as it was: the damaged one, and whatever a read wrote or removed since. */
  const restore = () => {
    for (const p of filesUnder(root)) if (!kept.has(p)) unlinkSync(p);
    for (const [p, bytes] of kept) writeFileSync(p, bytes);
  };

  /** `file` damaged `how` (the bytes at `at`, with `byte`). */
  const damage = (file: string, how: string, at: number, byte: number) => {
    const bytes = Buffer.from(kept.get(file)!);
    if (how === 'flip' && bytes.length > 0) {
      bytes[at % bytes.length] ^= byte;
      writeFileSync(file, bytes);
    } else if (how === 'flip-end' && bytes.length > 0) {
      // In the last 32 bytes: in `tree`, the newest stored hash, always on the tree's right edge.
      bytes[bytes.length - 1 - (at % Math.min(32, bytes.length))] ^= byte;
      writeFileSync(file, bytes);
    } else if (how === 'cut') writeFileSync(file, bytes.subarray(0, at % (bytes.length + 1)));
    else if (how === 'junk') writeFileSync(file, Buffer.concat([bytes, Buffer.from([byte, 0x0a, byte])]));
    else if (how === 'empty') writeFileSync(file, '');
    else if (how === 'remove') unlinkSync(file);
    else if (how === 'swap') writeFileSync(file, kept.get(derived[at % derived.length])!);
  };
  const HOW = ['flip', 'flip-end', 'cut', 'junk', 'empty', 'remove', 'swap'] as const;

  // Hang guards: a soak's thousands of runs take minutes, more on a loaded machine.
  it('property: the reads answer as before, and a gate answers as before or holds', { timeout: runs(300_000, 3_600_000) }, () => {
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom(...HOW), fc.nat(), fc.integer({ min: 1, max: 255 }), (pick, how, at, byte) => {
        restore();
        const file = derived[pick % derived.length];
        damage(file, how, at, byte);
        const where = `${relative(root, file)} ${how} at ${at} with ${byte}`;
        let got: ReturnType<typeof answers>;
        try {
          got = answers(open());
        } catch (e) {
          // Not even a coded refusal: none of these files decides anything (a damaged own floor
          // once stopped every gate with INPUT_JSON).
          throw new Error(`${where}: ${e instanceof LedgerError ? `${e.code} ` : ''}${(e as Error).message}`);
        }
        expect(got.reads, where).toBe(base.reads);
        got.gates.forEach((g, i) => {
          if (JSON.stringify(g) !== JSON.stringify(base.gates[i])) expect(g.ok, `${where}: the gate on ${OPS[i]} ${JSON.stringify(g)}, before ${JSON.stringify(base.gates[i])}`).toBe(false);
        });
      }),
      { numRuns: runs(60, 3_000) },
    );
    restore();
  });
  it('property: a writer after the damage appends and checkpoints, and the ledger audits clean, checkpoint and tree included', { timeout: runs(300_000, 3_600_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.constantFrom(...HOW), fc.nat(), fc.integer({ min: 1, max: 255 }), async (pick, how, at, byte) => {
        restore();
        const file = derived[pick % derived.length];
        damage(file, how, at, byte);
        const where = `${relative(root, file)} ${how} at ${at} with ${byte}`;
        const l = open();
        try {
          l.append(handoff('after', 'success'));
          await l.start({ slug: 'task-two', agent: 'bob', summary: 'again', views: false });
          await l.checkpoint({ slug: 'task-two', agent: 'bob', done: 'd', state: 's', next: 'n', views: false });
        } catch (e) {
          // The one refusal: a writer mark that no longer parses (docs/guarantees.md).
          if (e instanceof LedgerError && e.code === 'OP_STATE' && relative(root, file).startsWith('state/marks/')) return;
          throw new Error(`${where}: ${e instanceof LedgerError ? `${e.code} ` : ''}${(e as Error).message}`);
        }
        const report = await auditLedger({ dir: join(root, '.ledger'), trust, now: clock });
        expect(report.ok, `${where}: ${JSON.stringify(report.failure)}`).toBe(true);
        expect(open().status({ agent: 'bob' }).items.find((i) => i.slug === 'task-two')?.last_checkpoint?.agent, where).toBe('bob');
      }),
      { numRuns: runs(25, 1_000) },
    );
    restore();
  });
});
