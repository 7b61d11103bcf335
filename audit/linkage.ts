// Layer 2, linkage (SPEC 8, exit 11): seqs are consecutive, each prev_tail_hash is the id of the
// record before it, the genesis is well formed, HEAD's genesis/seq/tail/size match the records,
// records.jsonl is not shorter than HEAD's size, and the record at the floor is the floor's (no
// fork). Ids are computed here from the bytes (SPEC 4) and handed to the layers after it.
import type { AuditContext, Layer, LineView } from './context.js';
import { placementOf, shortId } from './context.js';
import type { FindingCollector } from './findings.js';
import { lineRecordId } from './lines.js';

export function linkageLayer(ctx: AuditContext): Layer {
  // The record before the current line: the floor's record, or nothing before genesis.
  let prev: { seq: number; id: string } | null = null;

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
      } else if (p.kind === 'ok') {
        prev = { seq: p.record.seq, id: p.record.id };
      }
    },

    checkRecord(line: LineView, sink) {
      const r = line.record!;
      const id = lineRecordId(line.bytes, r);
      line.id = id;
      let ok = true;
      const bad = (code: string, expected: string, actual: string, reason: string) => {
        fail(sink, code, line.pos, id, expected, actual, reason);
        ok = false;
      };
      if (prev === null) {
        // The first line of a full audit is the genesis (SPEC 4).
        if (r.seq !== 0) bad('LINKAGE_SEQ', 'seq 0', `seq ${r.seq}`, `the first record has seq ${r.seq}, not 0`);
        if (r.kind !== 'genesis') bad('LINKAGE_GENESIS', 'kind genesis', `kind ${r.kind}`, `the first record is a ${r.kind}, not the genesis`);
        if (r.prev_tail_hash !== null) bad('LINKAGE_GENESIS', 'prev_tail_hash null', String(r.prev_tail_hash), 'the genesis has a prev_tail_hash; it must be null');
        ctx.genesisId = id;
      } else {
        if (r.seq !== prev.seq + 1) {
          bad('LINKAGE_SEQ', `seq ${prev.seq + 1}`, `seq ${r.seq}`, `expected seq ${prev.seq + 1} after seq ${prev.seq}, got seq ${r.seq}`);
        }
        if (r.prev_tail_hash !== prev.id) {
          bad('LINKAGE_PREV', prev.id, String(r.prev_tail_hash), `prev_tail_hash is not the id of seq ${prev.seq}`);
        }
        if (r.kind === 'genesis') bad('LINKAGE_GENESIS', 'one genesis, at seq 0', `a genesis at seq ${r.seq}`, `a second genesis record at seq ${r.seq}`);
      }
      // Policy: continue from this record even when it failed, so one deleted or swapped line
      // gives one or two findings rather than one for every line after it.
      prev = { seq: r.seq, id };
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
