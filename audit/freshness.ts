// Layer 5, freshness (SPEC 8, exit 14): no `ts` goes backwards (SPEC 4) or lies beyond the
// allowed clock skew in the future, HEAD is not older than --max-age, HEAD's ts is at least its
// tail's (SPEC 5), and HEAD's seq is not below the floor's (a rollback). Every comparison uses
// the run's one `now`.
import { placementOf, type AuditContext, type Layer, type LineView } from './context.js';
import type { FindingCollector } from './findings.js';
import type { Problem } from './linkage.js';

/**
 * SPEC 4: a record's ts is never earlier than the previous record's. Canonical RFC 3339 with `Z`
 * (the schema layer checked the form) would order as text; parsed anyway so the comparison does
 * not lean on that. Pure, so a parallel audit can apply it across two segments.
 */
export function orderProblem(prev: { seq: number; ts: string }, r: { seq: number; ts: string }): Problem | null {
  if (Date.parse(r.ts) >= Date.parse(prev.ts)) return null;
  return { code: 'FRESH_BACKWARDS', expected: `at least ${prev.ts}`, actual: r.ts, reason: `ts ${r.ts} of seq ${r.seq} is earlier than ${prev.ts} of seq ${prev.seq}` };
}

export function freshnessLayer(ctx: AuditContext): Layer {
  const latest = ctx.now + ctx.skewMs;
  // The record before the current line: unknown until the first line (ctx.before decides).
  let prev: { seq: number; ts: string } | null | 'deferred' | undefined;

  const fail = (sink: FindingCollector, code: string, seq: number | null, id: string | null, expected: string, actual: string, reason: string) =>
    sink.add({ layer: 'freshness', code, seq, id, expected, actual, reason });
  const iso = (ms: number) => new Date(ms).toISOString();

  return {
    name: 'freshness',

    checkHead(sink) {
      const head = ctx.head!;
      if (placementOf(ctx).kind === 'rollback') {
        const floor = ctx.floor!;
        fail(sink, 'FRESH_ROLLBACK', null, head.tail, `seq >= ${floor.seq}`, `seq ${head.seq}`, `HEAD is at seq ${head.seq}, below the floor's seq ${floor.seq}: the ledger was rolled back`);
      }
      const t = Date.parse(head.ts);
      if (t > latest) {
        fail(sink, 'FRESH_FUTURE', null, head.tail, `at most ${iso(latest)}`, head.ts, `HEAD's ts ${head.ts} is in the future (now ${iso(ctx.now)}, skew ${ctx.skewMs / 1000}s)`);
      }
      if (ctx.maxAgeMs !== null && ctx.now - t > ctx.maxAgeMs) {
        fail(sink, 'FRESH_STALE', null, head.tail, `at least ${iso(ctx.now - ctx.maxAgeMs)}`, head.ts, `HEAD is older than --max-age: written ${head.ts}, now ${iso(ctx.now)}`);
      }
    },

    checkRecord(line: LineView, sink) {
      if (prev === undefined) prev = ctx.before;
      const r = line.record!;
      let ok = true;
      // 'deferred' (a parallel segment's first line): the orchestrator applies orderProblem.
      const back = prev !== null && prev !== 'deferred' ? orderProblem(prev, r) : null;
      if (back) {
        fail(sink, back.code, line.pos, line.id, back.expected, back.actual, back.reason);
        ok = false;
      }
      const t = Date.parse(r.ts);
      if (t > latest) {
        fail(sink, 'FRESH_FUTURE', line.pos, line.id, `at most ${iso(latest)}`, r.ts, `ts ${r.ts} of seq ${r.seq} is in the future (now ${iso(ctx.now)}, skew ${ctx.skewMs / 1000}s)`);
        ok = false;
      }
      prev = { seq: r.seq, ts: r.ts };
      return ok;
    },

    checkEnd(sink) {
      const head = ctx.head;
      const tailTs = ctx.tail?.ts ?? null;
      if (head === null || tailTs === null) return;
      // SPEC 5: HEAD's ts is at least its tail record's.
      if (Date.parse(head.ts) < Date.parse(tailTs)) {
        fail(sink, 'FRESH_HEAD_BEFORE_TAIL', null, head.tail, `at least ${tailTs}`, head.ts, `HEAD's ts ${head.ts} is earlier than its tail's ${tailTs}`);
      }
    },
  };
}
