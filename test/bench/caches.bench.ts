// What each cache pays (src/cache/README.md): every cache of src/cache/ timed off against on, in
// the same run, alternately, on what it is kept for:
//   - the verbs of the field bench on its 200,000-record ledger (items-before shape, field-kit.ts),
//     each run as a user's shell runs it, once with LEDGER_NO_CACHE=<the cache> and once without;
//   - the writer's loop in one process: Ledger.append on a ledger of its own, with the Ledger's
//     caches all on, or all but the one (the append bench's durable in-process target).
// A cache pays when turning it off makes one of these cost at least PAYS as much CPU time (means:
// what a cache saves is work, and on a shared machine wall time also measures the neighbours;
// wall medians are printed beside); the README gives each kept cache's figure from this bench. Policy: a cache below it on everything it is
// kept for is deleted, not kept for a case no bench target measures.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Ledger } from '../../src/ledger.js';
import { createSigner } from '../../src/sign.js';
import type { CacheName } from '../../src/cache/ledger-cache.js';
import type { Draft } from '../../src/record.js';
import { atLeast, mean, median, nowMs, type BenchResult } from './bench-kit.js';
import { COUNT, cpuOfVerb, prepare, verbs } from './field-kit.js';

const RUNS = Number(process.env.CACHES_BENCH_RUNS ?? 15);
/** Off / on at least this: the cache pays. */
const PAYS = 1.05;
const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));

/** Each cache, and the field verbs it is kept for (the in-process loop is timed for every one). */
const KEPT_FOR: Record<CacheName, string[]> = {
  head: ['checkpoint', 'append'],
  chain: ['status', 'log --limit 3', 'append'],
  fold: ['status', 'resume', 'checkpoint', 'hook claude stop'],
  'fold-memo': ['status', 'checkpoint'],
  index: ['append'],
  'index-tail': ['append'],
  // Its target is gate-floor.bench.ts's (a gate with no --floor after an earlier one); the field
  // verbs run no gate.
  floor: [],
  'head-memo': ['head', 'hook claude session-start'],
};
/**
 * Which to time (comma-separated); default every cache. `fold+fold-memo` times those two off
 * together (caches that stand in for each other), on the first one's verbs.
 */
const ONLY = process.env.CACHES_BENCH_ONLY?.split(',') ?? null;

function draft(i: number): Draft {
  return { kind: 'handoff', agent: 'bench', logical_operation_id: `op_${i % 100}`, execution_id: `exec_${i}`, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '14 passed' } }, depends_on: [] } as Draft;
}

/**
 * One Ledger.append in a loop on a ledger of its own, with cache `off` turned off (null: all on),
 * rounds interleaved: the mean CPU time (this process's user and system) and the median wall time
 * of one append, in ms, for each.
 */
function inProcess(offs: (string | null)[]): { cpu: number; wall: number }[] {
  const work = mkdtempSync(join(BASE, 'bench-caches-'));
  try {
    const signer = createSigner(new Uint8Array(randomBytes(32)));
    const state = join(work, 'state');
    const ledgers = offs.map((off, i) => {
      const dir = join(work, `l${i}`);
      Ledger.init({ dir, key: signer, agent: 'bench', stateDir: state });
      return Ledger.open({ dir, key: signer, stateDir: state, env: { LEDGER_NO_CACHE: off?.replaceAll('+', ',') ?? '' } });
    });
    const cpu = offs.map(() => [] as number[]);
    const wall = offs.map(() => [] as number[]);
    let n = 0;
    for (let round = 0; round < 8; round++) {
      ledgers.forEach((l, i) => {
        for (let k = 0; k < 20; k++) {
          const c0 = process.cpuUsage();
          const t0 = nowMs();
          l.append(draft(n++));
          wall[i].push(nowMs() - t0);
          const c = process.cpuUsage(c0);
          cpu[i].push((c.user + c.system) / 1000);
        }
      });
    }
    return offs.map((_, i) => ({ cpu: mean(cpu[i]), wall: median(wall[i]) }));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export default async function cachesBench(): Promise<BenchResult[]> {
  const names = ONLY ?? Object.keys(KEPT_FOR);
  const keptFor = (name: string) => KEPT_FOR[name.split('+')[0] as CacheName];
  const big = await prepare('items-before', COUNT);
  big.cli(['start', 'bench-own', '--summary', 'the bench item']);
  const results: BenchResult[] = [];
  // The in-process loop: all on, then each off, in one interleaved run.
  const loop = inProcess([null, ...names]);
  const ratio = (off: number, on: number) => `${off.toFixed(2)} / ${on.toFixed(2)} = ${(off / on).toFixed(2)}x`;
  for (const [i, name] of names.entries()) {
    const l = loop[i + 1];
    const figures: string[] = [`in-process Ledger.append CPU ms ${ratio(l.cpu, loop[0].cpu)} (wall ${ratio(l.wall, loop[0].wall)})`];
    let best = l.cpu / loop[0].cpu;
    for (const v of verbs().filter((x) => keptFor(name).includes(x.name))) {
      const off = { cpu: [] as number[], wall: [] as number[] };
      const on = { cpu: [] as number[], wall: [] as number[] };
      // Alternately, after one warm-up each: CPU of the child (mean) and wall time (median).
      cpuOfVerb(v, big, { LEDGER_NO_CACHE: name.replaceAll('+', ',') })();
      cpuOfVerb(v, big)();
      for (let r = 0; r < RUNS; r++) {
        for (const [side, extra] of [[off, { LEDGER_NO_CACHE: name.replaceAll('+', ',') }], [on, {}]] as const) {
          const t0 = nowMs();
          side.cpu.push(cpuOfVerb(v, big, extra)());
          side.wall.push(nowMs() - t0);
        }
      }
      const [cOff, cOn] = [mean(off.cpu), mean(on.cpu)];
      figures.push(`${v.name} CPU ms ${ratio(cOff, cOn)} (wall ${ratio(median(off.wall), median(on.wall))})`);
      if (Number.isFinite(cOff / cOn)) best = Math.max(best, cOff / cOn);
    }
    results.push(atLeast(`cache ${name} pays (off / on, CPU, the best of what it is kept for)`, best, PAYS, `${figures.join('; ')} (${COUNT.toLocaleString('en')} records; CPU means, wall medians of ${RUNS})`));
  }
  return results;
}
