// The waiting of a joined writer as the link does it (link.ts with backoff.ts), with its sleep
// and its randomness passed in, so nothing here depends on time: a machine that lost no race
// lately never waits; one that lost a race in the last CONTENDED_MS yields once before it
// asks the remote; a race lost during the write costs one pause, the first loser's, and is
// remembered in the anchor.
import { afterEach, describe, expect, it } from 'vitest';
import { readAnchor, writeAnchor } from '../../src/remote/anchor.js';
import { retryPauseMs, YIELD_MIN_MS } from '../../src/remote/backoff.js';
import { CONTENDED_MS } from '../../src/remote/link.js';
import { joinedRemote } from '../../src/remote/sync.js';
import { records, world, writeThroughLink, type Machine, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

const NOW = new Date('2030-01-01T00:00:00.000Z');
const lowest = (lo: number) => lo;

function write(m: Machine, op: string, sleeps: number[], during?: () => void) {
  let first = true;
  return writeThroughLink(m, op, { now: () => NOW, sleep: (ms) => void sleeps.push(ms), random: lowest }, {
    now: () => NOW,
    onDecide: () => {
      if (first && during) during();
      first = false;
    },
  }).ctx;
}

function contendAt(m: Machine, at: Date): void {
  const ctx = joinedRemote(m.ledger, m.env.LEDGER_STATE_DIR)!;
  writeAnchor(ctx.rp, { ...readAnchor(ctx.rp)!, contended_at: at.toISOString() });
}

describe('a joined writer waits', () => {
  it('not at all when its machine lost no race lately, and once, the yield, when it lost one', async () => {
    w = world(['ann', 'ben']);
    const [, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    const none: number[] = [];
    write(ben, 'quiet', none);
    expect(none).toEqual([]);

    contendAt(ben, new Date(NOW.getTime() - CONTENDED_MS - 1));
    const stale: number[] = [];
    write(ben, 'long-ago', stale);
    expect(stale).toEqual([]);

    contendAt(ben, new Date(NOW.getTime() - 1));
    const lately: number[] = [];
    write(ben, 'lately', lately);
    expect(lately).toEqual([YIELD_MIN_MS]);
  });

  it('after yielding and losing the race to another machine: one pause, then it publishes on the new tail and remembers the race', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    contendAt(ben, new Date(NOW.getTime() - 1000));
    const sleeps: number[] = [];
    // ann publishes while ben decides: ben's push (after a real ask) is refused, a lost race.
    const ctx = write(ben, 'second', sleeps, () => expect(ann.spawnSync(['append', 'handoff', '--op', 'first', '--exec', 'e', '--outcome', 'success']).code).toBe(0));
    expect(sleeps).toEqual([YIELD_MIN_MS, retryPauseMs(1, lowest)]);
    expect(retryPauseMs(1, lowest)).toBe(1);
    expect(readAnchor(ctx.rp)!.contended_at).toBe(NOW.toISOString());
    expect(records(ben).map((r) => r.logical_operation_id ?? null)).toEqual([null, 'first', 'second']);
  });
});
