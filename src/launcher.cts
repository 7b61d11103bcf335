#!/usr/bin/env node
// The `ledger` executable: loads the bundled CLI (dist/cli/bundle.cjs) through a V8 code cache
// kept beside it, so a start does not re-parse ~300 KB of JavaScript. `ledger append` and
// `ledger gate` must cost little more than starting node at all (issues 2-4), and parsing the
// bundle is a large share of that.
//
// Policy: the cache lives only beside the bundle, never in a shared temporary directory, where
// another user could plant one: whoever can write it can already rewrite the bundle itself. V8
// rejects a cache made for other source bytes or another V8; then, or when there is none, the
// bundle is compiled as usual and a fresh cache is written (atomically) at exit if the folder
// is writable. A missing, stale or unwritable cache only costs time.
import { readFileSync, renameSync, writeFileSync, unlinkSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import vm from 'node:vm';

const bundle = join(__dirname, 'bundle.cjs');
const cacheFile = join(__dirname, 'bundle.cache');
// The bundle starts with its own #! line (so it can also run directly); inside the module
// wrapper that line would be a syntax error, so it becomes a comment of the same length.
const raw = readFileSync(bundle, 'utf8');
const source = raw.startsWith('#!') ? '//' + raw.slice(2) : raw;
let cached: Buffer | undefined;
try {
  cached = readFileSync(cacheFile);
} catch {
  cached = undefined;
}

const script = new vm.Script((Module as unknown as { wrap(s: string): string }).wrap(source), {
  filename: bundle,
  cachedData: cached,
  // Should the bundle ever call import(), hand it to the launcher's own loader.
  importModuleDynamically: ((specifier: string) => import(specifier)) as never,
});
if (cached === undefined || script.cachedDataRejected) {
  process.once('exit', () => {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cacheFile);
    } catch {
      try {
        unlinkSync(tmp);
      } catch {
        /* not writable: run without a cache */
      }
    }
  });
}
const mod = new Module(bundle, module) as Module & { filename: string; paths: string[] };
mod.filename = bundle;
mod.paths = (Module as unknown as { _nodeModulePaths(d: string): string[] })._nodeModulePaths(__dirname);
const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
run.call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, __dirname);
