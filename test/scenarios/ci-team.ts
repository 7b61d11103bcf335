// The CI job of docs/across-machines.md as the scenarios run it (ci-across-machines.test.ts,
// rewind-ci.test.ts): a bare remote, the laptop's clone with its ledger joined, a real witness
// (`ledger witness serve` on 127.0.0.1) named in the committed keys/tlog-policy, and fresh CI
// runners that are real `git clone`s running the page's `run:` steps with a real `sh`.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { BIN, ROOT, copyTree, scratch, withSuiteEnv } from '../helpers/cli.js';
import { serveWitness } from '../witness/helpers/serve.js';

/** The `run:` steps of the yaml block that follows the CI heading in docs/across-machines.md. */
export function ciSteps(): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'across-machines.md'), 'utf8');
  const at = page.indexOf('## A CI job that gates on a handoff made on a laptop');
  expect(at, 'docs/across-machines.md has the CI job').toBeGreaterThan(0);
  const m = /```yaml\n([\s\S]*?)```/.exec(page.slice(at));
  expect(m, 'the job is a yaml block').not.toBeNull();
  const steps = (parse(m![1]) as { run: string }[]).map((s) => s.run);
  expect(steps.length).toBeGreaterThan(2);
  return steps;
}

export interface Sh { code: number; stdout: string; stderr: string }

/**
 * A bare remote, the laptop's clone with its ledger joined, a witness of that ledger named in the
 * committed keys/tlog-policy, and a way to make CI runners. `cleanup` stops the witness too.
 */
export async function team() {
  const key = process.env.LEDGER_NO_CACHE ?? '';
  const kept = KEPT.get(key);
  if (kept && !existsSync(kept.dir)) {
    // The witness of the team last here (its folder is gone, so is the team; cleanup sent it
    // SIGTERM) has let go of the port once it has exited.
    const last = WITNESS.get(kept.dir);
    if (last && last.exitCode === null && last.signalCode === null) {
      const exited = new Promise((r) => last.once('exit', r));
      last.kill('SIGTERM');
      await exited;
    }
    copyTree(kept.copy, kept.dir);
    // The witness again, on the port the committed policy names (free since the last test's
    // witness exited). Should another process have taken it meanwhile, the team is built afresh.
    const w = serveWitness(join(kept.dir, 'witness'), new URL(kept.url).host);
    const url = await w.url.catch(() => null);
    if (url === kept.url) return teamAt(kept.dir, { child: w.child, url });
    w.child.kill('SIGTERM');
    rmSync(kept.dir, { recursive: true, force: true });
  }
  const t = await teamAt(scratch('ledger-ci-remote-').dir, null);
  if (!kept) {
    // Taken while the witness is idle (it has cosigned nothing yet); without its lock, as a
    // witness that stopped leaves the folder.
    copyTree(t.root, `${t.root}.kept`);
    rmSync(join(`${t.root}.kept`, 'witness', 'lock'), { force: true });
    KEPT.set(key, { dir: t.root, copy: `${t.root}.kept`, url: t.witnessUrl });
  }
  return t;
}

/**
 * Speed: the team as team() first built it in this worker (per LEDGER_NO_CACHE), copied back to
 * the same path for the next test (`cp -a`), so every absolute path inside (the remote's, the
 * state folders', the witness's URL) stays true. A test gets a team no other test has touched:
 * the join, keygen, witness init, commit and push of a build become one `cp` and the witness's
 * start. A call while that path is still in use builds afresh. The copies go when the worker exits.
 */
const KEPT = new Map<string, { dir: string; copy: string; url: string }>();
/** The witness last started for a team's folder. */
const WITNESS = new Map<string, ChildProcess>();
process.once('exit', () => {
  for (const { copy } of KEPT.values()) rmSync(copy, { recursive: true, force: true });
});


/** The team in `root`: built there first, unless it is a copy of one already (its witness given). */
async function teamAt(root: string, restored: { child: ChildProcess; url: string } | null) {
  const s = { dir: root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
  let witness: ChildProcess | null = restored?.child ?? null;
  if (witness) WITNESS.set(root, witness);
  const cleanup = () => {
    witness?.kill('SIGTERM');
    s.cleanup();
  };
  const bin = join(s.dir, 'bin');
  const baseEnv = (home: string): Record<string, string> => withSuiteEnv({
    PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.com', LC_ALL: 'C',
  });
  const sh = (cwd: string, env: Record<string, string>, script: string): Sh => {
    const r = spawnSync('/bin/sh', ['-e', '-c', script], { cwd, env, encoding: 'utf8' });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const must = (cwd: string, env: Record<string, string>, script: string): string => {
    const r = sh(cwd, env, script);
    if (r.code !== 0) throw new Error(`${script}\nexited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };

  const bare = join(s.dir, 'team.git');
  const laptop = join(s.dir, 'laptop', 'proj');
  const lenv = { ...baseEnv(join(s.dir, 'laptop', 'home')), LEDGER_STATE_DIR: join(s.dir, 'laptop', 'state'), LEDGER_AGENT: 'claude' };
  const ciKey = join(s.dir, 'ci.key');
  const wstate = join(s.dir, 'witness');
  let url = restored?.url ?? '';
  if (!restored) {
    mkdirSync(bin);
    writeFileSync(join(bin, 'ledger'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
    chmodSync(join(bin, 'ledger'), 0o755);
    mkdirSync(join(s.dir, 'laptop', 'home'), { recursive: true });
    must(s.dir, lenv, `git init -q --bare -b main ${bare} && git init -q -b main ${laptop}`);
    writeFileSync(join(laptop, 'deploy.sh'), '#!/bin/sh\necho deployed >> "$HOME/deploys.log"\n');
    chmodSync(join(laptop, 'deploy.sh'), 0o755);
    // The page's laptop steps: join (no ledger there yet: publishes its genesis), then the CI
    // runner's key made and its trust entry added to the committed trust file.
    must(laptop, lenv, `git remote add origin ${bare} && ledger init --remote origin`);
    const entry = JSON.parse(must(laptop, lenv, `ledger keygen --out ${ciKey} --name ci --json`)).entry;
    const trustFile = join(laptop, 'keys', 'trust.json');
    const trust = JSON.parse(readFileSync(trustFile, 'utf8'));
    trust.keys.push(entry);
    writeFileSync(trustFile, `${JSON.stringify(trust)}\n`);
    // The page's witness steps: its key and config for this ledger's log key, served on loopback,
    // and the policy that names it committed beside the trust file.
    // Every key that may sign HEAD (the laptop's, the runner's: both pinned) is one of the log's.
    const wvkey = must(laptop, lenv, `ledger witness init --state ${wstate} --name witness.test/w1 $(ledger head --vkeys | sed 's/^/--log /')`).trim();
    const w = serveWitness(wstate);
    witness = w.child;
    WITNESS.set(root, witness);
    url = await w.url;
    writeFileSync(join(laptop, 'keys', 'tlog-policy'), `witness w1 ${wvkey} ${url}\nquorum w1\n`);
    must(laptop, lenv, 'git add -A && git commit -q -m "deploy script; trust file pins the laptop and the CI runner; the witness policy" && git push -q origin main');
  }

  let runners = 0;
  /** A fresh CI runner: its own home and state, a clone of the remote, the job's steps run one by one. */
  const runner = () => {
    const n = ++runners;
    const home = join(s.dir, `runner${n}`, 'home');
    mkdirSync(home, { recursive: true });
    const env = { ...baseEnv(home), LEDGER_STATE_DIR: join(s.dir, `runner${n}`, 'state'), RUNNER_KEY: ciKey };
    const dir = join(s.dir, `runner${n}`, 'proj');
    must(s.dir, env, `git clone -q ${bare} ${dir}`);
    return { dir, home, env, job: (steps = ciSteps()) => job(dir, env, steps) };
  };
  const job = (cwd: string, env: Record<string, string>, steps: string[]) => {
    const out: { step: string; r: Sh }[] = [];
    for (const step of steps) {
      const r = sh(cwd, env, step);
      out.push({ step, r });
      if (r.code !== 0) break;
    }
    return { code: out[out.length - 1].r.code, steps: out, last: out[out.length - 1] };
  };
  const deploys = (home: string) => (existsSync(join(home, 'deploys.log')) ? readFileSync(join(home, 'deploys.log'), 'utf8') : '');
  return { root: s.dir, witnessUrl: url, laptop, lenv, bare, sh, must, runner, deploys, cleanup, witnessState: wstate, stopWitness: async () => {
    const child = witness!;
    witness = null;
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  } };
}

