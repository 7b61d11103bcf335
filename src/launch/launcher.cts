#!/usr/bin/env node
// The `ledger` executable: loads the bundled CLI through the V8 code cache beside it (see
// bundle-loader.cts; the verbs of VERB_CACHES have one of their own). The build primes that cache by running the verbs once (prime-cache.cts);
// when it is missing or V8 rejects it, a fresh one is written at exit if the folder is writable.
import { cacheNameFor, installLibraries, loadBundle, loadedLibraries, writeCache } from './bundle-loader.cjs';

const cacheName = cacheNameFor(process.argv);
const { cli, script, cacheAccepted } = loadBundle(__dirname, module, true, cacheName);
installLibraries(__dirname, module);
process.once('exit', () => {
  if (!cacheAccepted) writeCache(__dirname, script, cacheName);
  for (const lib of loadedLibraries()) if (!lib.cacheAccepted) writeCache(__dirname, lib.script, lib.name);
});
cli.main();
