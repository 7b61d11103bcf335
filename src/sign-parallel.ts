// Signing a large batch on two cores. Ed25519 signatures are deterministic, so a worker thread
// signing half the messages yields exactly the bytes the main thread would have. The batch path
// is synchronous (it runs under the writer lock), so the main thread waits for the worker with
// Atomics.wait on shared memory instead of an event-loop message.
import { createRequire } from 'node:module';
import type { Worker as WorkerType } from 'node:worker_threads';

// Loaded only when a batch is large enough: worker_threads costs every `ledger` start a few ms.
const lazyRequire = createRequire(import.meta.url);

// Below this many messages a worker's start-up (tens of ms) costs more than it saves.
export const PARALLEL_THRESHOLD = 4096;

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { createPrivateKey, sign } = require('node:crypto');
const { pkcs8, messages, out, done } = workerData;
const key = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
const sigs = new Uint8Array(out);
for (let i = 0; i < messages.length; i++) sigs.set(sign(null, messages[i], key), i * 64);
const flag = new Int32Array(done);
Atomics.store(flag, 0, 1);
Atomics.notify(flag, 0);
`;

/**
 * Signs `messages`: the main thread signs the first part while one worker signs the rest. If the
 * worker fails or stalls, the main thread signs its part too: the result never depends on it.
 */
export function signInParallel(messages: readonly Uint8Array[], pkcs8: Uint8Array, sign: (m: Uint8Array) => Uint8Array): Uint8Array[] {
  if (messages.length < PARALLEL_THRESHOLD) return messages.map(sign);
  // The worker starts late, so it takes a little less than half.
  const split = Math.ceil(messages.length * 0.55);
  const rest = messages.slice(split);
  const out = new SharedArrayBuffer(rest.length * 64);
  const done = new SharedArrayBuffer(4);
  let worker: WorkerType | null = null;
  try {
    const { Worker } = lazyRequire('node:worker_threads') as typeof import('node:worker_threads');
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pkcs8, messages: rest, out, done } });
    worker.unref();
    worker.on('error', () => {
      /* handled below: the flag never turns, and the main thread signs the rest itself */
    });
  } catch {
    worker = null;
  }
  const first = messages.slice(0, split).map(sign);
  const flag = new Int32Array(done);
  if (worker) Atomics.wait(flag, 0, 0, 60_000);
  let second: Uint8Array[];
  if (Atomics.load(flag, 0) === 1) {
    const sigs = new Uint8Array(out);
    second = rest.map((_, i) => sigs.slice(i * 64, i * 64 + 64));
  } else {
    second = rest.map(sign);
  }
  void worker?.terminate();
  return [...first, ...second];
}
