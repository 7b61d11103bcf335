// Layer 5, freshness (SPEC 8): ts order, the future beyond --skew, --max-age, HEAD after its tail.
// Every case injects `now`; nothing here reads the clock. (Rollbacks under a floor: floor.test.ts.)
import { describe, expect, it } from 'vitest';
import { buildLedger } from '../helpers/gen-ledger.js';
import { NOW, audit, verdict } from './harness.js';

const MIN = 60_000;
// Ten records, 12:00:00 .. 12:00:09; HEAD written at the last one's ts.
const led = buildLedger({ count: 10 });
const lastTs = Date.parse('2026-11-29T12:00:09.000Z');

describe('freshness: order of records', () => {
  it('fails a ts earlier than the record before it', () => {
    const back = buildLedger({ count: 10, edit: (r, seq) => (seq === 6 ? { ...r, ts: '2026-11-29T12:00:01.000Z' } : r) });
    expect(verdict(audit(back))).toEqual({ layer: 'freshness', seq: 6, code: 'FRESH_BACKWARDS' });
  });

  it('passes equal timestamps (never earlier is the rule, not strictly later)', () => {
    expect(audit(buildLedger({ count: 10, stepMs: 0 })).ok).toBe(true);
  });

  it('fails a HEAD written before its tail record', () => {
    const early = buildLedger({ count: 10, headTs: '2026-11-29T12:00:08.999Z' });
    expect(verdict(audit(early))).toEqual({ layer: 'freshness', seq: null, code: 'FRESH_HEAD_BEFORE_TAIL' });
  });
});

describe('freshness: the future, against one now and --skew', () => {
  it('passes a record exactly at now + skew and fails one a millisecond later', () => {
    expect(audit(led, { now: lastTs - 5 * MIN }).ok).toBe(true);
    expect(verdict(audit(led, { now: lastTs - 5 * MIN - 1 }))).toEqual({ layer: 'freshness', seq: 9, code: 'FRESH_FUTURE' });
  });

  it('uses --skew when given', () => {
    expect(audit(led, { now: lastTs - 2000, skewMs: 1000 }).failure).toMatchObject({ layer: 'freshness', seq: 9 });
    expect(audit(led, { now: lastTs - 2000, skewMs: 2000 }).ok).toBe(true);
  });

  it('fails a HEAD in the future on its own, with seq null', () => {
    const ahead = buildLedger({ count: 10, headTs: '2026-11-29T14:00:00.000Z' });
    expect(verdict(audit(ahead, { now: NOW }))).toEqual({ layer: 'freshness', seq: null, code: 'FRESH_FUTURE' });
  });
});

describe('freshness: --max-age', () => {
  it('passes a HEAD exactly max-age old and fails one a millisecond older', () => {
    expect(audit(led, { now: lastTs + 60 * MIN, maxAgeMs: 60 * MIN }).ok).toBe(true);
    expect(verdict(audit(led, { now: lastTs + 60 * MIN + 1, maxAgeMs: 60 * MIN }))).toEqual({ layer: 'freshness', seq: null, code: 'FRESH_STALE' });
  });

  it('does not limit age without --max-age', () => {
    expect(audit(led, { now: lastTs + 365 * 24 * 60 * MIN }).ok).toBe(true);
  });
});

describe('freshness: bad limits are usage errors', () => {
  it.each([[{ skewMs: -1 }], [{ maxAgeMs: 1.5 }], [{ now: Number.NaN }]])('%o', (extra) => {
    expect(() => audit(led, extra)).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});
