// Issue 15's remote targets, against one local `git daemon`, each a ratio measured in the same
// run (these machines are shared: absolute times mean little):
//   - an append in a joined ledger <= 1.5x a shell script doing only `git fetch` + `git push`
//     of one small commit to the same remote
//   - `ledger sync` with nothing new <= 1.3x `git ls-remote` + `node -e ''`
//   - eight clones appending at once: acknowledged appends per second >= 0.5x one uncontended
//     writer's rate, and no writer starves (its slowest append <= 10x the median)
//   - a new machine joining a 100,000-record ledger (`ledger init --remote`): its time and peak
//     RSS against `git fetch` of the same ref into a new bare repository (the issue names no
//     number; the target is chosen in joinBench)
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedFrom, streamLedger } from '../helpers/gen-ledger.js';
import { alternate, atLeast, atMost, median, nowMs, timeCommand, type BenchResult, LEDGER_BIN } from './bench-kit.js';
import { git, serve, world, type World } from '../remote/kit.js';

const ROUNDS = Number(process.env.REMOTE_BENCH_ROUNDS ?? 15);

function runAsync(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number }> {
  const t0 = nowMs();
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [LEDGER_BIN, ...args], { cwd, env, stdio: 'ignore' });
    c.on('close', (code) => resolve({ ms: nowMs() - t0, code: code ?? -1 }));
  });
}

const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
const JOIN_COUNT = Number(process.env.REMOTE_JOIN_RECORDS ?? 100_000);
const JOIN_RUNS = Number(process.env.REMOTE_JOIN_RUNS ?? 3);

/** Wall time and peak RSS (the largest process of the tree, GNU time's %M) of one command. */
function timeAndRss(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; rssMb: number } {
  const t0 = nowMs();
  const r = spawnSync('/usr/bin/time', ['-f', 'RSS_KB %M', cmd, ...args], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = nowMs() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /RSS_KB (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no peak RSS from /usr/bin/time: ${r.stderr.slice(-400)}`);
  return { ms, rssMb: Number(m[1]) / 1024 };
}

/**
 * The published ledger, kept between runs in test/.scratch/ (signing 100,000 records takes a
 * while): a bare repository whose refs/handoff/ledger a real `ledger init --remote` published
 * from a generated ledger, and the trust file that pins its key.
 */
function publishedLedger(): { root: string; trust: string; records: string } {
  const root = join(BASE, `bench-remote-join-v2-${JOIN_COUNT}`);
  const marker = join(root, 'generated');
  const trust = join(root, 'trust.json');
  const records = join(root, 'records.jsonl');
  if (existsSync(marker)) return { root, trust, records };
  rmSync(root, { recursive: true, force: true });
  const pub = join(root, 'publisher');
  mkdirSync(join(pub, 'keys'), { recursive: true });
  const t0 = nowMs();
  streamLedger(join(pub, '.ledger'), { count: JOIN_COUNT, start: '2020-01-01T00:00:00.000Z', kinds: ['intent', 'handoff'] });
  copyFileSync(join(pub, '.ledger', 'trust.json'), join(pub, 'keys', 'trust.json'));
  copyFileSync(join(pub, '.ledger', 'trust.json'), trust);
  rmSync(join(pub, '.ledger', 'trust.json'));
  writeFileSync(join(pub, 'keys', 'harness.key'), JSON.stringify({ v: 1, alg: 'ed25519', name: 'harness', secret_key: Buffer.from(seedFrom('harness')).toString('base64url') }) + '\n', { mode: 0o600 });
  git(['init', '--quiet', pub]);
  git(['init', '--quiet', '--bare', join(root, 'remote.git')]);
  const r = spawnSync(process.execPath, [LEDGER_BIN, 'init', '--remote', join(root, 'remote.git')], { cwd: pub, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: pub, LEDGER_STATE_DIR: join(root, 'publisher-state'), LEDGER_AGENT: 'harness' } });
  if (r.status !== 0) throw new Error(`publishing the generated ledger: ${r.stderr}`);
  copyFileSync(join(pub, '.ledger', 'records.jsonl'), records);
  rmSync(pub, { recursive: true, force: true });
  rmSync(join(root, 'publisher-state'), { recursive: true, force: true });
  writeFileSync(marker, '');
  console.log(`generated and published ${JOIN_COUNT} records in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
  return { root, trust, records };
}

/**
 * The part of a join no implementation can skip (SPEC 11: every record's signature verified
 * from genesis), alone: one Node process that reads the same records and verifies each
 * signature with the shipped sign.js, on one core as the join does.
 */
function verifyOnlyScript(records: string): string[] {
  const sign = new URL('../../src/sign.js', import.meta.url).href;
  const canonical = new URL('../../src/canonical.js', import.meta.url).href;
  return ['--input-type=module', '-e', `
import { readFileSync } from 'node:fs';
import { verifySig } from ${JSON.stringify(sign)};
import { idFromLine } from ${JSON.stringify(canonical)};
let bad = 0;
for (const text of readFileSync(${JSON.stringify(records)}, 'utf8').split('\\n')) {
  if (!text) continue;
  const r = JSON.parse(text);
  if (!verifySig('record', idFromLine(text, r), r.sig)) bad++;
}
if (bad) { console.error(bad + ' bad signatures'); process.exit(1); }
`];
}

/**
 * A new machine joins the published ledger over `git daemon`: `ledger init --remote URL` fetches
 * the ref, verifies every record from genesis (bytes, link, signature, pin, time), and writes the
 * local copy; the limit is `git fetch` of the same ref into a new bare repository (what any
 * clone of it costs). Alternated, medians of JOIN_RUNS.
 */
async function joinBench(): Promise<BenchResult[]> {
  const { root, trust, records } = publishedLedger();
  const daemon = await serve({ root } as World);
  const url = `${daemon.url}`;
  const work = mkdtempSync(join(tmpdir(), 'ledger-join-bench-'));
  try {
    const joins: { ms: number; rssMb: number }[] = [];
    const fetches: { ms: number; rssMb: number }[] = [];
    const verifies: number[] = [];
    for (let i = 0; i < JOIN_RUNS; i++) {
      const m = join(work, `m${i}`);
      mkdirSync(join(m, 'keys'), { recursive: true });
      copyFileSync(trust, join(m, 'keys', 'trust.json'));
      git(['init', '--quiet', m]);
      const env = { PATH: process.env.PATH, HOME: m, LEDGER_STATE_DIR: join(work, `m${i}-state`), LEDGER_AGENT: `m${i}` };
      joins.push(timeAndRss(process.execPath, [LEDGER_BIN, 'init', '--remote', url], m, env));
      const bare = join(work, `f${i}.git`);
      git(['init', '--quiet', '--bare', bare]);
      fetches.push(timeAndRss('git', ['--git-dir', bare, 'fetch', '--quiet', '--no-tags', url, '+refs/handoff/ledger:refs/handoff/ledger'], work, { PATH: process.env.PATH, HOME: work }));
      verifies.push(timeCommand(process.execPath, verifyOnlyScript(records)));
      rmSync(m, { recursive: true, force: true });
      rmSync(join(work, `m${i}-state`), { recursive: true, force: true });
      rmSync(bare, { recursive: true, force: true });
    }
    const jt = median(joins.map((j) => j.ms));
    const ft = median(fetches.map((f) => f.ms));
    const vt = median(verifies);
    const jr = Math.max(...joins.map((j) => j.rssMb));
    const fr = Math.max(...fetches.map((f) => f.rssMb));
    const n = JOIN_COUNT.toLocaleString('en');
    const detail = `join ${(jt / 1000).toFixed(2)} s, git fetch ${(ft / 1000).toFixed(2)} s, verifying the ${n} signatures alone ${(vt / 1000).toFixed(2)} s (medians of ${JOIN_RUNS}); peak RSS join ${jr.toFixed(0)} MB vs fetch ${fr.toFixed(0)} MB (${(jr / fr).toFixed(1)}x, reported)`;
    return [
      // Policy: the issue gives no number. A join is a fetch plus what no join may skip, every
      // record's signature checked (seconds of one core at this size, more than the fetch), so
      // the target is against that sum, generous at 1.5x: what the join adds (reading the blobs,
      // the other checks, writing the copy) may cost half as much again. The ratio to the bare
      // fetch, and the peak RSS, are reported beside it.
      atMost(`join of ${n} records vs git fetch + verifying its signatures`, jt / (ft + vt), 1.5, `${(jt / ft).toFixed(1)}x the bare fetch; ${detail}`),
    ];
  } finally {
    daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** REMOTE_BENCH_ONLY=small or =join runs one part (both by default). */
export default async function remoteBench(): Promise<BenchResult[]> {
  const only = process.env.REMOTE_BENCH_ONLY;
  return [...(only === 'join' ? [] : await smallBench()), ...(only === 'small' ? [] : await joinBench())];
}

async function smallBench(): Promise<BenchResult[]> {
  const w = world(['solo', ...Array.from({ length: 8 }, (_, i) => `m${i}`)]);
  const daemon = await serve(w);
  try {
    const [solo, ...eight] = w.machines;
    // Policy: each side runs with the same bare environment (PATH, HOME; the machine's
    // LEDGER_* for the ledger), as the kit's machines do. Before, the ledger had all of the
    // bench's environment and the limits only PATH and HOME: with NODE_EXTRA_CA_CERTS set (as
    // on these machines) every node start of the ledger loaded the CA bundle, 50 ms (node -e ''
    // 35 ms without it, 85 ms with), a cost the limits' `node -e ''` never paid.
    const envOf = (m: typeof solo) => ({ PATH: process.env.PATH, ...m.env });
    for (const m of w.machines) {
      const r = m.spawnSync(['init', '--remote', w.url]);
      if (r.code !== 0) throw new Error(r.stderr);
    }
    // The limit: a clone doing only fetch + commit-tree + push of one small commit.
    const shell = `${w.root}/shell`;
    git(['init', '--quiet', shell]);
    git(['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '--quiet', '--allow-empty', '-m', 'base'], shell);
    git(['push', '--quiet', w.url, 'HEAD:refs/heads/bench'], shell);
    const script = `set -e; git fetch -q "${w.url}" +refs/heads/bench:refs/remotes/b; t=$(git rev-parse 'refs/remotes/b^{tree}'); c=$(echo x | git -c user.name=b -c user.email=b@b commit-tree "$t" -p refs/remotes/b); git push -q "${w.url}" "$c:refs/heads/bench"`;
    let n = 0;
    const [append, pushOnly] = alternate(ROUNDS,
      () => timeCommand(process.execPath, [LEDGER_BIN, 'append', 'handoff', '--op', `b${n++}`, '--exec', 'e', '--outcome', 'success'], { cwd: solo.dir, env: envOf(solo) }),
      () => timeCommand('sh', ['-c', script], { cwd: shell, env: { PATH: process.env.PATH, HOME: w.root } }));
    const [sync, lsRemote] = alternate(ROUNDS,
      () => timeCommand(process.execPath, [LEDGER_BIN, 'sync'], { cwd: solo.dir, env: envOf(solo) }),
      () => timeCommand('sh', ['-c', `git ls-remote "${w.url}" refs/handoff/ledger >/dev/null && "${process.execPath}" -e ''`], { env: { PATH: process.env.PATH, HOME: w.root } }));

    // Eight at once: each clone appends K times in a row, all clones together.
    const K = 4;
    for (const m of eight) m.spawnSync(['sync']);
    const t0 = nowMs();
    const lat: number[] = [];
    let acked = 0;
    await Promise.all(eight.map(async (m, i) => {
      for (let k = 0; k < K; k++) {
        const r = await runAsync(['append', 'handoff', '--op', `m${i}-${k}`, '--exec', 'e', '--outcome', 'success'], m.dir, envOf(m));
        lat.push(r.ms);
        if (r.code === 0) acked++;
      }
    }));
    const wall = nowMs() - t0;
    const rate = acked / (wall / 1000);
    const soloRate = 1000 / append;
    const throughput = rate / soloRate;
    const starve = Math.max(...lat) / median(lat);
    return [
      atMost('joined append vs git fetch + push', append / pushOnly, 1.5, `append ${append.toFixed(1)} ms, fetch+push ${pushOnly.toFixed(1)} ms`),
      atMost('sync with nothing new vs ls-remote + node', sync / lsRemote, 1.3, `sync ${sync.toFixed(1)} ms, ls-remote+node ${lsRemote.toFixed(1)} ms`),
      atLeast('eight clones: throughput vs one writer', throughput, 0.5, `${acked}/${8 * K} acknowledged in ${wall.toFixed(0)} ms (${rate.toFixed(1)}/s vs ${soloRate.toFixed(1)}/s alone)`),
      atMost('eight clones: slowest append vs median', starve, 10, `slowest ${Math.max(...lat).toFixed(0)} ms, median ${median(lat).toFixed(0)} ms`),
    ];
  } finally {
    daemon.stop();
    w.cleanup();
  }
}
