// `npm run build`: compiles and packages the project, one step at a time. Run from anywhere:
// paths are taken from this file's place (src/launch/ in the project root).
//
//   1. tsc              src/, audit/, test/  ->  dist/  (type-checks everything, emits the library)
//   2. the MCP listing  dist/src/agents/mcp-listing.js -> mcp-listing.json (dist/src/agents, dist/cli)
//   3. the CLI bundle   dist/src/cli/main.js ->  dist/cli/bundle.cjs
//   4. the launcher     src/launch/launcher.cts -> dist/cli/ledger.cjs   (what `bin` names), and
//                       the cache writer it loads only to write a cache, dist/cli/cache-writer.cjs
//   5. the cache primer src/launch/prime-cache.cts -> dist/cli/prime-cache.cjs
//   6. the audit worker dist/audit/worker.js -> dist/cli/worker.js
//   7. the code cache   run the primer: dist/cli/bundle.cache, and bundle.<verb>.cache for the
//                       verbs with their own (append, audit, gate, the handoff and reading verbs,
//                       hook: bundle-loader.cts VERB_CACHES)
//
// A step that fails stops the build with `build: <step> failed: <why>` and exit code 1, so
// neither `npm test` nor `npm ci` goes on with a dist/ that is half old, half new.
//
// Policy, what the package ships (package.json "files"): one CLI, the bundled one behind
// dist/cli/ledger.cjs (with bundle.cjs, its code caches, their writer and its audit worker); the library,
// dist/src without cli/, demo/ and launch/ (nothing in the library imports them); and the auditor,
// dist/audit (with its own worker.js, for a library caller's threaded audit). Not shipped: the
// unbundled CLI (dist/src/cli/bin.js, built because tests drive it), the demo (`npm run demo`
// works from a clone) and the cache primer (the shipped cache is made here; on another Node the
// launcher rewrites it at first run). `npm pack --dry-run` lists what ships.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const at = (path) => join(root, path);

/** Runs one step; on failure prints which step and why, and exits 1. */
async function step(name, run) {
  try {
    await run();
  } catch (e) {
    // esbuild has already printed its diagnostics (file, line, the code) above this line, and
    // its message only counts them.
    const why = Array.isArray(e?.errors) ? `${e.errors.length} error(s), shown above` : e instanceof Error ? e.message.split('\n')[0] : String(e);
    process.stderr.write(`build: ${name} failed: ${why}\n`);
    process.exit(1);
  }
}

/** Runs `node script ...args` in the project root, its output passed through; throws unless it exits 0. */
function node(script, args) {
  const r = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${script} exited ${r.status ?? `on signal ${r.signal}`}`);
}

// Options every esbuild step shares. Node 20 is the oldest Node we support (package.json
// "engines"); warnings and errors are printed, progress is not.
const forNode = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };

await step('tsc', () => {
  // Resolved through typescript's package.json: its "exports" do not expose bin/tsc itself.
  const pkg = createRequire(import.meta.url).resolve('typescript/package.json');
  node(join(dirname(pkg), 'bin', 'tsc'), ['-p', at('tsconfig.json')]);
});

// The MCP server's first answers (src/agents/mcp-listing.ts): what `initialize` and `tools/list`
// say, computed here from the tools' zod schemas, so `ledger mcp` answers them before it loads
// the SDK and zod. Written beside the compiled front and beside the bundle, where each reads it.
await step('MCP listing', async () => {
  const { mcpListing } = await import(pathToFileURL(at('dist/src/agents/mcp-listing.js')).href);
  const text = JSON.stringify(mcpListing());
  for (const dir of ['dist/src/agents', 'dist/cli']) {
    mkdirSync(at(dir), { recursive: true });
    writeFileSync(at(`${dir}/mcp-listing.json`), text);
  }
});

await step('CLI bundle', () =>
  build({
    ...forNode,
    // The compiled (type-checked) output of step 1, so the bundle is exactly what the tests import.
    entryPoints: [at('dist/src/cli/main.js')],
    outfile: at('dist/cli/bundle.cjs'),
    // CommonJS, not ESM: the launcher runs it as a vm.Script, the one way to hand V8 a code cache,
    // and one file spares every start the ESM loader resolving and reading each module.
    format: 'cjs',
    // Whitespace and syntax only: a smaller source for V8 to read and hash at every start (about
    // 1-2 ms of `ledger append`); names are kept, so stack traces in bug reports stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    // yaml stays a runtime dependency of the library; the CLI loads its own bundle of it
    // (dist/cli/yaml.cjs, step 5b) only in the verbs that write HANDOFF.yml; bundled, every
    // start would read its source and carry it in the cache. The MCP SDK and zod (`ledger mcp`
    // alone loads them), smol-toml and jsonc-parser (`ledger setup`) stay external for the same reason.
    external: ['yaml', '@modelcontextprotocol/sdk', 'zod', 'smol-toml', 'jsonc-parser'],
    // import.meta does not exist in CommonJS, and the audit finds its worker at
    // new URL('./worker.js', import.meta.url): give the bundle its own file URL instead, so that
    // URL is dist/cli/worker.js (step 6).
    define: { 'import.meta.url': '__import_meta_url' },
    banner: { js: "var __import_meta_url=require('url').pathToFileURL(__filename).href;" },
  }),
);

// Speed: the bundle must be ASCII alone (one non-ASCII character, which esbuild keeps in a regular
// expression literal, makes V8 hold all of it as two-byte text): test/cli/bundle-ascii.test.ts
// fails on one, naming where it is.

// The launcher and the primer are small CommonJS entry points that load the bundle through
// bundle-loader.cts; each is bundled with it, so a start opens one file before the bundle. The
// launcher's #! line is kept, and esbuild marks such an output executable.
// The cache writer (cache-writer.cts, the durable recipe) is a file of its own beside them, which
// they require only when they write a cache: Node compiles the launcher at every start, without a
// cache, and the recipe was most of its source.
const launchExternal = ['./cache-writer.cjs'];
await step('launcher', () =>
  // Minified as the bundle is (names kept): Node compiles the launcher itself without a cache.
  build({ ...forNode, format: 'cjs', entryPoints: [at('src/launch/launcher.cts')], outfile: at('dist/cli/ledger.cjs'), minifyWhitespace: true, minifySyntax: true, external: launchExternal }),
);
await step('cache writer', () =>
  build({ ...forNode, format: 'cjs', entryPoints: [at('src/launch/cache-writer.cts')], outfile: at('dist/cli/cache-writer.cjs'), minifyWhitespace: true, minifySyntax: true }),
);
await step('cache primer', () =>
  build({ ...forNode, format: 'cjs', entryPoints: [at('src/launch/prime-cache.cts')], outfile: at('dist/cli/prime-cache.cjs'), external: launchExternal }),
);

// The bundled CLI's audit threads run this (see step 2's define). ESM, as Node loads a .js file
// in this package ("type": "module"); bundled, so the bundle needs nothing from dist/audit.
// The libraries some verbs load on first use (bundle-loader.cts LIBRARIES): one file each, with
// its own code cache (step 7), so a verb that never renders HANDOFF.yml never reads yaml.
// yaml: only what HANDOFF.yml's writer uses (src/handoff/yaml-lib.ts CliYaml), taken from the
// package's ESM build so esbuild leaves out the parser: 69 KB instead of 160 KB to read at the
// start of every verb that writes the views (the same stringify code; a test renders both).
const yamlRoot = dirname(createRequire(import.meta.url).resolve('yaml/package.json'));
await step('library bundles', () =>
  build({
    ...forNode,
    format: 'cjs',
    // With the package's version (test/handoff/yaml-bundle.test.ts checks it is the package's own).
    stdin: { contents: `export { Document, visit, isScalar } from ${JSON.stringify(join(yamlRoot, 'browser/dist/index.js'))};\nexport const version = ${JSON.stringify(JSON.parse(readFileSync(join(yamlRoot, 'package.json'), 'utf8')).version)};`, resolveDir: yamlRoot, loader: 'js' },
    outfile: at('dist/cli/yaml.cjs'),
    minifyWhitespace: true,
    minifySyntax: true,
  }),
);

await step('audit worker', () =>
  build({ ...forNode, format: 'esm', entryPoints: [at('dist/audit/worker.js')], outfile: at('dist/cli/worker.js') }),
);

await step('code cache', () => {
  // A cache left from an earlier build was made for other bundle bytes: V8 would reject it, and a
  // failed primer must not leave it looking current.
  for (const f of readdirSync(at('dist/cli'))) if (/^(bundle|yaml)(\.[a-z]+)?\.cache$/.test(f)) rmSync(at(`dist/cli/${f}`), { force: true });
  // Its own process, so the cache holds what the verbs ran and nothing of this script.
  node(at('dist/cli/prime-cache.cjs'), []);
});
