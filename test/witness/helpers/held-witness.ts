// A witness process that stops between its durable state write and its answer, for the crash
// test (serve.test.ts): it is `ledger witness serve`'s server with an afterPersist hook that
// prints "persisted <size>" and then blocks its only thread, so the answer is never sent and the
// test can SIGKILL it at exactly that point, with no timing involved.
// Run as: node dist/test/witness/helpers/held-witness.js <state dir>
import { join } from 'node:path';
import { readFileSync, writeSync } from 'node:fs';
import { readSecretKey } from '../../../src/keys/key-file.js';
import { createCosigner } from '../../../src/tlog/cosignature.js';
import { parseWitnessConfig } from '../../../src/witness/config.js';
import { startWitness } from '../../../src/witness/server.js';

const dir = process.argv[2];
const config = parseWitnessConfig(readFileSync(join(dir, 'witness.conf'), 'utf8'));
const cosigner = createCosigner(config.name, readSecretKey(join(dir, 'witness.key')).seed, Date.now);
const w = await startWitness({
  dir, config, cosigner, host: '127.0.0.1', port: 0,
  afterPersist: (_origin, size) => {
    writeSync(1, `persisted ${size}\n`);
    // Blocks the only thread for good: the answer is never written.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  },
});
process.stdout.write(`${w.url}\n`);
