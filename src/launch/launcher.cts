#!/usr/bin/env node
// The `ledger` executable: loads the bundled CLI through the V8 code cache beside it (see
// bundle-loader.cts). The build primes that cache by running the verbs once (prime-cache.cts);
// when it is missing or V8 rejects it, a fresh one is written at exit if the folder is writable.
import { loadBundle, writeCache } from './bundle-loader.cjs';

const { cli, script, cacheAccepted } = loadBundle(__dirname, module);
if (!cacheAccepted) process.once('exit', () => writeCache(__dirname, script));
cli.main();
