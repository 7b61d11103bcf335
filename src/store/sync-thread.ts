// A second thread that runs one fdatasync while this thread goes on, so that the durable append's
// records flush is in flight while HEAD is signed and its temp file written and fsynced, instead
// of before them. (On ext4 the temp file's fsync still waits for the records flush's journal
// commit; what overlaps is HEAD's signing and the gaps between the calls: README, Speed.)
//
// The append stays synchronous: this thread posts the file descriptor through shared memory,
// does its own work, then blocks (Atomics.wait) until the helper says the flush returned.
//
// Policy: it only ever adds speed, never a way to be wrong. The order that matters is kept: HEAD
// is renamed only after the records flush has returned success (the temp file it overlaps is
// nobody's HEAD until then). A flush that failed is a failure; it is never retried (a second
// fdatasync after a failed one can report success for data that was lost). When the helper does
// not answer within HELPER_PATIENCE_MS this thread runs the fdatasync itself and stops using the
// helper: both calls flush the same file, so the append is durable exactly when its own call
// returns. A process starts the helper at its second append (a one-shot CLI never pays for a
// thread) and uses it once the thread is up; until then, and where threads are unavailable, the
// two flushes run in sequence as before.
import { fdatasyncSync } from 'node:fs';
import { createRequire } from 'node:module';

// Shared cells: the request number, the fd, the number of the request answered, its result
// (0 ok, 1 failed), whether the helper is up; then the failed call's errno code as bytes.
const REQ = 0, FD = 1, DONE = 2, RESULT = 3, UP = 4;
const CODE_AT = 32, CODE_BYTES = 32;

// CommonJS source, evaluated by the worker: nothing to resolve on disk, bundled or not.
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { fdatasyncSync } = require('node:fs');
const cell = new Int32Array(workerData.sab, 0, 8);
const code = new Uint8Array(workerData.sab, ${CODE_AT}, ${CODE_BYTES});
let seen = 0;
Atomics.store(cell, ${UP}, 1);
for (;;) {
  Atomics.wait(cell, ${REQ}, seen);
  const req = Atomics.load(cell, ${REQ});
  if (req === seen) continue;
  seen = req;
  let result = 0;
  try {
    fdatasyncSync(Atomics.load(cell, ${FD}));
  } catch (e) {
    result = 1;
    code.fill(0);
    code.set(Buffer.from(String((e && e.code) || 'EIO')).subarray(0, ${CODE_BYTES}));
  }
  Atomics.store(cell, ${RESULT}, result);
  Atomics.store(cell, ${DONE}, req);
  Atomics.notify(cell, ${DONE});
}
`;

/** How long to wait for the helper before flushing on this thread instead. */
const HELPER_PATIENCE_MS = 5_000;

interface Helper {
  cell: Int32Array;
  code: Uint8Array;
  req: number;
}

let enabled = true;
let calls = 0;
let helper: Helper | null = null;
let broken = false;

/**
 * Whether this process may start the helper thread (default yes). The CLI says no: it appends
 * once or twice per process, and starting a thread would cost more than it saves.
 */
export function useSyncThread(on: boolean): void {
  enabled = on;
}

function startHelper(): void {
  try {
    const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
    const sab = new SharedArrayBuffer(CODE_AT + CODE_BYTES);
    // execArgv: none of this process's flags; one such as --input-type=module (`node -e` of an
    // ES module) would make the CommonJS source above fail to start.
    const worker = new Worker(HELPER_SOURCE, { eval: true, execArgv: [], workerData: { sab }, stdout: false, stderr: false });
    worker.unref();
    // A helper that fails to start or dies is simply not used again (its `error` is ours to take,
    // or it would be thrown at the process).
    worker.on('error', () => {
      broken = true;
    });
    worker.on('exit', () => {
      broken = true;
    });
    helper = { cell: new Int32Array(sab, 0, 8), code: new Uint8Array(sab, CODE_AT, CODE_BYTES), req: 0 };
  } catch {
    broken = true;
  }
}

/** The helper when it is up and usable; starts it at this process's second call. */
function readyHelper(): Helper | null {
  if (!enabled || broken) return null;
  if (helper === null) {
    if (++calls >= 2) startHelper();
    return null;
  }
  return Atomics.load(helper.cell, UP) === 1 ? helper : null;
}

function syncError(h: Helper): Error {
  const end = h.code.indexOf(0);
  const code = Buffer.from(h.code.subarray(0, end < 0 ? CODE_BYTES : end)).toString('latin1') || 'EIO';
  return Object.assign(new Error(`${code}: fdatasync failed`), { code, syscall: 'fdatasync' });
}

/**
 * fdatasync(fd) on the helper thread while `meanwhile()` runs here; returns when both are done.
 * Throws the flush's error if it failed (it comes first: the records are not durable), else
 * `meanwhile`'s. Returns false, having done nothing, when there is no helper to use.
 */
export function fdatasyncOnHelper(fd: number, meanwhile: () => void): boolean {
  const h = readyHelper();
  if (h === null) return false;
  // Request numbers stay positive int32s (they live in an Int32Array); they wrap after 2^31 - 2.
  const prev = h.req;
  const req = prev >= 0x7ffffffe ? 1 : prev + 1;
  h.req = req;
  Atomics.store(h.cell, FD, fd);
  Atomics.store(h.cell, REQ, req);
  Atomics.notify(h.cell, REQ);
  let failure: { e: unknown } | null = null;
  try {
    meanwhile();
  } catch (e) {
    failure = { e };
  }
  const deadline = Date.now() + HELPER_PATIENCE_MS;
  while (Atomics.load(h.cell, DONE) !== req) {
    const left = deadline - Date.now();
    if (left <= 0) {
      // Fail safe, not fast: flush here (see Policy above) and leave the helper alone for good.
      broken = true;
      fdatasyncSync(fd);
      if (failure) throw failure.e;
      return true;
    }
    Atomics.wait(h.cell, DONE, prev, left);
  }
  if (Atomics.load(h.cell, RESULT) !== 0) throw syncError(h);
  if (failure) throw failure.e;
  return true;
}
