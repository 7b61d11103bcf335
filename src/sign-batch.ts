// Signing a large batch on two cores, overlapped with building it. Ed25519 signatures are
// deterministic, so a worker thread yields exactly the bytes the main thread would have.
//
// The batch path is synchronous (it runs under the writer lock), so the threads share memory
// instead of messages: the main thread builds record i (its id chains from record i-1, so this
// part is sequential), writes its signing message into a shared buffer and publishes the count;
// the worker, started first, signs messages as they are published, claiming each index from a
// shared counter. When the main thread has built every record it claims indexes from the same
// counter too, so the two finish together. Every signature has a done flag; whatever the worker
// did not finish (it failed, stalled or never started) the main thread signs itself, so the
// result never depends on the worker.
import type { Worker as WorkerType } from 'node:worker_threads';

// Below this many messages a worker's start-up (tens of ms) costs more than it saves.
export const PARALLEL_THRESHOLD = 4096;
// How long the main thread waits for a worker that stopped making progress before it signs the
// rest itself.
const STALL_MS = 2_000;

// Int32 slots of the control block.
const PUBLISHED = 0; // messages written so far
const CLAIMED = 1; // next index to sign (both threads claim from it)

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { createPrivateKey, sign } = require('node:crypto');
const { pkcs8, count, msgLen, msgs, sigs, control, done } = workerData;
const key = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
const ctl = new Int32Array(control);
const flags = new Int32Array(done);
const m = new Uint8Array(msgs);
const out = new Uint8Array(sigs);
for (;;) {
  const i = Atomics.add(ctl, ${CLAIMED}, 1);
  if (i >= count) break;
  while (Atomics.load(ctl, ${PUBLISHED}) <= i) Atomics.wait(ctl, ${PUBLISHED}, Atomics.load(ctl, ${PUBLISHED}), 50);
  out.set(sign(null, m.subarray(i * msgLen, (i + 1) * msgLen), key), i * 64);
  Atomics.store(flags, i, 1);
}
`;

/**
 * Calls `produce(i)` for i = 0..count-1 in order, on this thread, and returns the signature of
 * each message it returned. All messages must have the same length (record signing messages do:
 * a fixed prefix and a digest). With fewer than PARALLEL_THRESHOLD messages, signs inline.
 * `signed(i, sig)`, when given, is called on this thread for i = 0..count-1 in order, each once
 * its signature exists and after every produce: what the caller does with a signature (a batch
 * completes the line and hashes it into the tree) runs while the worker is still signing.
 */
export function signProduced(count: number, produce: (i: number) => Uint8Array, pkcs8: Uint8Array, sign: (m: Uint8Array) => Uint8Array, signed?: (i: number, sig: Uint8Array) => void): Uint8Array[] {
  if (count < PARALLEL_THRESHOLD) {
    const out: Uint8Array[] = [];
    for (let i = 0; i < count; i++) out.push(sign(produce(i)));
    if (signed) for (let i = 0; i < count; i++) signed(i, out[i]);
    return out;
  }
  const first = produce(0);
  const msgLen = first.length;
  const msgs = new Uint8Array(new SharedArrayBuffer(count * msgLen));
  const sigs = new Uint8Array(new SharedArrayBuffer(count * 64));
  const ctl = new Int32Array(new SharedArrayBuffer(8));
  const flags = new Int32Array(new SharedArrayBuffer(count * 4));
  let worker: WorkerType | null = null;
  try {
    // Loaded only here, for a batch this large: worker_threads costs a start a few ms.
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // None of the host's flags: under `node --input-type=module -e` the CommonJS source above
      // would not start, and the main thread would quietly sign the whole batch alone.
      execArgv: [],
      workerData: { pkcs8, count, msgLen, msgs: msgs.buffer, sigs: sigs.buffer, control: ctl.buffer, done: flags.buffer },
    });
    worker.unref();
    worker.on('error', () => {
      /* the flags stay 0 and the main thread signs those itself */
    });
  } catch {
    worker = null;
  }
  const publish = (i: number, m: Uint8Array) => {
    if (m.length !== msgLen) throw new RangeError(`message ${i} is ${m.length} bytes, expected ${msgLen}`);
    msgs.set(m, i * msgLen);
    Atomics.store(ctl, PUBLISHED, i + 1);
    Atomics.notify(ctl, PUBLISHED);
  };
  try {
    publish(0, first);
    for (let i = 1; i < count; i++) publish(i, produce(i));
  } catch (e) {
    // A record refused while placed (too long): the worker, waiting for messages that will
    // never come, goes with the batch.
    void worker?.terminate();
    throw e;
  }

  const signHere = (i: number) => {
    sigs.set(sign(msgs.subarray(i * msgLen, (i + 1) * msgLen)), i * 64);
    Atomics.store(flags, i, 1);
  };
  // In order: hand each finished signature to `signed`; between them, sign what is unclaimed;
  // when all is claimed, wait for the worker's, and sign whatever it leaves unfinished after a
  // stall. Speed (issue 26, `append --batch` >= 20,000 records/s): the caller's share of each
  // signature (the tree's hashes) runs on this thread while the worker signs, not after it.
  let next = 0;
  let waitingSince = -1;
  while (next < count) {
    if (Atomics.load(flags, next) === 1) {
      signed?.(next, sigs.subarray(next * 64, next * 64 + 64));
      next++;
      waitingSince = -1;
      continue;
    }
    if (Atomics.load(ctl, CLAIMED) < count) {
      const i = Atomics.add(ctl, CLAIMED, 1);
      if (i < count) signHere(i);
      continue;
    }
    const now = Date.now();
    if (waitingSince < 0) waitingSince = now;
    else if (now - waitingSince > STALL_MS) {
      signHere(next); // same bytes as the worker's, should it still finish
      continue;
    }
    Atomics.wait(flags, next, 0, 10);
  }
  void worker?.terminate();
  // Views into the one shared buffer: a batch keeps every signature until its lines are
  // written, and one small ArrayBuffer each is tens of thousands of objects for the GC.
  const out: Uint8Array[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = sigs.subarray(i * 64, i * 64 + 64);
  return out;
}
