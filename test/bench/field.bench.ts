// Issue 14's Benchmarks, "in the field": a shared ledger of 200,000 CI records (intents and
// handoffs of CI operations) beside a few dozen work items, in a real git repository, with the
// key file and trust file where `ledger init` puts them (keys/harness.key, keys/trust.json).
// Each verb runs through the shipped binary as a user's shell runs it and does its real job:
//
//   start, checkpoint, resume, status, log --limit 3   each <= 1.5x `node -e ''`
//   gate --floor (the floor at HEAD)                    <= 1.3x `node -e ''`
//
// timed alternately against `node -e ''` in the same run (medians). The generated ledger is kept
// between runs in test/.scratch/ (it takes a minute to sign); each run starts from the same
// bytes (records, HEAD, a fresh state directory) and writes its own records on top. The derived
// files (index, fold memo) are rebuilt each run; the first command that builds them is reported.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Ledger, auditLedger } from '../../src/ledger.js';
import { digestSource } from '../../src/causal/evidence.js';
import type { Draft } from '../../src/record.js';
import { seedFrom, signerFor, streamLedger, type Json } from '../helpers/gen-ledger.js';
import { alternate, atMost, bareEnv, nowMs, timeCommand, type BenchResult, LEDGER_BIN } from './bench-kit.js';

const BIN = LEDGER_BIN;
const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
const COUNT = Number(process.env.FIELD_BENCH_RECORDS ?? 200_000);
const RUNS = Number(process.env.FIELD_BENCH_RUNS ?? 15);
/** Runs of the same in the bare environment (reported, not a target). */
const BARE_RUNS = Number(process.env.FIELD_BENCH_BARE_RUNS ?? 9);
/** The generated work items: one every ITEM_EVERY seqs, as a start and then a checkpoint (some a finish). */
const ITEMS = 36;

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/**
 * The CI records: seq 2k-1 an intent and 2k its handoff, of operation ci-k, so every intent is
 * resolved; and, spread through them, the work items' own records (a start, then a checkpoint or
 * a finish by the same agent and execution), as an older version of the workflow wrote them.
 */
function fieldRecord(every: number) {
  return (u: Json, seq: number): Json => {
    if (seq === 0) return u;
    const base = { v: u.v, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts, agent: u.agent };
    const lease = new Date(Date.parse(String(u.ts)) + 3_600_000).toISOString();
    const item = Math.floor(seq / every);
    const within = seq % every;
    if (item >= 1 && item <= ITEMS && (within === 1 || within === 2)) {
      const slug = `item-${String(item).padStart(2, '0')}`;
      const agent = item % 3 === 0 ? 'codex' : 'claude';
      const exec = `exec-${slug}`;
      if (within === 1) return { ...base, agent, kind: 'start', logical_operation_id: slug, execution_id: exec, summary: `work item ${item}: the schema migration, part ${item}`, lease_until: lease };
      const common = { ...base, agent, logical_operation_id: slug, execution_id: exec, done: 'wrote the migration and its test', state: 'migration applies on a copy', next: 'run it on staging', verified: ['npm test: 212 passed'], attempted: [], blockers: [] };
      return item % 4 === 0
        ? { ...common, kind: 'finish', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }
        : { ...common, kind: 'checkpoint', lease_until: lease };
    }
    const k = (seq + 1) >> 1;
    return seq % 2 === 1
      ? { ...base, agent: 'ci', kind: 'intent', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, action: 'deploy build to staging' }
      : { ...u, agent: 'ci', kind: 'handoff', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, depends_on: [] };
  };
}

export default async function fieldBench(): Promise<BenchResult[]> {
  const work = join(BASE, `bench-field-v1-${COUNT}`);
  const dir = join(work, '.ledger');
  const keys = join(work, 'keys');
  const state = join(work, '.state');
  const marker = join(work, 'generated');
  // As a user's shell has it: found from the working directory, keys and trust where init puts them.
  const env: NodeJS.ProcessEnv = { ...process.env, LEDGER_STATE_DIR: state, LEDGER_AGENT: 'bench' };
  for (const name of ['LEDGER_DIR', 'LEDGER_KEY', 'LEDGER_TRUST']) delete env[name];
  // This process writes too (the gate's handoff): with the same per-user state as the commands.
  process.env.LEDGER_STATE_DIR = state;
  const bare = bareEnv(env);
  const cli = (args: string[], agent = 'bench', base = env) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, env: { ...base, LEDGER_AGENT: agent }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ledger ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r;
  };

  if (!existsSync(marker)) {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(keys, { recursive: true });
    const t0 = nowMs();
    streamLedger(dir, { count: COUNT, start: '2020-01-01T00:00:00.000Z', kinds: ['intent', 'handoff'], edit: fieldRecord(Math.floor(COUNT / (ITEMS + 2))) });
    copyFileSync(join(dir, 'trust.json'), join(keys, 'trust.json'));
    rmSync(join(dir, 'trust.json'));
    const seed = Buffer.from(seedFrom('harness')).toString('base64url');
    writeFileSync(join(keys, 'harness.key'), JSON.stringify({ v: 1, alg: 'ed25519', name: 'harness', secret_key: seed }) + '\n', { mode: 0o600 });
    // A real project: a git repository whose .gitignore keeps the key and the ledger out.
    mkdirSync(join(work, 'db'), { recursive: true });
    writeFileSync(join(work, 'db/schema.sql'), 'create table accounts (id bigint primary key);\n');
    writeFileSync(join(work, '.gitignore'), '/keys/*.key\n/.ledger/\n/.state/\n/*.base\n/generated\n/floor.json\n');
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'the project');
    console.log(`generated ${COUNT} records in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    // A few work items through the real workflow, on top: started, checkpointed with a real test run.
    cli(['start', 'live-claude', '--summary', 'port the billing job'], 'claude');
    cli(['checkpoint', 'live-claude', '--done', 'ported the job', '--state', 'runs locally', '--next', 'run it on staging', '--verified', 'unit tests', '--tests-cmd', 'echo 14 passed'], 'claude');
    cli(['start', 'live-codex', '--summary', 'fix the flaky timezone test'], 'codex');
    cli(['checkpoint', 'live-codex', '--done', 'found the cause', '--state', 'toLocal() drops -05:00', '--next', 'fix toLocal() for -05:00', '--attempted', 'pinned TZ in CI'], 'codex');
    cli(['note', 'live-codex', '--text', 'a reviewer: keep the old offset table'], 'alice');
    const audit = await auditLedger({ dir, trustPath: join(keys, 'trust.json'), trust: JSON.parse(readFileSync(join(keys, 'trust.json'), 'utf8')) });
    if (!audit.ok) throw new Error(`the generated ledger does not audit clean: ${audit.verdict}`);
    copyFileSync(join(dir, 'records.jsonl'), join(work, 'records.base'));
    copyFileSync(join(dir, 'HEAD'), join(work, 'HEAD.base'));
    writeFileSync(marker, '');
  } else {
    copyFileSync(join(work, 'records.base'), join(dir, 'records.jsonl'));
    copyFileSync(join(work, 'HEAD.base'), join(dir, 'HEAD'));
  }
  // Every run from the same bytes: derived files and this user's marks are made afresh.
  for (const derived of [join(dir, 'index'), state, join(dir, 'blobs'), join(work, 'HANDOFF.md'), join(work, 'HANDOFF.yml')]) rmSync(derived, { recursive: true, force: true });
  mkdirSync(state, { recursive: true, mode: 0o700 });

  // The first command builds what a later one finds current (index, memos): its cost, reported.
  const t0 = nowMs();
  cli(['status']);
  const firstMs = nowMs() - t0;

  // The operation the gate is asked about, with real evidence, on top; the floor at HEAD.
  const ledger = Ledger.open({ dir, key: signerFor('harness') });
  const schema = digestSource('db/schema.sql', { root: work, ledgerDir: dir });
  const res = ledger.append([
    { kind: 'intent', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', action: 'apply migration' } as Draft,
    { kind: 'handoff', agent: 'bench', logical_operation_id: 'bench_migrate', execution_id: 'execution_002', outcome: 'success', evidence: { schema }, invariants: { tests: { ok: true, detail: '212 passed' } }, depends_on: [] } as Draft,
  ]);
  const last = res.records[res.records.length - 1];
  const floor = join(work, 'floor.json');
  writeFileSync(floor, JSON.stringify({ v: 1, genesis: res.head.genesis, seq: last.seq, id: last.id, offset: last.offset }) + '\n');

  const node = () => timeCommand(process.execPath, ['-e', ''], { env });
  const nodeBare = () => timeCommand(process.execPath, ['-e', ''], { env: bare });
  const run = (args: string[], check?: (out: string) => void) => (base = env) => {
    const t = nowMs();
    const r = cli(args, 'bench', base);
    const ms = nowMs() - t;
    check?.(r.stdout);
    return ms;
  };
  const results: BenchResult[] = [];
  /** The target, in the bench's environment; the same ratio in the bare one, reported beside it (bench-kit bareEnv). */
  const time = (name: string, limit: number, a: (base?: NodeJS.ProcessEnv) => number) => {
    const [t, n] = alternate(RUNS, () => a(env), node);
    const [tb, nb] = alternate(BARE_RUNS, () => a(bare), nodeBare);
    results.push(atMost(`${name} on ${COUNT.toLocaleString('en')} records / node -e ''`, t / n, limit, `${t.toFixed(1)} ms, node ${n.toFixed(1)} ms (medians of ${RUNS}); without NODE_EXTRA_CA_CERTS and NODE_OPTIONS ${(tb / nb).toFixed(2)}x (${tb.toFixed(1)} ms, node ${nb.toFixed(1)} ms, medians of ${BARE_RUNS})`));
  };

  // For perspective, not a target: what any verb pays before its own work (start Node, load the
  // bundle, read and verify HEAD), and one durable append with its retry-identity check.
  const [tHead, tNodeH] = alternate(RUNS, () => timeCommand(process.execPath, [BIN, 'head'], { cwd: work, env }), node);
  const [tHeadB, tNodeHB] = alternate(BARE_RUNS, () => timeCommand(process.execPath, [BIN, 'head'], { cwd: work, env: bare }), nodeBare);
  const floorOfAny = `ledger head ${(tHead / tNodeH).toFixed(2)}x (bare ${(tHeadB / tNodeHB).toFixed(2)}x)`;

  // Read verbs first, on the HEAD the floor names.
  time('gate --floor', 1.3, run(['gate', 'bench_migrate', '--floor', floor, '--require-invariant', 'tests', '--json'], (out) => {
    if ((JSON.parse(out) as { ok?: unknown }).ok !== true) throw new Error(`the bench gate does not pass: ${out.slice(0, 400)}`);
  }));
  time('log --limit 3', 1.5, run(['log', '--limit', '3', '--json'], (out) => {
    const rows = (JSON.parse(out) as { records: { seq: number }[] }).records;
    if (rows.length !== 3 || rows[0].seq !== last.seq) throw new Error(`log --limit 3 did not show the last three records: ${out}`);
  }));
  time('status', 1.5, run(['status', '--json'], (out) => {
    const s = JSON.parse(out) as { items: { slug: string }[] };
    if (!s.items.some((i) => i.slug === 'live-claude') || !s.items.some((i) => i.slug === 'item-01')) throw new Error(`status misses work items: ${out.slice(0, 400)}`);
  }));
  time('resume', 1.5, run(['resume', 'live-codex', '--json'], (out) => {
    const r = JSON.parse(out) as { slug: string; latest: { next?: string } | null; git: unknown };
    if (r.slug !== 'live-codex' || r.latest?.next !== 'fix toLocal() for -05:00' || r.git === null) throw new Error(`resume did not read the item: ${out.slice(0, 400)}`);
  }));
  // Writers: each run appends (a new item per start, a checkpoint renewing the bench's own item).
  let n = 0;
  const before = Ledger.open({ dir }).head().seq;
  time('start', 1.5, (base) => {
    const t = nowMs();
    cli(['start', `bench-item-${n++}`, '--summary', 'a new work item'], 'bench', base);
    return nowMs() - t;
  });
  let cp = 0;
  time('checkpoint', 1.5, (base) => {
    const t = nowMs();
    cli(['checkpoint', 'bench-item-0', '--done', `step ${cp++}`, '--state', 'going well', '--next', 'the next step'], 'bench', base);
    return nowMs() - t;
  });
  const after = Ledger.open({ dir }).head().seq;
  const wrote = after - before;
  if (wrote !== n + cp) throw new Error(`the writers appended ${wrote} records, expected ${n + cp}`);
  let ap = 0;
  const [tAppend, tNodeA] = alternate(RUNS, () => timeCommand(process.execPath, [BIN, 'append', 'intent', '--op', 'ci-bench', '--exec', `run-${ap++}`, '--action', 'deploy'], { cwd: work, env }), node);
  const perspective = `${floorOfAny}, ledger append ${(tAppend / tNodeA).toFixed(2)}x`;
  results.forEach((r) => (r.detail += `; first command (index and memo build) ${(firstMs / 1000).toFixed(2)} s; for perspective: ${perspective}`));
  return results;
}
