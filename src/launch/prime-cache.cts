// Build step: primes dist/cli/bundle.cache. V8's code cache holds the bytecode of the functions
// that had run when it was made, so it is made here after the common verbs have each run once,
// in-process, on a throwaway ledger in a temporary directory. Without this, the first call of
// every function `ledger append` or `ledger gate` uses is compiled at each start.
//
// Run: node dist/cli/prime-cache.cjs (the build does). Exits 1 if a verb fails (a bug: the build
// then fails rather than ship a cache that silently misses the code a verb runs).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIBRARIES, installLibraries, loadBundle, loadedLibraries, writeCache } from './bundle-loader.cjs';

async function prime(): Promise<void> {
  const { cli, script } = loadBundle(__dirname, module, false);
  installLibraries(__dirname, module, false);
  let work: string;
  try {
    work = mkdtempSync(join(tmpdir(), 'ledger-prime-'));
  } catch (e) {
    // Policy: an install on a machine without a writable temporary directory still succeeds;
    // the launcher then writes a cache at the first run instead (slower starts until then).
    process.stderr.write(`prime-cache: no code cache made (${(e as Error).message}); the first \`ledger\` run writes one\n`);
    return;
  }
  try {
    const env: Record<string, string> = {
      LEDGER_DIR: join(work, '.ledger'),
      LEDGER_KEY: join(work, 'keys', 'harness.key'),
      LEDGER_TRUST: join(work, 'keys', 'trust.json'),
      LEDGER_AGENT: 'prime',
    };
    writeFileSync(join(work, 'schema.sql'), 'CREATE TABLE t (id INTEGER);\n');
    const batch = [1, 2].map((i) => JSON.stringify({ kind: 'handoff', logical_operation_id: 'batch_op', execution_id: `e${i}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).join('\n') + '\n';
    let said = '';
    const io = { stdout: () => {}, stderr: (t: string) => void (said += t), env, cwd: work, isTTY: false, readStdin: async () => batch };
    const floor = join(work, 'floor.json');
    const runs: [string[], number][] = [
      [['init', '--name', 'prime'], 0],
      [['append', 'handoff', '--op', 'op_a', '--exec', 'e1', '--outcome', 'success', '--evidence', 'schema=schema.sql', '--invariant', 'tests=ok:1 passed'], 0],
      [['append', 'handoff', '--op', 'op_a', '--exec', 'e1', '--outcome', 'success', '--evidence', 'schema=schema.sql', '--invariant', 'tests=ok:1 passed'], 0],
      [['append', 'intent', '--op', 'op_b', '--exec', 'e1', '--action', 'deploy'], 0],
      [['append', '--batch'], 0],
      [['head'], 0],
      [['show', '1'], 0],
      [['log', '--limit', '3'], 0],
      [['gate', 'op_a', '--require-invariant', 'tests'], 0],
      [['audit'], 0],
      [['audit', '--floor', floor, '--advance'], 0],
      [['audit', '--floor', floor], 0],
      [['pending'], 0],
      [['start', 'item', '--summary', 'prime the cache'], 0],
      [['checkpoint', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--verified', 'v'], 0],
      [['resume', 'item'], 0],
      [['status'], 0],
      [['finish', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--verified', 'v'], 0],
      [['append', 'handoff', '--op', 'op_a', '--exec', 'e2', '--outcome', 'bogus'], 2],
    ];
    for (const [argv, want] of runs) {
      said = '';
      const code = await cli.runCli(argv, io);
      if (code !== want) throw new Error(`\`ledger ${argv.join(' ')}\` exited ${code}, expected ${want}: ${said.trim()}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!writeCache(__dirname, script)) throw new Error(`could not write ${join(__dirname, 'bundle.cache')}`);
  const libs = loadedLibraries();
  for (const name of LIBRARIES) {
    const lib = libs.find((l) => l.name === name);
    if (!lib) throw new Error(`no verb loaded the ${name} library: its cache would be missing`);
    if (!writeCache(__dirname, lib.script, name)) throw new Error(`could not write ${join(__dirname, `${name}.cache`)}`);
  }
}

prime().catch((e: unknown) => {
  process.stderr.write(`prime-cache: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
