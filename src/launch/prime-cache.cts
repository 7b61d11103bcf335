// Build step: primes dist/cli/bundle.cache. V8's code cache holds the bytecode of the functions
// that had run when it was made, so it is made here after the common verbs have each run once,
// in-process, on a throwaway ledger in a temporary directory. Without this, the first call of
// every function `ledger append` or `ledger gate` uses is compiled at each start.
//
// Then each verb of VERB_CACHES (bundle-loader.cts) gets a cache of its own, bundle.<verb>.cache,
// holding only what that verb's runs compiled: the ledger it runs on is made by a child process
// (`--setup`, which writes no cache), and this process runs only the verb.
//
// Run: node dist/cli/prime-cache.cjs (the build does). Exits 1 if a verb fails (a bug: the build
// then fails rather than ship a cache that silently misses the code a verb runs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIBRARIES, VERB_CACHES, installLibraries, loadBundle, loadedLibraries, writeCache, type CliBundle } from './bundle-loader.cjs';

/** A run: its argv, the exit it must have, and what it reads on stdin (default: the batch). */
type Run = [argv: string[], exit: number, stdin?: string];

/**
 * Speed (issue 22's field targets): what the verbs run on a long ledger is in the cache, not only
 * what they run on a short one. V8 compiles at first call, at every start, whatever the cache
 * lacks; the field's ledgers hold more than MEMO_EVERY (handoff/fold-memo.ts) records, so their
 * folds start from the fold memo, which a ledger of a dozen records never writes. CI_PAIRS
 * operations of CI (an intent and its handoff), appended in one `append --batch` after the
 * genesis, give every later verb that memo and a tail of the field's kinds. The reading verbs
 * run as text and as --json (scripts and agents read the JSON).
 */
const CI_PAIRS = 150;
const ciBatch = Array.from({ length: CI_PAIRS }, (_, i) => [
  JSON.stringify({ kind: 'intent', logical_operation_id: `ci_${i}`, execution_id: 'run', action: 'deploy' }),
  JSON.stringify({ kind: 'handoff', logical_operation_id: `ci_${i}`, execution_id: 'run', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }),
].join('\n')).join('\n') + '\n';
const hookInput = (event: string) => JSON.stringify({ hook_event_name: event, stop_hook_active: false });

/**
 * Speed (issue 26: `gate` with no --floor after an earlier gate by the same user <= 1.5x `node -e
 * ''`): how many of a verb's first runs are made by the setup child and left out of the verb's
 * own cache. A user's first gate audits from the genesis, once, and keeps their floor; every
 * later gate starts from that floor and runs other code, which is what bundle.gate.cache holds
 * (a smaller cache, deserialised at every start, and nothing of that path compiled at run time).
 */
const WARM_UP_RUNS: Partial<Record<string, number>> = { gate: 1 };

/** Every run, in order, on one ledger made by the first. */
function runsIn(work: string): Run[] {
  const floor = join(work, 'floor.json');
  return [
    [['init', '--name', 'prime'], 0],
    [['append', '--batch'], 0, ciBatch],
    [['append', 'handoff', '--op', 'op_a', '--exec', 'e1', '--outcome', 'success', '--evidence', 'schema=schema.sql', '--invariant', 'tests=ok:1 passed'], 0],
    [['append', 'handoff', '--op', 'op_a', '--exec', 'e1', '--outcome', 'success', '--evidence', 'schema=schema.sql', '--invariant', 'tests=ok:1 passed'], 0],
    [['append', 'intent', '--op', 'op_b', '--exec', 'e1', '--action', 'deploy'], 0],
    [['append', '--batch'], 0],
    [['head'], 0],
    [['head', '--json'], 0],
    [['show', '1'], 0],
    [['show', '1', '--json'], 0],
    [['log', '--limit', '3'], 0],
    [['log', '--limit', '3', '--json'], 0],
    // The first gate audits from the genesis and keeps this user's floor; the second starts from
    // it, as every later gate of the field does (see WARM_UP_RUNS).
    [['gate', 'op_a', '--require-invariant', 'tests'], 0],
    [['gate', 'op_a', '--require-invariant', 'tests'], 0],
    [['audit'], 0],
    [['audit', '--floor', floor, '--advance'], 0],
    [['audit', '--floor', floor], 0],
    [['pending'], 0],
    [['start', 'item', '--summary', 'prime the cache'], 0],
    [['checkpoint', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--verified', 'v'], 0],
    [['resume', 'item'], 0],
    [['resume', 'item', '--json'], 0],
    [['status'], 0],
    [['status', '--json'], 0],
    // The hooks while `prime` owns a live item in a changed work tree (the stop's path that asks git).
    [['hook', 'claude', 'session-start'], 0, hookInput('SessionStart')],
    [['hook', 'claude', 'stop'], 0, hookInput('Stop')],
    [['hook', 'claude', 'session-end'], 0, hookInput('SessionEnd')],
    [['hook', 'codex', 'session-start'], 0, hookInput('SessionStart')],
    [['hook', 'codex', 'stop'], 0, hookInput('Stop')],
    [['finish', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--verified', 'v'], 0],
    [['append', 'handoff', '--op', 'op_a', '--exec', 'e2', '--outcome', 'bogus'], 2],
  ];
}

/** Runs `runs` in-process in `work` (made ready for them by the caller). */
async function runAll(cli: CliBundle, work: string, runs: Run[]): Promise<void> {
  // As a user's shell runs the verbs (and the field bench): the ledger found from the working
  // directory, the key and the trust file where `init` puts them, so the cache holds that search
  // too; this build's own state directory, so no user's state sees the throwaway ledgers.
  const env: Record<string, string> = {
    LEDGER_STATE_DIR: join(work, '.state'),
    LEDGER_AGENT: 'prime',
  };
  const batch = [1, 2].map((i) => JSON.stringify({ kind: 'handoff', logical_operation_id: 'batch_op', execution_id: `e${i}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).join('\n') + '\n';
  let said = '';
  let stdin = batch;
  const io = { stdout: () => {}, stderr: (t: string) => void (said += t), env, cwd: work, isTTY: false, readStdin: async () => stdin };
  for (const [argv, want, input] of runs) {
    said = '';
    stdin = input ?? batch;
    const code = await cli.runCli(argv, io);
    if (code !== want) throw new Error(`\`ledger ${argv.join(' ')}\` exited ${code}, expected ${want}: ${said.trim()}`);
  }
}

/**
 * Makes `work` a git project with one commit and a change since (what `resume` and the stop hook
 * ask git about, as in a real project). Policy: a machine without git still builds; the verbs
 * then run their no-repository path here, and the rest is compiled at first use.
 */
function gitProject(work: string): void {
  // As the verbs run git (handoff/git.ts): no GIT_* variable of the build's environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_')));
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=prime', '-c', 'user.email=prime@example.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: work, env, stdio: 'ignore' }).status === 0;
  if (git('init', '-q') && git('add', 'schema.sql') && git('commit', '-q', '-m', 'the project')) writeFileSync(join(work, 'notes.txt'), 'a change since\n');
}

/** A fresh throwaway folder for one ledger, or null (see the Policy). */
function workDir(): string | null {
  try {
    const work = mkdtempSync(join(tmpdir(), 'ledger-prime-'));
    writeFileSync(join(work, 'schema.sql'), 'CREATE TABLE t (id INTEGER);\n');
    gitProject(work);
    return work;
  } catch (e) {
    // Policy: an install on a machine without a writable temporary directory still succeeds;
    // the launcher then writes a cache at the first run instead (slower starts until then).
    process.stderr.write(`prime-cache: no code cache made (${(e as Error).message}); the first \`ledger\` run writes one\n`);
    return null;
  }
}

/** bundle.cache (every run) and the libraries' caches, then each verb's own. */
async function primeAll(): Promise<void> {
  const { cli, script } = loadBundle(__dirname, module, false);
  installLibraries(__dirname, module, false);
  const work = workDir();
  if (work === null) return;
  try {
    await runAll(cli, work, runsIn(work));
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
  for (const verb of VERB_CACHES) {
    const r = spawnSync(process.execPath, [__filename, '--verb', verb], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`the cache of \`ledger ${verb}\` was not made (exit ${r.status ?? r.signal})`);
  }
}

/** bundle.<verb>.cache: a child runs every run before the verb's first (past its warm-up runs); this process, the verb's. */
async function primeVerb(verb: string): Promise<void> {
  const work = workDir();
  if (work === null) return;
  try {
    const runs = runsIn(work);
    const first = runs.findIndex(([argv], i) => argv[0] === verb && runs.slice(0, i).filter(([a]) => a[0] === verb).length === (WARM_UP_RUNS[verb] ?? 0));
    if (first < 0) throw new Error(`no run of \`ledger ${verb}\` to prime its cache with`);
    const setup = spawnSync(process.execPath, [__filename, '--setup', work, String(first)], { stdio: 'inherit' });
    if (setup.status !== 0) throw new Error(`the ledger for \`ledger ${verb}\` was not made (exit ${setup.status ?? setup.signal})`);
    const { cli, script } = loadBundle(__dirname, module, false);
    installLibraries(__dirname, module, false);
    await runAll(cli, work, runs.slice(first).filter(([argv]) => argv[0] === verb));
    if (!writeCache(__dirname, script, `bundle.${verb}`)) throw new Error(`could not write ${join(__dirname, `bundle.${verb}.cache`)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `--setup WORK N`: the first N runs in WORK, no cache written. */
async function setup(work: string, count: number): Promise<void> {
  const { cli } = loadBundle(__dirname, module, false);
  installLibraries(__dirname, module, false);
  await runAll(cli, work, runsIn(work).slice(0, count));
}

const [mode, arg, n] = process.argv.slice(2);
(mode === '--verb' ? primeVerb(arg) : mode === '--setup' ? setup(arg, Number(n)) : primeAll()).catch((e: unknown) => {
  process.stderr.write(`prime-cache: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
