// Issue 14.14 and 14.13 from the user's side: the "In a CI pipeline" recipe of
// docs/causal-handoffs.md, taken from the page as written and run by a real `sh` in a real git repository (with `ledger` on PATH as
// a user's install would put it). The first run audits, gates, consumes and deploys; a duplicate
// delivery of the same job holds at the gate and does not deploy twice; a deploy that failed is
// reported with `consume-failed`, after which the next run deploys again. (The recipe's cost on a
// big ledger is measured by the benchmarks, not here: no test depends on timing.)
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, ROOT, withSuiteEnv } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';
import { scenario, type Scenario } from './kit.js';

let sc: Scenario;
afterEach(() => sc?.cleanup());

/** The sh block that follows "**In a CI pipeline**" in docs/causal-handoffs.md. */
function recipe(): string {
  const page = readFileSync(join(ROOT, 'docs', 'causal-handoffs.md'), 'utf8');
  const at = page.indexOf('**In a CI pipeline**');
  expect(at, 'docs/causal-handoffs.md has the CI recipe').toBeGreaterThan(0);
  const m = /```sh\n([\s\S]*?)```/.exec(page.slice(at));
  expect(m, 'the recipe is an sh block').not.toBeNull();
  return m![1];
}

function ci(sc: Scenario): { code: number; stdout: string; stderr: string } {
  const bin = join(sc.base, 'bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    writeFileSync(join(bin, 'ledger'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
    chmodSync(join(bin, 'ledger'), 0o755);
  }
  const r = spawnSync('/bin/sh', ['-c', recipe()], {
    cwd: sc.root, encoding: 'utf8',
    env: withSuiteEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: join(sc.base, 'home'), LEDGER_STATE_DIR: join(sc.base, 'state'), LEDGER_AGENT: 'deploy_api_18' }),
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const DEPLOY = '#!/bin/sh\necho deployed >> deploys.log\n';

describe('when CI runs the documented recipe before a deploy', () => {
  it('deploys once per handoff: a duplicate delivery holds; a failed deploy, once reported, runs again', () => {
    sc = scenario('billing', { 'db/schema.sql': 'create table accounts (id bigint primary key);\n', 'deploy.sh': DEPLOY, '.gitignore': 'deploys.log\n' });
    chmodSync(join(sc.root, 'deploy.sh'), 0o755);
    mkdirSync(join(sc.base, 'home/.cache')); // a CI image with a cache folder (see the next test)
    sc.ok(['append', 'handoff', '--op', 'migrate_schema_17', '--exec', 'execution_002', '--outcome', 'success', '--agent', 'migrator',
      '--evidence', 'schema=file:db/schema.sql', '--invariant', 'tests=ok:212 passed']);

    const first = ci(sc);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(sc.read('deploys.log')).toBe('deployed\n');
    const floor = JSON.parse(readFileSync(join(sc.base, 'home/.cache/ledger-floor.json'), 'utf8'));
    expect(floor).toMatchObject({ v: 1, seq: 1 });

    // The same job is delivered again: the gate holds (20), the deploy does not run.
    const before = projectState(sc.root);
    const again = ci(sc);
    expect(again.code).toBe(20);
    expect(again.stdout).toMatch(/^hold: migrate_schema_17: handoff_valid: /m);
    expect(sc.read('deploys.log')).toBe('deployed\n');
    expect(projectState(sc.root)).toEqual(before);

    // The deploy had in fact failed: the consumer reports it, and the next run deploys again.
    sc.ok(['consume-failed', 'migrate_schema_17', '--consumer', 'deploy_api_18', '--reason', 'helm upgrade exited 1']);
    const retry = ci(sc);
    expect(retry.code, retry.stderr + retry.stdout).toBe(0);
    expect(sc.read('deploys.log')).toBe('deployed\ndeployed\n');
  });

  // Found here: on a fresh machine with no ~/.cache the recipe's `audit --floor ... --advance`
  // exited 3 ("cannot write floor file ...: ENOENT") and nothing deployed; the recipe makes the
  // folder first.
  it('runs on a fresh machine that has no ~/.cache yet', () => {
    sc = scenario('billing', { 'db/schema.sql': 'create table accounts (id bigint primary key);\n', 'deploy.sh': DEPLOY, '.gitignore': 'deploys.log\n' });
    chmodSync(join(sc.root, 'deploy.sh'), 0o755);
    sc.ok(['append', 'handoff', '--op', 'migrate_schema_17', '--exec', 'execution_002', '--outcome', 'success', '--agent', 'migrator',
      '--evidence', 'schema=file:db/schema.sql', '--invariant', 'tests=ok:212 passed']);
    const first = ci(sc);
    expect(first.code, first.stderr).toBe(0);
    expect(sc.read('deploys.log')).toBe('deployed\n');
  });

  // issue 14.14, "fix the recipe": without --floor the recipe's gate audited the whole ledger.
  it('the recipe\'s gate takes the same floor as its audit, so it pays only for what is new', () => {
    const gateLine = recipe().split('\n').findIndex((l) => /^ledger gate /.test(l));
    const gateCmd = recipe().split('\n').slice(gateLine).join('\n').split(/\n(?!\s)/)[0];
    expect(gateCmd).toMatch(/--floor /);
  });
});
