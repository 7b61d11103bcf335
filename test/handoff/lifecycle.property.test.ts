// The work-item lifecycle (SPEC 10: start, checkpoint, finish, release, note, takeover) against a
// model, over random runs of two agents on two items with a clock that moves: every refusal
// leaves the records byte for byte as they were; a checkpoint, finish or release by anyone but
// the owner of an open item, a start on another agent's live lease without --takeover --force,
// and on a lapsed one without --takeover, are refused; a note needs an item; and after each
// step `status` gives the model's owner and lease state for every item, both from the Ledger
// that wrote and from one opened fresh (its caches of its own: src/cache/).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger.js';
import { createSigner } from '../../src/sign.js';
import { runs } from '../helpers/runs.js';

const AGENTS = ['ann', 'bob'];
const SLUGS = ['task-one', 'task-two'];
const LEASE_MS = 60 * 60_000; // the default lease

type Op =
  | { t: 'start'; slug: string; agent: string; takeover: boolean; force: boolean }
  | { t: 'checkpoint' | 'finish' | 'release' | 'note'; slug: string; agent: string }
  | { t: 'wait'; min: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('start' as const), slug: fc.constantFrom(...SLUGS), agent: fc.constantFrom(...AGENTS), takeover: fc.boolean(), force: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constantFrom('checkpoint' as const, 'finish' as const, 'release' as const), slug: fc.constantFrom(...SLUGS), agent: fc.constantFrom(...AGENTS) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('note' as const), slug: fc.constantFrom(...SLUGS), agent: fc.constantFrom(...AGENTS) }) },
  // Around the lease's end: just before, just after, and well past it.
  { weight: 2, arbitrary: fc.record({ t: fc.constant('wait' as const), min: fc.constantFrom(1, 30, 59, 61, 120) }) },
);

/** What the model knows of an item: its owner (null: released or finished) and lease end. */
interface Item { owner: string | null; until: number; finished: boolean }

async function step(ledger: Ledger, op: Exclude<Op, { t: 'wait' }>): Promise<LedgerError | null> {
  try {
    if (op.t === 'start') await ledger.start({ slug: op.slug, agent: op.agent, summary: 'a try', takeover: op.takeover, ...(op.force ? { force: true, reason: 'its session died' } : {}), views: false });
    else if (op.t === 'checkpoint') await ledger.checkpoint({ slug: op.slug, agent: op.agent, done: 'd', state: 's', next: 'n', views: false });
    else if (op.t === 'finish') await ledger.finish({ slug: op.slug, agent: op.agent, done: 'd', state: 's', next: 'n', views: false });
    else if (op.t === 'release') await ledger.release({ slug: op.slug, agent: op.agent, views: false });
    else await ledger.note({ slug: op.slug, agent: op.agent, text: 'a remark', views: false });
    return null;
  } catch (e) {
    if (e instanceof LedgerError) return e;
    throw e;
  }
}

describe('when agents start, checkpoint, finish, release and note work items in any order', () => {
  it('property: the rules hold, a refusal changes nothing, and status is the model\'s, fresh or not', { timeout: runs(300_000, 3_600_000) }, async () => {
    const signer = createSigner(new Uint8Array(32).fill(3));
    await fc.assert(
      // Each run begins with a start, so that little of it is spent on items nobody started.
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25, size: 'max' }), async (rest) => {
        const ops: Op[] = [{ t: 'start', slug: SLUGS[0], agent: AGENTS[0], takeover: false, force: false }, ...rest];
        const root = mkdtempSync(join(tmpdir(), 'lifecycle-'));
        const dir = join(root, '.ledger');
        const stateDir = join(root, 'state');
        let clock = Date.parse('2026-06-01T10:00:00.000Z');
        const now = () => new Date(clock);
        try {
          const { ledger } = Ledger.init({ dir, key: signer, agent: 'ann', now, stateDir });
          const records = () => readFileSync(join(dir, 'records.jsonl'));
          const model = new Map<string, Item>();
          const trail: string[] = [];
          for (const op of ops) {
            if (op.t === 'wait') {
              clock += op.min * 60_000;
              trail.push(`wait ${op.min}m`);
              continue;
            }
            const m = model.get(op.slug);
            const open = m !== undefined && !m.finished;
            const other = open && m.owner !== null && m.owner !== op.agent;
            const live = open && m.owner !== null && m.until > clock;
            const before = records();
            const err = await step(ledger, op);
            trail.push(`${JSON.stringify(op)}: ${err ? `${err.code} ${err.message}` : 'ok'}`);
            const why = (what: string) => `${what}, after:\n${trail.join('\n')}`;
            if (err) expect(records().equals(before), why('a refusal changed the records')).toBe(true);
            if (op.t === 'checkpoint' || op.t === 'finish' || op.t === 'release') {
              if (!open || m.owner !== op.agent) expect(err, why(`${op.t} by someone who does not own an open item`)).not.toBeNull();
            }
            if (op.t === 'start' && other && live && !(op.takeover && op.force)) expect(err, why('a live lease taken')).not.toBeNull();
            if (op.t === 'start' && other && !live && !op.takeover) expect(err, why('a lapsed lease taken without --takeover')).not.toBeNull();
            if (op.t === 'note') expect(err === null, why('a note')).toBe(m !== undefined);
            if (!err) {
              if (op.t === 'start') model.set(op.slug, { owner: op.agent, until: clock + LEASE_MS, finished: false });
              else if (op.t === 'checkpoint') m!.until = clock + LEASE_MS;
              else if (op.t === 'finish') Object.assign(m!, { owner: null, finished: true });
              else if (op.t === 'release') m!.owner = null;
            }
            for (const l of [ledger, Ledger.open({ dir, key: signer, now, stateDir })]) {
              const s = l.status({ agent: 'ann' });
              for (const slug of SLUGS) {
                const want = model.get(slug);
                const item = s.items.find((i) => i.slug === slug);
                if (!want || want.finished) {
                  expect(item, why(`${slug} listed as open`)).toBeUndefined();
                  continue;
                }
                expect(item?.owner, why(`${slug}'s owner`)).toBe(want.owner);
                if (want.owner !== null) expect(item!.lease.state, why(`${slug}'s lease`)).toBe(want.until > clock ? 'live' : 'lapsed');
              }
            }
          }
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: runs(12, 500) },
    );
  });
});
