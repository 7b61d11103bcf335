// Layer 2, linkage (SPEC 8, exit 11): seqs are consecutive, each prev_tail_hash is the id of the
// record before it, the genesis is well formed, HEAD's genesis/seq/tail/size match the records,
// records.jsonl is not shorter than HEAD's size, and the record at the floor is the floor's (no
// fork). Ids are computed here from the bytes (SPEC 4) and handed to the layers after it.
import type { LedgerRecord } from '../src/record.js';
import type { AuditContext, ChainPoint, Layer, LineView } from './context.js';
import { placementOf, shortId } from './context.js';
import type { FindingCollector } from './findings.js';
import { idFromLine } from '../src/canonical.js';

export interface Problem { code: string; expected: string; actual: string; reason: string }

/**
 * The link between a record and the one before it (SPEC 4): seq + 1 and prev_tail_hash = its id.
 * Pure, so a parallel audit can check the link across two segments after the fact.
 */
export function linkProblems(prev: { seq: number; id: string }, r: Pick<LedgerRecord, 'seq' | 'prev_tail_hash'>): Problem[] {
  const out: Problem[] = [];
  if (r.seq !== prev.seq + 1) {
    out.push({ code: 'LINKAGE_SEQ', expected: `seq ${prev.seq + 1}`, actual: `seq ${r.seq}`, reason: `expected seq ${prev.seq + 1} after seq ${prev.seq}, got seq ${r.seq}` });
  }
  if (r.prev_tail_hash !== prev.id) {
    out.push({ code: 'LINKAGE_PREV', expected: prev.id, actual: String(r.prev_tail_hash), reason: `prev_tail_hash is not the id of seq ${prev.seq}` });
  }
  return out;
}

export function linkageLayer(ctx: AuditContext): Layer {
  // The record before the current line: unknown until the first line (ctx.before decides).
  let prev: ChainPoint | null | 'deferred' | undefined;

  const fail = (sink: FindingCollector, code: string, seq: number | null, id: string | null, expected: string, actual: string, reason: string) =>
    sink.add({ layer: 'linkage', code, seq, id, expected, actual, reason });

  return {
    name: 'linkage',

    checkHead(sink) {
      const p = placementOf(ctx);
      const floor = ctx.floor;
      if (floor === null) return;
      if (p.kind === 'other-ledger') {
        fail(sink, 'LINKAGE_FLOOR_GENESIS', null, null, floor.genesis, p.genesis, `HEAD names genesis ${shortId(p.genesis)}, but the floor is for genesis ${shortId(floor.genesis)}: another ledger`);
      } else if (p.kind === 'fork') {
        fail(sink, 'LINKAGE_FORK', floor.seq, null, `seq ${floor.seq} ${floor.id}`, p.actual, `fork under the floor: ${p.reason}`);
      }
    },

    checkRecord(line: LineView, sink) {
      if (prev === undefined) prev = ctx.before;
      const r = line.record!;
      const id = idFromLine(line.bytes, r); // the schema layer has checked the line is canonical
      line.id = id;
      let ok = true;
      const bad = (p: Problem) => {
        fail(sink, p.code, line.pos, id, p.expected, p.actual, p.reason);
        ok = false;
      };
      if (prev === null) {
        // The first line of a full audit is the genesis (SPEC 4).
        if (r.seq !== 0) bad({ code: 'LINKAGE_SEQ', expected: 'seq 0', actual: `seq ${r.seq}`, reason: `the first record has seq ${r.seq}, not 0` });
        if (r.kind !== 'genesis') bad({ code: 'LINKAGE_GENESIS', expected: 'kind genesis', actual: `kind ${r.kind}`, reason: `the first record is a ${r.kind}, not the genesis` });
        if (r.prev_tail_hash !== null) bad({ code: 'LINKAGE_GENESIS', expected: 'prev_tail_hash null', actual: String(r.prev_tail_hash), reason: 'the genesis has a prev_tail_hash; it must be null' });
        ctx.genesisId = id;
      } else {
        // 'deferred': the first line of a parallel segment; the orchestrator checks its link to
        // the previous segment's last record with linkProblems once both are known.
        if (prev !== 'deferred') for (const p of linkProblems(prev, r)) bad(p);
        if (r.kind === 'genesis') bad({ code: 'LINKAGE_GENESIS', expected: 'one genesis, at seq 0', actual: `a genesis at seq ${r.seq}`, reason: `a second genesis record at seq ${r.seq}` });
      }
      // Policy: continue from this record even when it failed, so one deleted or swapped line
      // gives one or two findings rather than one for every line after it.
      prev = { seq: r.seq, id, ts: r.ts };
      return ok;
    },

    checkEnd(sink) {
      const head = ctx.head;
      if (head === null) return;
      const end = ctx.readEnd;
      const headFault = (code: string, expected: string, actual: string, reason: string) => fail(sink, code, null, head.tail, expected, actual, reason);
      if (ctx.fileSize < 0) {
        headFault('LINKAGE_SHORT', `${head.size} bytes`, 'no file', `records.jsonl is missing, but HEAD's size is ${head.size}`);
        return;
      }
      if (end.short) {
        headFault('LINKAGE_SHORT', `${head.size} bytes`, `${ctx.fileSize} bytes`, `records.jsonl is ${ctx.fileSize} bytes, shorter than HEAD's size ${head.size}`);
        return;
      }
      if (end.trailing > 0) {
        headFault('LINKAGE_HEAD_SIZE', 'a line boundary', `${end.trailing} bytes into a line`, `HEAD's size ${head.size} ends in the middle of a line`);
      }
      const tail = ctx.tail;
      if (tail === null) {
        headFault('LINKAGE_HEAD_SEQ', `seq ${head.seq}`, 'no records', `HEAD names seq ${head.seq}, but records.jsonl holds no record`);
        return;
      }
      if (tail.seq !== head.seq) {
        headFault('LINKAGE_HEAD_SEQ', `seq ${tail.seq}`, `seq ${head.seq}`, `HEAD names seq ${head.seq}, but the last published record is seq ${tail.seq}`);
      }
      if (tail.id !== head.tail) {
        headFault('LINKAGE_HEAD_TAIL', String(tail.id), head.tail, `HEAD's tail ${shortId(head.tail)} is not the id of the last published record ${shortId(tail.id)}`);
      }
      // With a floor, the genesis was checked when the floor was placed.
      const genesis = placementOf(ctx).kind === 'ok' ? ctx.floor!.genesis : ctx.genesisId;
      if (genesis !== head.genesis) {
        headFault('LINKAGE_HEAD_GENESIS', String(genesis), head.genesis, `HEAD's genesis ${shortId(head.genesis)} is not the id of the genesis record ${shortId(genesis)}`);
      }
    },
  };
}
