// Loads the bundled CLI (dist/cli/bundle.cjs) through a V8 code cache kept beside it
// (bundle.cache). Shared by the `ledger` launcher and by the build step that primes the cache.
//
// Why: `ledger append` and `ledger gate` must cost little more than starting node at all
// (issues 2-4). Without a cache every start parses the ~300 KB bundle, and every function a verb
// runs is compiled on its first call. A cache made after the verbs have run holds their bytecode.
//
// Policy: the cache lives only beside the bundle, never in a shared temporary directory, where
// another user could plant one: whoever can write it can already rewrite the bundle itself. V8
// rejects a cache made for other source bytes or another V8, and a missing, stale or unwritable
// cache only costs time.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import vm from 'node:vm';

/** What the bundle exports (src/cli/main.ts). */
export interface CliBundle {
  main(): void;
  runCli(argv: string[], io: unknown): Promise<number>;
}

export interface LoadedBundle {
  cli: CliBundle;
  script: vm.Script;
  /** Whether a cache was there and V8 took it. */
  cacheAccepted: boolean;
}

/**
 * Speed, for stated targets (`ledger append` and `ledger audit --floor` <= 1.3x `node -e ''`;
 * issue 22's field targets: the read verbs <= 1.6x, the write verbs and the hooks <= 1.8x,
 * `gate --floor` <= 1.3x): these verbs start from a code cache of their own, `bundle.<verb>.cache`,
 * made by the primer from that verb's runs alone. V8 deserialises the whole cache at every start,
 * and the shared one holds every common verb's code (about 720 KB against 320-470 KB: `ledger
 * head` from its own cache took 0.12x `node -e ''` less CPU, measured for issue 22). Every other
 * verb, and a run whose first argument is not the verb, uses `bundle.cache`.
 */
export const VERB_CACHES = ['append', 'audit', 'gate', 'start', 'checkpoint', 'finish', 'status', 'resume', 'log', 'show', 'head', 'hook'] as const;

/** The cache a start with `argv` (process.argv) loads: `bundle.<verb>` or `bundle`. */
export function cacheNameFor(argv: readonly string[]): string {
  const verb = argv[2];
  return (VERB_CACHES as readonly string[]).includes(verb) ? `bundle.${verb}` : 'bundle';
}

export function loadBundle(dir: string, parent: NodeModule, useCache = true, cacheName = 'bundle'): LoadedBundle {
  const { exports, script, cacheAccepted } = loadScript(dir, 'bundle', parent, useCache, cacheName);
  return { cli: exports as CliBundle, script, cacheAccepted };
}

/** `<name>.cjs` run as a CommonJS module through its code cache `<cacheName>.cache`, both in `dir`. */
function loadScript(dir: string, name: string, parent: NodeModule, useCache: boolean, cacheName = name): { exports: unknown; script: vm.Script; cacheAccepted: boolean } {
  const bundle = join(dir, `${name}.cjs`);
  // Its entry (src/cli/main.ts) has no #! line: the bundle is only ever loaded from here.
  const source = readWrapped(bundle);
  let cached: Buffer | undefined;
  if (useCache) {
    try {
      cached = readFileSync(join(dir, `${cacheName}.cache`));
    } catch {
      cached = undefined;
    }
  }
  const script = new vm.Script(source, {
    filename: bundle,
    cachedData: cached,
    // The bundle's one import() (node:child_process, in the hook) goes to Node's own ESM loader.
    // Speed: the constant (Node 20.12 and later) spares every start registering a callback for
    // this script (about 0.45M instructions, measured with callgrind); a Node without it gets the
    // callback through the launcher's own loader.
    importModuleDynamically: (vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ?? ((specifier: string) => import(specifier))) as never,
  });
  const mod = new Module(bundle, parent) as Module & { filename: string; paths: string[]; exports: unknown };
  mod.filename = bundle;
  mod.paths = (Module as unknown as { _nodeModulePaths(d: string): string[] })._nodeModulePaths(dir);
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  run.call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, dir);
  return { exports: mod.exports, script, cacheAccepted: cached !== undefined && !script.cachedDataRejected };
}

/**
 * `file` as CommonJS wraps it (Module.wrap: the function header, the text, the closing line),
 * decoded into one string. Speed: Module.wrap(readFileSync(file)) made the 500 KB text twice,
 * once read and once flattened for the compiler, both in V8's young generation, which then
 * collected once more per command (`ledger status`: three collections of about 1 ms, two this
 * way). A file that changes size while it is read is read the plain way.
 */
export function readWrapped(file: string): string {
  const plain = () => (Module as unknown as { wrap(s: string): string }).wrap(readFileSync(file, 'utf8'));
  // A Node whose Module no longer names its wrapper as two strings gets the plain way.
  const wrapper = (Module as unknown as { wrapper?: unknown }).wrapper;
  if (!Array.isArray(wrapper) || wrapper.length !== 2 || typeof wrapper[0] !== 'string' || typeof wrapper[1] !== 'string') return plain();
  const [pre, post] = wrapper as [string, string];
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const at = Buffer.byteLength(pre, 'utf8');
    const buf = Buffer.allocUnsafe(at + size + Buffer.byteLength(post, 'utf8'));
    buf.write(pre, 0, 'utf8');
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, at + got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    const more = readSync(fd, Buffer.allocUnsafe(1), 0, 1, size);
    if (got === size && more === 0) {
      buf.write(post, at + size, 'utf8');
      return buf.toString('utf8');
    }
  } finally {
    closeSync(fd);
  }
  return plain();
}

/**
 * Speed, for stated targets (issue 14: `start` and `checkpoint` <= 1.5x `node -e ''`): the
 * libraries the CLI loads only for some verbs (yaml, for the verbs that write HANDOFF.yml: about
 * 30 ms from node_modules) are bundled on their own beside the CLI, each with its code cache,
 * and loaded on first use through the hook src/launch-hook.ts reads. Every other verb pays
 * nothing for them. The ones loaded are returned by `loadedLibraries` (their caches to write).
 */
export const LIBRARIES = ['yaml'] as const;
const loaded = new Map<string, { script: vm.Script; cacheAccepted: boolean; exports: unknown }>();

export function installLibraries(dir: string, parent: NodeModule, useCache = true): void {
  (globalThis as { __handoffLedgerLibrary?: (name: string) => unknown }).__handoffLedgerLibrary = (name: string) => {
    if (!(LIBRARIES as readonly string[]).includes(name)) return undefined;
    let lib = loaded.get(name);
    if (!lib) {
      lib = loadScript(dir, name, parent, useCache);
      loaded.set(name, lib);
    }
    return lib.exports;
  };
}

export function loadedLibraries(): { name: string; script: vm.Script; cacheAccepted: boolean }[] {
  return [...loaded].map(([name, l]) => ({ name, script: l.script, cacheAccepted: l.cacheAccepted }));
}

/**
 * Writes the cache for `script` beside the bundle by the durable recipe (src/fs/durable.ts);
 * returns false if it could not.
 *
 * Policy: the cache must be whole or absent, like any file that must survive a crash. V8 checks
 * a cache's header and length but, in release builds, not its checksum: a cache of the right
 * length whose bytes a power cut zeroed crashes node at every start (SIGSEGV, tried on Node
 * 20.20), where a missing or truncated one only costs time. The recipe is loaded here, at the
 * rare write, not at every start: it is a file of its own (cache-writer.cts), not part of the
 * launcher that Node compiles at every start.
 */
export function writeCache(dir: string, script: vm.Script, name = 'bundle'): boolean {
  try {
    // Beside the launcher in dist/cli (the build keeps it out of the launcher: cache-writer.cts).
    const { writeCacheFile } = require('./cache-writer.cjs') as typeof import('./cache-writer.cjs');
    writeCacheFile(dir, name, script.createCachedData());
    return true;
  } catch {
    return false; // not writable: run without a cache
  }
}
