// A worker thread of a parallel audit (audit/parallel.ts): one byte range of records.jsonl
// (audit/range.ts), on the file descriptor the main thread opened (positional reads, so every
// thread reads the same file). Its answer is the range's result, or the error that stopped it.
import { parentPort, workerData } from 'node:worker_threads';
import { LedgerError } from '../src/errors.js';
import type { WorkerInput } from './parallel.js';
import { checkRange } from './range.js';

try {
  parentPort!.postMessage(checkRange(workerData as WorkerInput));
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message, code: e instanceof LedgerError ? e.code : undefined });
}
