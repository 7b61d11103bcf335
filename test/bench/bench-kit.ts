// Small shared tools for benchmarks: timing, medians, and timing whole commands.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shipped `ledger` (the bundled CLI behind its launcher), as `npm run build` leaves it. */
export const LEDGER_BIN = fileURLToPath(new URL('../../cli/ledger.cjs', import.meta.url));

export interface BenchResult {
  name: string;
  /** The measured ratio (ours against the limit measured in the same run). */
  ratio: number;
  /** The target as text, e.g. ">= 0.7" or "<= 1.3". */
  target: string;
  pass: boolean;
  detail: string;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Wall time of one run of a command, in ms. */
export function timeCommand(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): number {
  const t0 = nowMs();
  const r = spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, input: opts.input, stdio: ['pipe', 'ignore', 'pipe'] });
  const t = nowMs() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return t;
}

/**
 * Medians of two commands timed alternately (A, B, A, B, ...) so drift in machine load hits both
 * alike. Returns [medianA, medianB].
 */
export function alternate(n: number, a: () => number, b: () => number): [number, number] {
  const ta: number[] = [];
  const tb: number[] = [];
  a();
  b(); // warm the page cache for both
  for (let i = 0; i < n; i++) {
    ta.push(a());
    tb.push(b());
  }
  return [median(ta), median(tb)];
}

export const atMost = (name: string, ratio: number, limit: number, detail: string): BenchResult => ({ name, ratio, target: `<= ${limit}`, pass: ratio <= limit, detail });
export const atLeast = (name: string, ratio: number, limit: number, detail: string): BenchResult => ({ name, ratio, target: `>= ${limit}`, pass: ratio >= limit, detail });

/**
 * `env` without what makes every node start load more than node itself: NODE_EXTRA_CA_CERTS
 * (node reads the whole CA bundle it names at start: on these machines `node -e ''` takes
 * 70-85 ms with it, 25-35 ms without) and NODE_OPTIONS. Policy: the node-relative targets are
 * judged in the environment the bench is run in, as a user's shell runs the verbs; the benches
 * that compare with `node -e ''` also report the ratio in this bare one, where the same absolute
 * cost of ours is a larger share.
 */
export function bareEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  delete out.NODE_EXTRA_CA_CERTS;
  delete out.NODE_OPTIONS;
  return out;
}

/**
 * The CPU time (user and system, ms) of every child this process has waited for so far, from
 * /proc/self/stat (cutime + cstime, in clock ticks of 10 ms); null where there is no /proc. The
 * difference across a spawnSync is the child's CPU: what a cache saves is work, and on a shared
 * machine a command's wall time also measures its neighbours. One run's figure is coarse (10 ms
 * ticks); a mean over many runs is not.
 */
export function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return null;
  }
}

export const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** `git ARGS` in `cwd` as the benches' own author and committer; throws when git fails. */
export function benchGit(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}
