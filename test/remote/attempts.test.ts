// The attempts of one joined write (src/remote/link.ts), as records: each attempt is made from
// the one before (`following`), and after a refused push `again` decides, with its sleep and
// randomness passed in, so nothing here depends on time or on git. A write gives up after
// ATTEMPTS lost races (the one number the docs state, named here), pausing as backoff.ts says
// between them; a refused guess from the anchor lost to nobody: no attempt, no pause.
import { describe, expect, it } from 'vitest';
import { retryPauseMs } from '../../src/remote/backoff.js';
import { ATTEMPTS, following, RemoteLink, type LinkAttempt } from '../../src/remote/link.js';
import { remotePaths } from '../../src/remote/state.js';

const lowest = (lo: number) => lo;

function link(sleeps: number[], attempts?: number): RemoteLink {
  const rp = remotePaths('/nonexistent-state', '/nonexistent-ledger');
  return new RemoteLink(rp, { v: 1, url: '/nonexistent-remote.git', ref: 'refs/handoff/ledger', trust: '/nonexistent-trust.json' }, () => ({ v: 1, keys: [] }), { sleep: (ms) => void sleeps.push(ms), random: lowest, ...(attempts !== undefined ? { attempts } : {}) });
}

/** A refused attempt after `prior`, as refresh would make it (its basis: how the remote's state was learned). */
function refused(prior: LinkAttempt | null, basis: LinkAttempt['basis']): LinkAttempt {
  return { ...following(prior), basis, expected: null, adopted: 0, contendedAt: undefined, ledgerDir: '/nonexistent-ledger', outcome: 'moved' };
}

/** Runs a write whose every push is refused; returns how many attempts it made before it gave up. */
function contendedWrite(l: RemoteLink, firstGuessed: boolean): { attempts: number; last: LinkAttempt } {
  let a = refused(null, firstGuessed ? 'guessed' : 'fetched');
  while (l.again(a)) a = refused(a, 'fetched');
  return { attempts: a.n, last: a };
}

describe('a joined write under contention', () => {
  it(`gives up after ATTEMPTS (${ATTEMPTS}) lost races, pausing after each but the last as backoff.ts says`, () => {
    const sleeps: number[] = [];
    const { attempts, last } = contendedWrite(link(sleeps), false);
    expect(attempts).toBe(ATTEMPTS);
    expect(last.lost).toBe(ATTEMPTS - 1);
    expect(sleeps).toEqual(Array.from({ length: ATTEMPTS - 1 }, (_, i) => retryPauseMs(i + 1, lowest)));
  });

  it('spends no attempt and no pause on a refused guess from the anchor', () => {
    const sleeps: number[] = [];
    const { attempts, last } = contendedWrite(link(sleeps, 3), true);
    expect(attempts).toBe(4);
    expect(last.lost).toBe(2);
    expect(sleeps).toEqual([retryPauseMs(1, lowest), retryPauseMs(2, lowest)]);
  });

  it('numbers each attempt from the one before it, so the link carries nothing between them', () => {
    const first = refused(null, 'guessed');
    expect(following(null)).toEqual({ n: 1, lost: 0 });
    expect(following(first)).toEqual({ n: 2, lost: 0 });
    expect(following(refused(first, 'fetched'))).toEqual({ n: 3, lost: 1 });
    // Two writes through one link: the second starts afresh, whatever the first lost.
    const l = link([], 2);
    expect(contendedWrite(l, false).attempts).toBe(2);
    expect(contendedWrite(l, false).attempts).toBe(2);
  });
});
