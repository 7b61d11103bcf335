// fdatasync of records.jsonl on a second thread, so that a durable append can write and fsync
// HEAD's temp file (and sign HEAD) while the records' data is being synced. The order SPEC 5
// asks for is kept by the caller: HEAD is renamed into place only after the wait below has
// returned, that is after the records' fdatasync has succeeded.
//
// The append path is synchronous, so the threads share memory, not messages (as
// sign-parallel.ts does): one request at a time in a small control block. The helper thread is
// started only by the second durable append of a process: a one-shot `ledger append` never pays
// for it (starting a thread costs milliseconds, the overlap saves about a tenth of one). Until
// it is running, and after anything unexpected, the data sync runs here, as before.
import { fdatasyncSync } from 'node:fs';
import { createRequire } from 'node:module';
import { getSystemErrorName } from 'node:util';
import type { Worker as WorkerType } from 'node:worker_threads';

const lazyRequire = createRequire(import.meta.url);

// Int32 slots of the control block.
const STATE = 0; // IDLE, REQUEST (main -> helper) or DONE (helper -> main)
const FD = 1;
const ERRNO = 2; // 0, or the negative errno of the failed fdatasync
const READY = 3; // set by the helper once it waits for requests
const IDLE = 0;
const REQUEST = 1;
const DONE = 2;

// How long to wait for the helper before giving up on it. Policy: fail closed. A sync that has
// not reported after this long is treated as failed (the append is cut back and refused), and the
// helper is not used again by this process; a disk that slow fails the plain path's callers too.
const STALL_MS = 120_000;

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { fdatasyncSync } = require('node:fs');
const ctl = new Int32Array(workerData);
Atomics.store(ctl, ${READY}, 1);
for (;;) {
  const s = Atomics.load(ctl, ${STATE});
  if (s !== ${REQUEST}) {
    Atomics.wait(ctl, ${STATE}, s);
    continue;
  }
  let errno = 0;
  try {
    fdatasyncSync(Atomics.load(ctl, ${FD}));
  } catch (e) {
    errno = typeof e.errno === 'number' && e.errno < 0 ? e.errno : -5;
  }
  Atomics.store(ctl, ${ERRNO}, errno);
  Atomics.store(ctl, ${STATE}, ${DONE});
  Atomics.notify(ctl, ${STATE});
}
`;

let ctl: Int32Array | null = null;
let worker: WorkerType | null = null;
let calls = 0;
let broken = false;

function spawn(): void {
  try {
    const { Worker } = lazyRequire('node:worker_threads') as typeof import('node:worker_threads');
    const block = new Int32Array(new SharedArrayBuffer(16));
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: block.buffer });
    w.unref();
    w.on('error', () => {
      broken = true;
    });
    w.on('exit', () => {
      broken = true;
    });
    ctl = block;
    worker = w;
  } catch {
    broken = true;
  }
}

function errnoError(errno: number): NodeJS.ErrnoException {
  let code = 'EIO';
  try {
    code = getSystemErrorName(errno);
  } catch {
    /* not an errno this platform names: EIO says enough */
  }
  return Object.assign(new Error(`${code}: fdatasync failed on the sync thread`), { code, errno, syscall: 'fdatasync' });
}

/** Whether requests go to the helper thread now (for tests). */
export function syncThreadReady(): boolean {
  return !broken && ctl !== null && worker !== null && Atomics.load(ctl, READY) === 1;
}

/**
 * Starts fdatasync(fd) and returns the function that waits for it: it returns once the data is
 * durable and throws the fdatasync's error otherwise. Call the waiter exactly once, before fd is
 * closed. When the helper thread is not running, the sync happens here, before this returns.
 */
export function startDataSync(fd: number): () => void {
  calls++;
  const c = ctl;
  if (broken || c === null || worker === null || Atomics.load(c, READY) !== 1 || Atomics.load(c, STATE) !== IDLE) {
    if (!broken && worker === null && calls >= 2) spawn();
    fdatasyncSync(fd);
    return () => {};
  }
  Atomics.store(c, ERRNO, 0);
  Atomics.store(c, FD, fd);
  Atomics.store(c, STATE, REQUEST);
  Atomics.notify(c, STATE);
  let waited = false;
  return () => {
    if (waited) return;
    waited = true;
    const deadline = Date.now() + STALL_MS;
    while (Atomics.load(c, STATE) !== DONE) {
      if (Date.now() >= deadline) {
        broken = true;
        throw Object.assign(new Error('ETIMEDOUT: the sync thread did not report'), { code: 'ETIMEDOUT', syscall: 'fdatasync' });
      }
      Atomics.wait(c, STATE, REQUEST, 1000);
    }
    const errno = Atomics.load(c, ERRNO);
    Atomics.store(c, STATE, IDLE);
    if (errno !== 0) throw errnoError(errno);
  };
}
