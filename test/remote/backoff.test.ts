// The waiting policy of a joined writer (src/remote/backoff.ts), with the randomness passed in:
// every pause is within its bounds, a write that has lost more never waits longer for its next
// try than one that has lost less (seniority), a contended write yields once and an
// uncontended one not at all, and the whole of a write's waiting is bounded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RETRY_CAP_MS, RETRY_FLOOR_MS, retryCapMs, retryPauseMs, YIELD_MAX_MS, YIELD_MIN_MS, yieldMs, type RandomInt } from '../../src/remote/backoff.js';
import { runs } from '../helpers/runs.js';

const SEED = 20240615;

/** A RandomInt from fast-check's draws: a fraction in [0, 1) mapped onto [lo, hi]. */
const fromFraction = (f: number): RandomInt => (lo, hi) => lo + Math.floor(f * (hi - lo + 1));
const fraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('the retry pause', () => {
  it('is within 1 ms and its cap, and the cap never grows with the races lost', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), fraction, fc.integer({ min: 1, max: 5_000 }), (lost, f, cap) => {
      const ms = retryPauseMs(lost, fromFraction(f), cap);
      expect(ms).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThanOrEqual(retryCapMs(lost, cap));
      expect(retryCapMs(lost + 1, cap)).toBeLessThanOrEqual(retryCapMs(lost, cap));
      expect(retryCapMs(lost, cap)).toBeGreaterThanOrEqual(Math.min(RETRY_FLOOR_MS, cap));
    }), { seed: SEED, numRuns: runs(500, 20_000) });
  });

  it('halves from the cap after each lost race down to the floor', () => {
    expect([1, 2, 3, 4, 5, 24].map((k) => retryCapMs(k))).toEqual([RETRY_CAP_MS, RETRY_CAP_MS / 2, RETRY_CAP_MS / 4, RETRY_CAP_MS / 8, RETRY_FLOOR_MS, RETRY_FLOOR_MS]);
  });

  it('bounds the waiting of a whole write: one yield and every pause of its attempts', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 200 }), fc.array(fraction, { minLength: 201, maxLength: 201 }), fc.boolean(), (attempts, fs, contended) => {
      let total = yieldMs(contended, fromFraction(fs[0]));
      for (let lost = 1; lost < attempts; lost++) total += retryPauseMs(lost, fromFraction(fs[lost]));
      expect(total).toBeLessThanOrEqual(YIELD_MAX_MS + RETRY_CAP_MS * 2 + RETRY_FLOOR_MS * attempts);
    }), { seed: SEED, numRuns: runs(300, 10_000) });
  });
});

describe('the yield before the first attempt', () => {
  it('is none without a recent lost race, and within its bounds with one', () => {
    fc.assert(fc.property(fraction, (f) => {
      expect(yieldMs(false, fromFraction(f))).toBe(0);
      const ms = yieldMs(true, fromFraction(f));
      expect(ms).toBeGreaterThanOrEqual(YIELD_MIN_MS);
      expect(ms).toBeLessThanOrEqual(YIELD_MAX_MS);
    }), { seed: SEED, numRuns: runs(200, 5_000) });
  });

  it('is longer than the pause of any writer that lost twice already, so those land first', () => {
    expect(YIELD_MIN_MS).toBeGreaterThan(retryCapMs(2));
  });
});
