// Issue 22's Benchmarks, "in the field": a shared ledger of 200,000 CI records (intents and
// handoffs of CI operations) beside a few dozen work items, in a real git repository, with the
// key file and trust file where `ledger init` puts them (keys/harness.key, keys/trust.json).
// Each verb runs through the shipped binary as a user's shell runs it and does its real job.
//
// Two shapes of the same ledger, each measured:
//   items-after    the CI batch first, the work items spread through it and on top (the shape
//                  this bench built before issue 22)
//   items-before   the work items first, then the CI batch (a long-lived item beside CI
//                  traffic): this user ran `status` before the batch arrived, so what this user
//                  kept then is 200,000 records behind when the timed verbs run
//
// The targets, against `node -e ''`, both sides in the bare environment (bench-kit bareEnv: no
// NODE_EXTRA_CA_CERTS, no NODE_OPTIONS), timed alternately in the same run (medians):
//   read verbs    status, resume, log --limit 3, show, head            <= 1.6x
//   write verbs   append, start, checkpoint (no test command), finish  <= 1.8x
//   hooks         claude session-start, stop, session-end; codex session-start, stop  <= 1.8x
//   each of these on 200,000 records <= 1.2x itself on 1,000 records (the same shape)
//   gate --floor (the floor at HEAD), items-after                      <= 1.3x
//
// The generated ledgers are kept between runs in test/.scratch/ (200,000 records take a minute
// to sign); each run starts from the same bytes (records, HEAD, a fresh state directory) and
// writes its own records on top. The derived files (index, fold memo, the user's kept fold) are
// rebuilt each run; the first command after the batch, which builds them, is reported.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ledger } from '../../src/ledger.js';
import { digestSource } from '../../src/causal/evidence.js';
import type { Draft } from '../../src/record.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { atMost, nowMs, timeCommand, type BenchResult } from './bench-kit.js';
import { COUNT, ONLY, RUNS, SHAPES, SMALL, alternateAll, prepare, timeVerb, verbs, type Ledgerish } from './field-kit.js';

export default async function fieldBench(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  if (process.env.LEDGER_NO_CACHE) console.log(`(LEDGER_NO_CACHE=${process.env.LEDGER_NO_CACHE}: timed without those caches)`);
  for (const shape of SHAPES) {
    const big = await prepare(shape, COUNT);
    const small = await prepare(shape, SMALL);
    // The bench's own item, live, for the checkpoints and the hooks' stop path (it owns it, a file changed).
    for (const l of [big, small]) l.cli(['start', 'bench-own', '--summary', 'the bench item']);
    const bare = big.env;
    const node = () => timeCommand(process.execPath, ['-e', ''], { env: bare });
    const label = `${shape}, ${COUNT.toLocaleString('en')} records`;
    for (const v of verbs().filter((x) => ONLY === null || ONLY.includes(x.name))) {
      const [tBig, tSmall, tNode] = alternateAll(RUNS, [timeVerb(v, big), timeVerb(v, small), node]);
      const detail = `${tBig.toFixed(1)} ms; on ${SMALL.toLocaleString('en')} records ${tSmall.toFixed(1)} ms; node -e '' ${tNode.toFixed(1)} ms (bare, medians of ${RUNS}); first command after the batch ${(big.firstMs / 1000).toFixed(2)} s`;
      results.push(atMost(`${v.name} (${label}) / node -e ''`, tBig / tNode, v.limit, detail));
      results.push(atMost(`${v.name} (${label}) / itself on ${SMALL.toLocaleString('en')}`, tBig / tSmall, 1.2, detail));
    }
    if (shape === 'items-after' && (ONLY === null || ONLY.includes('gate --floor'))) results.push(await gateFloor(big, node));
  }
  return results;
}

/** gate --floor with the floor at HEAD, on an operation with real evidence appended on top. */
async function gateFloor(l: Ledgerish, node: () => number): Promise<BenchResult> {
  const prior = process.env.LEDGER_STATE_DIR;
  // This process writes too (the gate's handoff): with the same per-user state as the commands.
  process.env.LEDGER_STATE_DIR = l.env.LEDGER_STATE_DIR;
  try {
    const ledger = Ledger.open({ dir: l.dir, key: signerFor('harness') });
    const schema = digestSource('db/schema.sql', { root: l.work, ledgerDir: l.dir });
    const res = ledger.append([
      { kind: 'intent', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', action: 'apply migration' } as Draft,
      { kind: 'handoff', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', outcome: 'success', evidence: { schema }, invariants: { tests: { ok: true, detail: '212 passed' } }, depends_on: [] } as Draft,
    ]);
    const last = res.records[res.records.length - 1];
    const floor = join(l.work, 'floor.json');
    writeFileSync(floor, JSON.stringify({ v: 1, genesis: res.head.genesis, seq: last.seq, id: last.id, offset: last.offset }) + '\n');
    const gate = () => {
      const t = nowMs();
      const out = l.cli(['gate', 'bench_migrate', '--floor', floor, '--require-invariant', 'tests', '--json']);
      const ms = nowMs() - t;
      if ((JSON.parse(out) as { ok?: unknown }).ok !== true) throw new Error(`the bench gate does not pass: ${out.slice(0, 400)}`);
      return ms;
    };
    const [t, n] = alternateAll(RUNS, [gate, node]);
    return atMost(`gate --floor (${l.shape}, ${l.count.toLocaleString('en')} records) / node -e ''`, t / n, 1.3, `${t.toFixed(1)} ms, node -e '' ${n.toFixed(1)} ms (bare, medians of ${RUNS})`);
  } finally {
    process.env.LEDGER_STATE_DIR = prior;
  }
}
