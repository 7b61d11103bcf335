// The field benches' ledgers (field.bench.ts, caches.bench.ts): a shared ledger of CI records
// beside a few dozen work items, in a real git repository, in two shapes (items-before: the work
// items first, then the CI batch, after this user looked; items-after: the batch first), generated
// once into test/.scratch/ and restored to the same bytes each run; and the verbs timed on them.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { auditLedger } from '../../src/ledger.js';
import { headForLines, seedFrom, signerFor, streamLedger, type Json } from '../helpers/gen-ledger.js';
import { bareEnv, benchGit, childrenCpuMs, median, nowMs, LEDGER_BIN } from './bench-kit.js';

const BIN = LEDGER_BIN;
const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
export const COUNT = Number(process.env.FIELD_BENCH_RECORDS ?? 200_000);
/** The small ledger each verb is compared with (the same shape). */
export const SMALL = 1_000;
export const RUNS = Number(process.env.FIELD_BENCH_RUNS ?? 11);
/** Which shapes to run (comma-separated); default both. */
export const SHAPES = (process.env.FIELD_BENCH_SHAPES ?? 'items-before,items-after').split(',') as Shape[];
/** Which verbs to time (comma-separated names, as the results name them); default all. */
export const ONLY = process.env.FIELD_BENCH_VERBS?.split(',') ?? null;
/** The generated work items. */
const ITEMS = 36;

export type Shape = 'items-before' | 'items-after';

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

export interface Ledgerish {
  shape: Shape;
  count: number;
  work: string;
  dir: string;
  /** What the bench times in: the bare environment (bench-kit bareEnv), this ledger's state directory. */
  env: NodeJS.ProcessEnv;
  /** Runs `ledger ARGS` as `agent` (with `extra` in its environment); throws on a non-zero exit. */
  cli: (args: string[], agent?: string, input?: string, extra?: NodeJS.ProcessEnv) => string;
  /** The work item `resume` reads, and what its latest `next` says. */
  resumeSlug: string;
  resumeNext: string;
  /** The first command after the batch (it builds the index and the kept folds), in ms. */
  firstMs: number;
}

/** A generated ledger of `shape` with `count` records, restored to its base bytes, derived files gone. */
export async function prepare(shape: Shape, count: number): Promise<Ledgerish> {
  const work = join(BASE, `bench-field-v2-${shape}-${count}`);
  const dir = join(work, '.ledger');
  const keys = join(work, 'keys');
  const state = join(work, '.state');
  const marker = join(work, 'generated');
  const env: NodeJS.ProcessEnv = bareEnv({ ...process.env, LEDGER_STATE_DIR: state, LEDGER_AGENT: 'bench' });
  // LEDGER_NO_CACHE is passed on as given: `LEDGER_NO_CACHE=fold npm run bench -- field` times the
  // verbs without that cache (src/cache/README.md: what each cache pays).
  for (const name of ['LEDGER_DIR', 'LEDGER_KEY', 'LEDGER_TRUST']) delete env[name];
  const cli = (args: string[], agent = 'bench', input?: string, extra: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, env: { ...env, LEDGER_AGENT: agent, ...extra }, encoding: 'utf8', input });
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
    benchGit(work, 'init', '-q', '-b', 'main');
    benchGit(work, 'add', '-A');
    benchGit(work, 'commit', '-q', '-m', 'the project');
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
export function alternateAll(n: number, fns: (() => number)[]): number[] {
  const times = fns.map(() => [] as number[]);
  for (const f of fns) f();
  for (let i = 0; i < n; i++) fns.forEach((f, j) => times[j].push(f()));
  return times.map(median);
}

/** One verb, as run on a ledger: its arguments, the agent, stdin, and a check of its output. */
export interface Verb {
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

export function verbs(): Verb[] {
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


/** One timed run of `v` on `l` (its untimed preparation and output check around it), in ms. */
export const timeVerb = (v: Verb, l: Ledgerish, extra?: NodeJS.ProcessEnv) => () => {
  v.before?.(l);
  const args = v.args(l);
  const t = nowMs();
  const out = l.cli(args, v.agent ?? 'bench', v.input, extra);
  const ms = nowMs() - t;
  v.check?.(out, l);
  return ms;
};

/** One run of `v` on `l` as timeVerb, but its CPU time (the child's user and system ms; NaN without /proc). */
export const cpuOfVerb = (v: Verb, l: Ledgerish, extra?: NodeJS.ProcessEnv) => () => {
  v.before?.(l);
  const args = v.args(l);
  const c0 = childrenCpuMs();
  const out = l.cli(args, v.agent ?? 'bench', v.input, extra);
  const c1 = childrenCpuMs();
  v.check?.(out, l);
  return c0 === null || c1 === null ? NaN : c1 - c0;
};
