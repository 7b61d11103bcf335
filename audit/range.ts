// One byte range of records.jsonl through the layers, as a worker thread of a parallel audit
// checks it (audit/parallel.ts, audit/worker.ts): the worker's whole job as one function, so the
// thread and a check on this thread (AuditOptions.rangesHere, for the property tests) run the
// very same code. Its first line's link to the range before it is left to the main thread
// ('deferred'); HEAD and the floor are the main thread's too.
import type { AuditContext } from './context.js';
import { FindingCollector } from './findings.js';
import { LAYERS } from './index.js';
import type { KeyPinLayer } from './keypin.js';
import type { WorkerInput, WorkerResult } from './parallel.js';
import { runSegment } from './segment.js';

export function checkRange(input: WorkerInput): WorkerResult {
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
  return { run, findings: sink.toJSON(), tail: ctx.tail, keys };
}
