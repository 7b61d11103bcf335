// Step 2 of the audit on several cores: records.jsonl is cut at line starts into one byte range
// per thread; this thread audits the first range while worker threads audit the others with the
// same layers (audit/worker.ts). A range's first line cannot see the line before it, so its link
// (linkage: seq and prev_tail_hash) and its order in time (freshness) are checked here afterwards,
// with the same pure rules the layers use. Verdicts are identical to the one-thread audit; the
// property test in test/audit/parallel.test.ts holds the two to that. audit/index.ts's runAudit
// calls this for its step 2 unless `threads` is 1.
import type { Worker } from 'node:worker_threads';
import { LedgerError } from '../src/errors.js';
import { MAX_LINE_BYTES } from '../src/record.js';
import type { AuditOptions, AuditRun } from './index.js';
import type { CollectedFindings } from './findings.js';
import { orderProblem } from './freshness.js';
import { readAt } from './lines.js';
import { linkProblems } from './linkage.js';
import { checkRange } from './range.js';
import { runSegment, type SegmentRun } from './segment.js';
import type { DeferredKeys, KeyPinLayer } from './keypin.js';

export const DEFAULT_MIN_BYTES = 4 << 20;

/** What a worker sends back. */
export interface WorkerResult {
  run: SegmentRun;
  findings: CollectedFindings;
  tail: { seq: number; id: string | null; ts: string | null } | null;
  /** What the key-pin layer could not decide without the key records before the range. */
  keys: DeferredKeys;
}

export interface WorkerInput {
  fd: number;
  start: number;
  end: number;
  trust: AuditOptions['trust'];
  now: number;
  skewMs: number;
  maxAgeMs: number | null;
  /** Shared line counters, one per range, for the progress line. */
  progress: SharedArrayBuffer;
  index: number;
}

/**
 * Cut points: `start`, then for each of the k - 1 nominal cuts the start of the next line after
 * it, then `end`. A cut with no newline within 1 MiB after it is dropped (the range stays whole).
 */
export function cutRange(fd: number, start: number, end: number, k: number): number[] {
  const cuts = [start];
  for (let i = 1; i < k; i++) {
    const nominal = start + Math.floor(((end - start) * i) / k);
    if (nominal <= cuts[cuts.length - 1]) continue;
    const window = readAt(fd, nominal - 1, Math.min(MAX_LINE_BYTES + 1, end - nominal + 1));
    const nl = window.indexOf(0x0a);
    if (nl < 0) continue;
    const cut = nominal + nl; // just past the newline found (the window starts one byte early)
    if (cut > cuts[cuts.length - 1] && cut < end) cuts.push(cut);
  }
  cuts.push(end);
  return cuts;
}

interface Running { worker: Worker | null; result: Promise<WorkerResult> }

function startWorker(WorkerClass: typeof Worker, url: URL, input: WorkerInput): Running {
  // A worker holds a few MB of live data (one chunk, one record); the limit keeps V8 from
  // growing its heap far past that, and a worker that still runs out fails the audit.
  const worker = new WorkerClass(url, {
    workerData: input,
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    // The host's flags, less those a worker refuses (`node --input-type=module -e ...` hosts).
    execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')),
  });
  const result = new Promise<WorkerResult>((resolvePromise, reject) => {
    worker.once('message', (m: WorkerResult | { error: string; code?: string }) => {
      if ('error' in m) reject(m.code ? new LedgerError(m.code as never, m.error) : new Error(m.error));
      else resolvePromise(m);
    });
    worker.once('error', reject);
    // A worker that ends without a result (whatever its exit code) fails the audit: a check that
    // cannot decide says no. After a settled promise this is a no-op.
    worker.once('exit', (code) => reject(new Error(`audit worker exited (code ${code}) without a result`)));
  });
  // Keep the process from crashing on a rejection while this thread is busy with its range.
  result.catch(() => {});
  return { worker, result };
}

/**
 * A range checked on this thread by the worker's own function (AuditOptions.rangesHere), at
 * once, before this thread's own range: its input and result copied as a thread's message would
 * be, and an error turned into the same rejection, so only the thread is left out.
 */
function checkHere(input: WorkerInput): Running {
  const result = (async () => {
    let answer: WorkerResult;
    try {
      answer = checkRange(structuredClone(input));
    } catch (e) {
      throw e instanceof LedgerError ? new LedgerError(e.code, e.message) : new Error((e as Error).message);
    }
    return structuredClone(answer);
  })();
  result.catch(() => {});
  return { worker: null, result };
}

/**
 * Step 2 over several threads: the records of `run` split into ranges, this thread taking the
 * first. Returns null, having checked nothing, when one thread is asked for or there is too
 * little to check for a worker to pay (the caller then runs the one-thread step). Every worker
 * is stopped before this returns or throws; closing the run is the caller's.
 */
export async function checkRecordsOnThreads(run: AuditRun): Promise<{ checked: number; lastOffset: number } | null | 'serial'> {
  const { ctx, sink, layers, range, fd, opts } = run;
  const readable = Math.min(range.end, Math.max(ctx.fileSize, 0));
  if (fd === null || readable - range.start < (opts.minBytes ?? DEFAULT_MIN_BYTES)) return null;
  // node:os only now (a floor audit with little new never loads it).
  const threads = opts.threads === undefined || opts.threads === 'auto' ? process.getBuiltinModule('node:os').availableParallelism() : Math.max(1, Math.floor(opts.threads));
  const cuts = threads > 1 ? cutRange(fd, range.start, readable, threads) : [];
  if (cuts.length < 3) return null;
  // The last range runs to HEAD's size, so a short file or a cut-off line shows up there.
  cuts[cuts.length - 1] = range.end;

  let workers: Running[] = [];
  try {
    const progress = new SharedArrayBuffer(4 * (cuts.length - 1));
    const counters = new Int32Array(progress);
    const url = opts.workerUrl ?? new URL('./worker.js', import.meta.url);
    // Loaded synchronously and only here (process.getBuiltinModule: no require needed, which the
    // CLI bundle, run under a launcher (src/launch/), would have to make).
    const { Worker: WorkerClass } = process.getBuiltinModule('node:worker_threads');
    workers = cuts.slice(1, -1).map((start, i) => {
      const input: WorkerInput = { fd: fd!, start, end: cuts[i + 2], trust: ctx.trust, now: ctx.now, skewMs: ctx.skewMs, maxAgeMs: ctx.maxAgeMs, progress, index: i + 1 };
      return opts.rangesHere ? checkHere(input) : startWorker(WorkerClass, url, input);
    });

    const tick = opts.onProgress && ((n: number) => {
      Atomics.store(counters, 0, n);
      opts.onProgress!(counters.reduce((a, b) => a + b, 0), run.total);
    });
    const mine = runSegment(ctx, layers, sink, fd!, { start: cuts[0], end: cuts[1], firstPos: range.firstPos }, tick);
    let checked = mine.lines;
    let lastOffset = mine.lastOffset;
    ctx.readEnd = mine.readEnd;

    // The seams, in file order: each range's first line against the line before it.
    let prev = ctx.tail;
    let base = range.firstPos + mine.lines;
    const keyRank = layers.findIndex((l) => l.name === 'key-pin');
    const keyPin = layers[keyRank] as KeyPinLayer;
    let serial = false;
    for (const result of await Promise.all(workers.map((w) => w.result))) {
      const f = result.run.first;
      if (f !== null && prev !== null && prev.id !== null) {
        const pos = f.pos + base;
        const links = linkProblems({ seq: prev.seq, id: prev.id }, f);
        for (const p of links) sink.add({ layer: 'linkage', seq: pos, id: f.id, ...p });
        const back = links.length === 0 && f.passed >= 4 && prev.ts !== null ? orderProblem({ seq: prev.seq, ts: prev.ts }, f) : null;
        if (back) sink.add({ layer: 'freshness', seq: pos, id: f.id, ...back });
      }
      sink.merge(result.findings, base);
      // SPEC 7: the key records of the range, folded in order; keys they authorized, checked.
      // Policy: when that finds a fault, the audit is made again on one thread, so its findings
      // (which depend on the order of the records) are exactly the one-thread audit's.
      if (!serial && sink.active(keyRank)) {
        const k = result.keys;
        const uses = Object.fromEntries(Object.entries(k.uses).map(([key, [lo, hi]]) => [key, [lo + base, hi + base] as [number, number]]));
        serial = !keyPin.absorb({ records: k.records.map((r) => ({ ...r, pos: r.pos + base })), uses });
      }
      base += result.run.lines;
      checked += result.run.lines;
      if (result.run.lastOffset >= 0) lastOffset = result.run.lastOffset;
      ctx.readEnd = result.run.readEnd;
      ctx.tail = result.tail ?? ctx.tail;
      prev = ctx.tail;
    }
    return serial ? 'serial' : { checked, lastOffset };
  } catch (e) {
    // Stop every worker before the descriptor they read is closed (its number could be reused).
    await Promise.all(workers.map((w) => w.worker?.terminate()));
    throw e;
  }
}
