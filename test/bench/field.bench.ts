// Issue 22's Benchmarks, "in the field": a shared ledger of 200,000 CI records (intents and
// handoffs of CI operations) beside a few dozen work items, in a real git repository, with the
// key file and trust file where `ledger init` puts them (keys/harness.key, keys/trust.json).
// Each verb runs through the shipped binary as a user's shell runs it and does its real job.
//
// Two shapes of the same ledger, each measured:
//   items-after    the CI batch first, the work items spread through it and on top (the shape
//                  this bench built before issue 22)
//   items-before   the work items first, then the CI batch (a long-lived item beside CI
//                  traffic): this user ran `status` before the batch arrived, so what this user
//                  kept then is 200,000 records behind when the timed verbs run
//
// The targets, against `node -e ''`, both sides in the bare environment (bench-kit bareEnv: no
// NODE_EXTRA_CA_CERTS, no NODE_OPTIONS), timed alternately in the same run (medians):
//   read verbs    status, resume, log --limit 3, show, head            <= 1.6x
//   write verbs   append, start, checkpoint (no test command), finish  <= 1.8x
//   hooks         claude session-start, stop, session-end; codex session-start, stop  <= 1.8x
//   each of these on 200,000 records <= 1.2x itself on 1,000 records (the same shape)
//   gate --floor (the floor at HEAD), items-after                      <= 1.3x
//
// The generated ledgers are kept between runs in test/.scratch/ (200,000 records take a minute
// to sign); each run starts from the same bytes (records, HEAD, a fresh state directory) and
// writes its own records on top. The derived files (index, fold memo, the user's kept fold) are
// rebuilt each run; the first command after the batch, which builds them, is reported.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Ledger, auditLedger } from '../../src/ledger.js';
import { digestSource } from '../../src/causal/evidence.js';
import type { Draft } from '../../src/record.js';
import { headForLines, seedFrom, signerFor, streamLedger, type Json } from '../helpers/gen-ledger.js';
import { atMost, bareEnv, median, nowMs, timeCommand, type BenchResult, LEDGER_BIN } from './bench-kit.js';

const BIN = LEDGER_BIN;
const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
const COUNT = Number(process.env.FIELD_BENCH_RECORDS ?? 200_000);
/** The small ledger each verb is compared with (the same shape). */
const SMALL = 1_000;
const RUNS = Number(process.env.FIELD_BENCH_RUNS ?? 11);
/** Which shapes to run (comma-separated); default both. */
const SHAPES = (process.env.FIELD_BENCH_SHAPES ?? 'items-before,items-after').split(',') as Shape[];
/** Which verbs to time (comma-separated names, as the results name them); default all. */
const ONLY = process.env.FIELD_BENCH_VERBS?.split(',') ?? null;
/** The generated work items. */
const ITEMS = 36;

type Shape = 'items-before' | 'items-after';

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

const lease = (u: Json) => new Date(Date.parse(String(u.ts)) + 3_600_000).toISOString();
const base = (u: Json, seq: number) => ({ v: u.v, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts, agent: u.agent });

/** Record `within` (1: its start, 2: a checkpoint or finish) of work item `item`, as an older workflow wrote them. */
function itemRecord(u: Json, seq: number, item: number, within: 1 | 2): Json {
  const slug = `item-${String(item).padStart(2, '0')}`;
  const agent = item % 3 === 0 ? 'codex' : 'claude';
  const exec = `exec-${slug}`;
  if (within === 1) return { ...base(u, seq), agent, kind: 'start', logical_operation_id: slug, execution_id: exec, summary: `work item ${item}: the schema migration, part ${item}`, lease_until: lease(u) };
  const common = { ...base(u, seq), agent, logical_operation_id: slug, execution_id: exec, done: 'wrote the migration and its test', state: 'migration applies on a copy', next: 'run it on staging', verified: ['npm test: 212 passed'], attempted: [], blockers: [] };
  return item % 4 === 0
    ? { ...common, kind: 'finish', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }
    : { ...common, kind: 'checkpoint', lease_until: lease(u) };
}

/** A CI record: seq 2k-1 an intent and 2k its handoff, of operation ci-k, so every intent is resolved. */
function ciRecord(u: Json, seq: number): Json {
  const k = (seq + 1) >> 1;
  return seq % 2 === 1
    ? { ...base(u, seq), agent: 'ci', kind: 'intent', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, action: 'deploy build to staging' }
    : { ...u, agent: 'ci', kind: 'handoff', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, depends_on: [] };
}

/** items-after: the work items spread through the CI records, one every `every` seqs. */
function spreadRecord(every: number) {
  return (u: Json, seq: number): Json => {
    if (seq === 0) return u;
    const item = Math.floor(seq / every);
    const within = seq % every;
    if (item >= 1 && item <= ITEMS && (within === 1 || within === 2)) return itemRecord(u, seq, item, within);
    return ciRecord(u, seq);
  };
}

/** items-before: the work items at seq 1 .. 2 * ITEMS (an odd seq its start), then only CI records. */
function itemsFirst(u: Json, seq: number): Json {
  if (seq === 0) return u;
  if (seq <= 2 * ITEMS) return itemRecord(u, seq, (seq + 1) >> 1, seq % 2 === 1 ? 1 : 2);
  return ciRecord(u, seq);
}

interface Ledgerish {
  shape: Shape;
  count: number;
  work: string;
  dir: string;
  /** What the bench times in: the bare environment (bench-kit bareEnv), this ledger's state directory. */
  env: NodeJS.ProcessEnv;
  /** Runs `ledger ARGS` as `agent`; throws on a non-zero exit. */
  cli: (args: string[], agent?: string, input?: string) => string;
  /** The work item `resume` reads, and what its latest `next` says. */
  resumeSlug: string;
  resumeNext: string;
  /** The first command after the batch (it builds the index and the kept folds), in ms. */
  firstMs: number;
}

/** A generated ledger of `shape` with `count` records, restored to its base bytes, derived files gone. */
async function prepare(shape: Shape, count: number): Promise<Ledgerish> {
  const work = join(BASE, `bench-field-v2-${shape}-${count}`);
  const dir = join(work, '.ledger');
  const keys = join(work, 'keys');
  const state = join(work, '.state');
  const marker = join(work, 'generated');
  const env: NodeJS.ProcessEnv = bareEnv({ ...process.env, LEDGER_STATE_DIR: state, LEDGER_AGENT: 'bench' });
  // LEDGER_NO_CACHE is passed on as given: `LEDGER_NO_CACHE=fold npm run bench -- field` times the
  // verbs without that cache (src/cache/README.md: what each cache pays).
  for (const name of ['LEDGER_DIR', 'LEDGER_KEY', 'LEDGER_TRUST']) delete env[name];
  const cli = (args: string[], agent = 'bench', input?: string) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, env: { ...env, LEDGER_AGENT: agent }, encoding: 'utf8', input });
    if (r.status !== 0) throw new Error(`ledger ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const prefixLines = 1 + 2 * ITEMS;

  if (!existsSync(marker)) {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(keys, { recursive: true });
    const t0 = nowMs();
    const edit = shape === 'items-after' ? spreadRecord(Math.floor(count / (ITEMS + 2))) : itemsFirst;
    streamLedger(dir, { count, start: '2020-01-01T00:00:00.000Z', kinds: ['intent', 'handoff'], edit });
    copyFileSync(join(dir, 'trust.json'), join(keys, 'trust.json'));
    rmSync(join(dir, 'trust.json'));
    const seed = Buffer.from(seedFrom('harness')).toString('base64url');
    writeFileSync(join(keys, 'harness.key'), JSON.stringify({ v: 1, alg: 'ed25519', name: 'harness', secret_key: seed }) + '\n', { mode: 0o600 });
    // A real project: a git repository whose .gitignore keeps the key and the ledger out.
    mkdirSync(join(work, 'db'), { recursive: true });
    writeFileSync(join(work, 'db/schema.sql'), 'create table accounts (id bigint primary key);\n');
    writeFileSync(join(work, '.gitignore'), '/keys/*.key\n/.ledger/\n/.state/\n/*.base\n/*.prefix\n/generated\n/floor.json\n');
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'the project');
    console.log(`generated ${count} records (${shape}) in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    if (shape === 'items-after') {
      // A few work items through the real workflow, on top: started, checkpointed with a real test run.
      cli(['start', 'live-claude', '--summary', 'port the billing job'], 'claude');
      cli(['checkpoint', 'live-claude', '--done', 'ported the job', '--state', 'runs locally', '--next', 'run it on staging', '--verified', 'unit tests', '--tests-cmd', 'echo 14 passed'], 'claude');
      cli(['start', 'live-codex', '--summary', 'fix the flaky timezone test'], 'codex');
      cli(['checkpoint', 'live-codex', '--done', 'found the cause', '--state', 'toLocal() drops -05:00', '--next', 'fix toLocal() for -05:00', '--attempted', 'pinned TZ in CI'], 'codex');
      cli(['note', 'live-codex', '--text', 'a reviewer: keep the old offset table'], 'alice');
    } else {
      // HEAD as it was before the CI batch: the genesis and the work items.
      const lines = readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').slice(0, prefixLines).map((l) => l + '\n');
      writeFileSync(join(work, 'HEAD.prefix'), headForLines(lines, signerFor('harness')).line);
      writeFileSync(join(work, 'records.prefix'), lines.join(''));
    }
    const audit = await auditLedger({ dir, trustPath: join(keys, 'trust.json'), trust: JSON.parse(readFileSync(join(keys, 'trust.json'), 'utf8')) });
    if (!audit.ok) throw new Error(`the generated ledger does not audit clean: ${audit.verdict}`);
    copyFileSync(join(dir, 'records.jsonl'), join(work, 'records.base'));
    copyFileSync(join(dir, 'HEAD'), join(work, 'HEAD.base'));
    writeFileSync(marker, '');
  }
  // Every run from the same bytes: derived files and this user's marks are made afresh.
  for (const derived of [join(dir, 'index'), state, join(dir, 'blobs'), join(work, 'HANDOFF.md'), join(work, 'HANDOFF.yml')]) rmSync(derived, { recursive: true, force: true });
  mkdirSync(state, { recursive: true, mode: 0o700 });
  if (shape === 'items-before') {
    // This user looked before the batch arrived (what it keeps then is as of the work items) ...
    copyFileSync(join(work, 'records.prefix'), join(dir, 'records.jsonl'));
    copyFileSync(join(work, 'HEAD.prefix'), join(dir, 'HEAD'));
    cli(['status']);
  }
  // ... and the batch arrives: the same file, grown (copyFile writes over it in place).
  copyFileSync(join(work, 'records.base'), join(dir, 'records.jsonl'));
  copyFileSync(join(work, 'HEAD.base'), join(dir, 'HEAD'));
  // The first command after it builds what a later one finds current (index, memos): its cost, reported.
  const t0 = nowMs();
  cli(['status']);
  const firstMs = nowMs() - t0;
  // A file changed in the work tree: the stop hook's path that asks git.
  writeFileSync(join(work, 'db', 'notes.txt'), 'a change the agent made\n');
  return shape === 'items-after'
    ? { shape, count, work, dir, env, cli, resumeSlug: 'live-codex', resumeNext: 'fix toLocal() for -05:00', firstMs }
    : { shape, count, work, dir, env, cli, resumeSlug: 'item-01', resumeNext: 'run it on staging', firstMs };
}

/** Medians of several commands timed in turn (A, B, C, A, B, C, ...), after one warm-up round. */
function alternateAll(n: number, fns: (() => number)[]): number[] {
  const times = fns.map(() => [] as number[]);
  for (const f of fns) f();
  for (let i = 0; i < n; i++) fns.forEach((f, j) => times[j].push(f()));
  return times.map(median);
}

/** One verb, as run on a ledger: its arguments, the agent, stdin, and a check of its output. */
interface Verb {
  name: string;
  limit: number;
  /** The command's arguments for this ledger (called once per run: a writer names a new item). */
  args: (l: Ledgerish) => string[];
  agent?: string;
  input?: string;
  /** Untimed, before each timed run (a finish needs an item of its own). */
  before?: (l: Ledgerish) => void;
  check?: (out: string, l: Ledgerish) => void;
}

function verbs(): Verb[] {
  let started = 0;
  let finished = 0;
  const hook = (agent: 'claude' | 'codex', event: string, payload: object): Verb => ({
    name: `hook ${agent} ${event}`,
    limit: 1.8,
    args: () => ['hook', agent, event, '--agent', 'bench'],
    input: JSON.stringify(payload),
  });
  return [
    { name: 'status', limit: 1.6, args: () => ['status', '--json'], check: (out) => {
      const s = JSON.parse(out) as { items: { slug: string }[] };
      if (!s.items.some((i) => i.slug === 'item-01')) throw new Error(`status misses work items: ${out.slice(0, 400)}`);
    } },
    { name: 'resume', limit: 1.6, args: (l) => ['resume', l.resumeSlug, '--json'], check: (out, l) => {
      const r = JSON.parse(out) as { slug: string; latest: { next?: string } | null };
      if (r.slug !== l.resumeSlug || r.latest?.next !== l.resumeNext) throw new Error(`resume did not read the item: ${out.slice(0, 400)}`);
    } },
    { name: 'log --limit 3', limit: 1.6, args: () => ['log', '--limit', '3', '--json'], check: (out) => {
      if ((JSON.parse(out) as { records: unknown[] }).records.length !== 3) throw new Error(`log --limit 3 did not show three records: ${out.slice(0, 400)}`);
    } },
    { name: 'show', limit: 1.6, args: (l) => ['show', String(Math.floor(l.count / 2)), '--json'], check: (out, l) => {
      if ((JSON.parse(out) as { seq?: number }).seq !== Math.floor(l.count / 2)) throw new Error(`show did not show the record: ${out.slice(0, 400)}`);
    } },
    { name: 'head', limit: 1.6, args: () => ['head', '--json'] },
    { name: 'append', limit: 1.8, args: () => ['append', 'intent', '--op', 'ci-bench', '--exec', `run-${started++}`, '--action', 'deploy'] },
    { name: 'start', limit: 1.8, args: () => ['start', `bench-item-${started++}`, '--summary', 'a new work item'] },
    { name: 'checkpoint', limit: 1.8, args: () => ['checkpoint', 'bench-own', '--done', `step ${started++}`, '--state', 'going well', '--next', 'the next step'] },
    {
      name: 'finish', limit: 1.8,
      before: (l) => { l.cli(['start', `bench-done-${finished}`, '--summary', 'an item to finish']); },
      args: () => ['finish', `bench-done-${finished++}`, '--done', 'finished it', '--state', 'done', '--next', 'nothing more'],
    },
    hook('claude', 'session-start', { hook_event_name: 'SessionStart', source: 'startup' }),
    hook('claude', 'stop', { hook_event_name: 'Stop', stop_hook_active: false }),
    hook('claude', 'session-end', { hook_event_name: 'SessionEnd', reason: 'other' }),
    hook('codex', 'session-start', { hook_event_name: 'SessionStart', source: 'startup' }),
    hook('codex', 'stop', { hook_event_name: 'Stop', stop_hook_active: false }),
  ];
}

export default async function fieldBench(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  if (process.env.LEDGER_NO_CACHE) console.log(`(LEDGER_NO_CACHE=${process.env.LEDGER_NO_CACHE}: timed without those caches)`);
  for (const shape of SHAPES) {
    const big = await prepare(shape, COUNT);
    const small = await prepare(shape, SMALL);
    // The bench's own item, live, for the checkpoints and the hooks' stop path (it owns it, a file changed).
    for (const l of [big, small]) l.cli(['start', 'bench-own', '--summary', 'the bench item']);
    const bare = big.env;
    const node = () => timeCommand(process.execPath, ['-e', ''], { env: bare });
    const timeOn = (v: Verb, l: Ledgerish) => () => {
      v.before?.(l);
      const args = v.args(l);
      const t = nowMs();
      const out = l.cli(args, v.agent ?? 'bench', v.input);
      const ms = nowMs() - t;
      v.check?.(out, l);
      return ms;
    };
    const label = `${shape}, ${COUNT.toLocaleString('en')} records`;
    for (const v of verbs().filter((x) => ONLY === null || ONLY.includes(x.name))) {
      const [tBig, tSmall, tNode] = alternateAll(RUNS, [timeOn(v, big), timeOn(v, small), node]);
      const detail = `${tBig.toFixed(1)} ms; on ${SMALL.toLocaleString('en')} records ${tSmall.toFixed(1)} ms; node -e '' ${tNode.toFixed(1)} ms (bare, medians of ${RUNS}); first command after the batch ${(big.firstMs / 1000).toFixed(2)} s`;
      results.push(atMost(`${v.name} (${label}) / node -e ''`, tBig / tNode, v.limit, detail));
      results.push(atMost(`${v.name} (${label}) / itself on ${SMALL.toLocaleString('en')}`, tBig / tSmall, 1.2, detail));
    }
    if (shape === 'items-after' && (ONLY === null || ONLY.includes('gate --floor'))) results.push(await gateFloor(big, node));
  }
  return results;
}

/** gate --floor with the floor at HEAD, on an operation with real evidence appended on top. */
async function gateFloor(l: Ledgerish, node: () => number): Promise<BenchResult> {
  const prior = process.env.LEDGER_STATE_DIR;
  // This process writes too (the gate's handoff): with the same per-user state as the commands.
  process.env.LEDGER_STATE_DIR = l.env.LEDGER_STATE_DIR;
  try {
    const ledger = Ledger.open({ dir: l.dir, key: signerFor('harness') });
    const schema = digestSource('db/schema.sql', { root: l.work, ledgerDir: l.dir });
    const res = ledger.append([
      { kind: 'intent', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', action: 'apply migration' } as Draft,
      { kind: 'handoff', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', outcome: 'success', evidence: { schema }, invariants: { tests: { ok: true, detail: '212 passed' } }, depends_on: [] } as Draft,
    ]);
    const last = res.records[res.records.length - 1];
    const floor = join(l.work, 'floor.json');
    writeFileSync(floor, JSON.stringify({ v: 1, genesis: res.head.genesis, seq: last.seq, id: last.id, offset: last.offset }) + '\n');
    const gate = () => {
      const t = nowMs();
      const out = l.cli(['gate', 'bench_migrate', '--floor', floor, '--require-invariant', 'tests', '--json']);
      const ms = nowMs() - t;
      if ((JSON.parse(out) as { ok?: unknown }).ok !== true) throw new Error(`the bench gate does not pass: ${out.slice(0, 400)}`);
      return ms;
    };
    const [t, n] = alternateAll(RUNS, [gate, node]);
    return atMost(`gate --floor (${l.shape}, ${l.count.toLocaleString('en')} records) / node -e ''`, t / n, 1.3, `${t.toFixed(1)} ms, node -e '' ${n.toFixed(1)} ms (bare, medians of ${RUNS})`);
  } finally {
    process.env.LEDGER_STATE_DIR = prior;
  }
}
