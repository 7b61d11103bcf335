// docs/across-machines.md, "A CI job that gates on a handoff made on a laptop", from the user's
// side: the job's `run:` steps taken from that page as written and run by a real `sh`, step by
// step as a CI does (the first that exits non-zero fails the job), on a runner that is a real
// `git clone` of a bare remote. The laptop is another clone that joined first, as the page's
// "Two clones and a bare remote" shows. The laptop finishes a work item; the runner's job joins,
// gates (proceeds, consumes) and deploys. After the laptop revokes that handoff, the next job
// holds at the gate (20, the revocation named) and does not deploy.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BIN, ROOT, scratch, snapshot, withSuiteEnv } from '../helpers/cli.js';

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

interface Sh { code: number; stdout: string; stderr: string }
let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

/** A bare remote, the laptop's clone with its ledger joined, and a way to make CI runners. */
function team() {
  const s = scratch('ledger-ci-remote-');
  cleanup = s.cleanup;
  const bin = join(s.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'ledger'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(bin, 'ledger'), 0o755);
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
  mkdirSync(join(s.dir, 'laptop', 'home'), { recursive: true });
  const lenv = { ...baseEnv(join(s.dir, 'laptop', 'home')), LEDGER_STATE_DIR: join(s.dir, 'laptop', 'state'), LEDGER_AGENT: 'claude' };
  must(s.dir, lenv, `git init -q --bare -b main ${bare} && git init -q -b main ${laptop}`);
  writeFileSync(join(laptop, 'deploy.sh'), '#!/bin/sh\necho deployed >> "$HOME/deploys.log"\n');
  chmodSync(join(laptop, 'deploy.sh'), 0o755);
  // The page's laptop steps: join (no ledger there yet: publishes its genesis), then the CI
  // runner's key made and its trust entry added to the committed trust file.
  must(laptop, lenv, `git remote add origin ${bare} && ledger init --remote origin`);
  const ciKey = join(s.dir, 'ci.key');
  const entry = JSON.parse(must(laptop, lenv, `ledger keygen --out ${ciKey} --name ci --json`)).entry;
  const trustFile = join(laptop, 'keys', 'trust.json');
  const trust = JSON.parse(readFileSync(trustFile, 'utf8'));
  trust.keys.push(entry);
  writeFileSync(trustFile, `${JSON.stringify(trust)}\n`);
  must(laptop, lenv, 'git add -A && git commit -q -m "deploy script; trust file pins the laptop and the CI runner" && git push -q origin main');

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
  return { laptop, lenv, bare, sh, must, runner, deploys };
}

describe("when a CI runner gates on a handoff finished on a laptop (the documented CI job)", () => {
  it('the job proceeds and deploys; after the laptop revokes the handoff, the next job holds at the gate and does not deploy', () => {
    const t = team();
    t.must(t.laptop, t.lenv, 'ledger start migrate_schema_17 --summary "migrate the schema to 17"');
    const fin = JSON.parse(t.must(t.laptop, t.lenv, 'ledger finish migrate_schema_17 --done "migration written" --state "applied on staging" --next "deploy it" --outcome success --invariant tests=ok --json'));
    expect(fin.ok).toBe(true);

    const r1 = t.runner();
    const first = r1.job();
    expect(first.code, JSON.stringify(first.last)).toBe(0);
    expect(first.steps.map((s) => s.r.code)).toEqual(ciSteps().map(() => 0));
    expect(t.deploys(r1.home)).toBe('deployed\n');
    // The consume record is published: the laptop sees it after a sync.
    t.must(t.laptop, t.lenv, 'ledger sync');
    const consumed = readFileSync(join(t.laptop, '.ledger', 'records.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.kind === 'consume');
    expect(consumed).toMatchObject([{ agent: 'ci', consumer: 'deploy', logical_operation_id: 'migrate_schema_17' }]);

    // The laptop withdraws the handoff; the revoke is published before the command returns 0.
    const handoffId = String(fin.id ?? fin.record?.id);
    expect(handoffId).toMatch(/^sha256:/);
    t.must(t.laptop, t.lenv, `ledger revoke ${handoffId} --reason "ran against staging, not prod"`);

    const r2 = t.runner();
    const second = r2.job();
    expect(second.code, JSON.stringify(second.last)).toBe(20);
    expect(second.last.step).toMatch(/^ledger gate /);
    // Held for the revocation (the first line names the failing term and why), not for the
    // first job's consumption.
    const hold = second.last.r.stdout.split('\n')[0];
    expect(hold).toMatch(/^hold: migrate_schema_17: handoff_valid: .*revoked/);
    expect(hold).not.toMatch(/not revoked|already consumed/);
    expect(t.deploys(r2.home)).toBe('');
    expect(t.must(r2.dir, r2.env, 'ledger audit --json')).toContain('"ok":true');
  });
});

describe('when the same job runs again on a runner that keeps its workspace (self-hosted)', () => {
  it('the join step refuses as the docs say (exit 2, nothing changed); with `ledger sync` as that step, the duplicate delivery holds', () => {
    const t = team();
    const h1 = JSON.parse(t.must(t.laptop, t.lenv, 'ledger append handoff --op migrate_schema_17 --exec e1 --outcome success --json'));
    const r = t.runner();
    expect(r.job().code).toBe(0);
    expect(t.deploys(r.home)).toBe('deployed\n');
    const before = snapshot(join(r.dir, '.ledger'));

    const again = r.job();
    expect(again.code).toBe(2);
    expect(again.last.step).toMatch(/^ledger init --remote /);
    expect(again.last.r.stderr).toMatch(/already joined to a remote on this machine/);
    expect(again.last.r.stderr.trim().split('\n')).toHaveLength(1);
    expect(snapshot(join(r.dir, '.ledger'))).toEqual(before);

    // The docs: on such a runner that step is `ledger sync`. The handoff was consumed by the
    // first job, so this delivery holds at the gate and does not deploy twice.
    const kept = ciSteps().map((s) => (/^ledger init --remote /.test(s) ? 'ledger sync' : s));
    const third = r.job(kept);
    expect(third.code, JSON.stringify(third.last)).toBe(20);
    expect(third.last.step).toMatch(/^ledger gate /);
    expect(t.deploys(r.home)).toBe('deployed\n');

    // A new handoff from the laptop: the kept runner's next job deploys it.
    // (new evidence, superseding the first: the same evidence again would be a re-drive, consumed
    // exactly once; other evidence that supersedes nothing would be a conflicting successor)
    t.must(t.laptop, t.lenv, `ledger append handoff --op migrate_schema_17 --exec e2 --outcome success --evidence script=file:deploy.sh --supersedes ${h1.id}`);
    const fourth = r.job(kept);
    expect(fourth.code, JSON.stringify(fourth.last)).toBe(0);
    expect(t.deploys(r.home)).toBe('deployed\ndeployed\n');
  });
});
