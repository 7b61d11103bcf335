// Layer 5, freshness (SPEC 8, exit 14): no `ts` goes backwards (SPEC 4) or lies beyond the
// allowed clock skew in the future, HEAD is not older than --max-age, HEAD's ts is at least its
// tail's (SPEC 5), and HEAD's seq is not below the floor's (a rollback). Every comparison uses
// the run's one `now`.
import { placementOf, type AuditContext, type Layer, type LineView } from './context.js';
import type { FindingCollector } from './findings.js';

export function freshnessLayer(ctx: AuditContext): Layer {
  const latest = ctx.now + ctx.skewMs;
  // The ts before the current line: the floor record's when the audit starts above it.
  let prevTs: string | null = null;
  let prevSeq = -1;

  const fail = (sink: FindingCollector, code: string, seq: number | null, id: string | null, expected: string, actual: string, reason: string) =>
    sink.add({ layer: 'freshness', code, seq, id, expected, actual, reason });
  const iso = (ms: number) => new Date(ms).toISOString();

  return {
    name: 'freshness',

    checkHead(sink) {
      const head = ctx.head!;
      const placement = placementOf(ctx);
      if (placement.kind === 'ok') {
        prevTs = placement.record.ts;
        prevSeq = placement.record.seq;
      }
      if (placement.kind === 'rollback') {
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
      const r = line.record!;
      let ok = true;
      // Canonical RFC 3339 with `Z` (checked by the schema layer) orders as text; parse anyway so
      // the comparison does not lean on that.
      const t = Date.parse(r.ts);
      if (prevTs !== null && t < Date.parse(prevTs)) {
        fail(sink, 'FRESH_BACKWARDS', line.pos, line.id, `at least ${prevTs}`, r.ts, `ts ${r.ts} of seq ${r.seq} is earlier than ${prevTs} of seq ${prevSeq}`);
        ok = false;
      }
      if (t > latest) {
        fail(sink, 'FRESH_FUTURE', line.pos, line.id, `at most ${iso(latest)}`, r.ts, `ts ${r.ts} of seq ${r.seq} is in the future (now ${iso(ctx.now)}, skew ${ctx.skewMs / 1000}s)`);
        ok = false;
      }
      prevTs = r.ts;
      prevSeq = r.seq;
      return ok;
    },

    checkEnd(sink) {
      const head = ctx.head;
      if (head === null || prevTs === null) return;
      // SPEC 5: HEAD's ts is at least its tail record's.
      if (Date.parse(head.ts) < Date.parse(prevTs)) {
        fail(sink, 'FRESH_HEAD_BEFORE_TAIL', null, head.tail, `at least ${prevTs}`, head.ts, `HEAD's ts ${head.ts} is earlier than its tail's ${prevTs}`);
      }
    },
  };
}
