// Issue 15's remote targets, against one local `git daemon`, each a ratio measured in the same
// run (these machines are shared: absolute times mean little):
//   - an append in a joined ledger <= 1.5x a shell script doing only `git fetch` + `git push`
//     of one small commit to the same remote
//   - `ledger sync` with nothing new <= 1.3x `git ls-remote` + `node -e ''`
//   - eight clones appending at once: acknowledged appends per second >= 0.5x one uncontended
//     writer's rate, and no writer starves (its slowest append <= 10x the median)
import { spawn } from 'node:child_process';
import { alternate, atLeast, atMost, median, nowMs, timeCommand, type BenchResult, LEDGER_BIN } from './bench-kit.js';
import { git, serve, world } from '../remote/kit.js';

const ROUNDS = Number(process.env.REMOTE_BENCH_ROUNDS ?? 15);

function runAsync(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; code: number }> {
  const t0 = nowMs();
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [LEDGER_BIN, ...args], { cwd, env, stdio: 'ignore' });
    c.on('close', (code) => resolve({ ms: nowMs() - t0, code: code ?? -1 }));
  });
}

export default async function remoteBench(): Promise<BenchResult[]> {
  const w = world(['solo', ...Array.from({ length: 8 }, (_, i) => `m${i}`)]);
  const daemon = await serve(w);
  try {
    const [solo, ...eight] = w.machines;
    const envOf = (m: typeof solo) => ({ ...process.env, ...m.env });
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
