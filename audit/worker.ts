// A worker thread of a parallel audit (audit/parallel.ts): one byte range of records.jsonl
// through the same layers, on the file descriptor the main thread opened (positional reads, so
// every thread reads the same file). Its first line's link to the range before it is left to the
// main thread ('deferred'); HEAD and the floor are the main thread's too.
import { parentPort, workerData } from 'node:worker_threads';
import { LedgerError } from '../src/errors.js';
import type { AuditContext } from './context.js';
import { FindingCollector } from './findings.js';
import { LAYERS } from './index.js';
import type { WorkerInput, WorkerResult } from './parallel.js';
import { runSegment } from './segment.js';
import type { KeyPinLayer } from './keypin.js';

const input = workerData as WorkerInput;
try {
  const ctx: AuditContext = {
    trust: input.trust,
    now: input.now,
    skewMs: input.skewMs,
    maxAgeMs: input.maxAgeMs,
    headBytes: null,
    head: null,
    floor: null,
    floorLine: null,
    placementMemo: { kind: 'none' },
    fileSize: -1,
    readEnd: { consumed: 0, trailing: 0, short: false },
    before: 'deferred',
    tail: null,
    genesisId: null,
  };
  const sink = new FindingCollector();
  const layers = LAYERS.map((make) => make(ctx));
  const counters = new Int32Array(input.progress);
  const run = runSegment(ctx, layers, sink, input.fd, { start: input.start, end: input.end, firstPos: 0 }, (n) => Atomics.store(counters, input.index, n));
  const keys = (layers.find((l) => l.name === 'key-pin') as KeyPinLayer).deferred();
  const result: WorkerResult = { run, findings: sink.toJSON(), tail: ctx.tail, keys };
  parentPort!.postMessage(result);
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message, code: e instanceof LedgerError ? e.code : undefined });
}
