// `npm run bench`: runs every test/bench/*.bench.ts (compiled to dist/test/bench/*.bench.js) in
// sequence. Each bench measures its own limit in the same run and reports a ratio against it,
// because these machines are shared and noisy: absolute times mean little, ratios travel.
// Usage: npm run bench [-- NAME...] to run only benches whose file name contains NAME.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { BenchResult } from './bench-kit.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const all: BenchResult[] = [];
for (const f of files) {
  console.log(`\n== ${f.replace(/\.js$/, '')}`);
  // Policy: each bench starts with a fresh per-user state directory (SPEC 5's writer marks): the
  // benches regenerate or restore their ledgers at fixed paths, which a writer's mark would
  // rightly refuse as a rollback. A bench that needs its own (field) sets it; children inherit it.
  process.env.LEDGER_STATE_DIR = mkdtempSync(join(tmpdir(), 'ledger-bench-state-'));
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: () => Promise<BenchResult[]> };
  for (const r of await mod.default()) {
    all.push(r);
    console.log(`${r.pass ? 'PASS' : 'MISS'}  ${r.name}: ${r.ratio.toFixed(2)}x (target ${r.target}) — ${r.detail}`);
  }
}
const missed = all.filter((r) => !r.pass);
console.log(`\n${all.length - missed.length} of ${all.length} targets met${missed.length ? `; missed: ${missed.map((r) => r.name).join(', ')}` : ''}`);
process.exitCode = missed.length ? 1 : 0;
