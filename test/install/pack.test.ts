// Installing the package into another project (issue 14.11), as a user would: `npm pack`, then
// `npm install <tarball>` in a scratch git project, then `npx handoff-ledger ...` and the
// `"handoff": "handoff-ledger"` script there, from its top and from a subdirectory.
//
// Offline, so CI never waits on the registry: the tarball is packed from the built tree (the
// build is `npm test`'s first step; --ignore-scripts, or `prepare` would build again), and each
// runtime dependency is packed from this project's node_modules, the exact versions the lock
// file installed, and installed beside it with --offline into an empty npm cache. npm then finds
// every dependency of handoff-ledger satisfied in the project and asks no registry.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, scratch } from '../helpers/cli.js';
import { git, gitRepo, statusPaths } from '../helpers/git-repo.js';

let s: ReturnType<typeof scratch>;
let app: string;
let npmEnv: Record<string, string>;

function run(cmd: string, args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd, env: npmEnv, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function ok(cmd: string, args: string[], cwd: string): string {
  const r = run(cmd, args, cwd);
  expect(r.code, `${cmd} ${args.join(' ')} in ${cwd}:\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Every runtime dependency of the package, and theirs, as installed in node_modules. */
function runtimeDeps(): string[] {
  const seen = new Set<string>();
  const visit = (pkgJson: string) => {
    const deps = Object.keys((JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {});
    for (const d of deps) {
      if (seen.has(d)) continue;
      seen.add(d);
      visit(join(ROOT, 'node_modules', d, 'package.json'));
    }
  };
  visit(join(ROOT, 'package.json'));
  return [...seen].sort();
}

beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist/cli/ledger.cjs')), 'run `npm run build` first (npm test does)').toBe(true);
  s = scratch('ledger-install-');
  const base = realpathSync(s.dir);
  mkdirSync(join(base, 'home'));
  mkdirSync(join(base, 'tgz'));
  npmEnv = {
    PATH: process.env.PATH ?? '',
    HOME: join(base, 'home'),
    npm_config_cache: join(base, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
  };
  const packed = JSON.parse(ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', join(base, 'tgz'), ROOT, ...runtimeDeps().map((d) => join(ROOT, 'node_modules', d))], base)) as { filename: string; name: string }[];
  expect(packed.map((p) => p.name)).toContain('handoff-ledger');

  app = gitRepo(join(base, 'app'), {
    'package.json': JSON.stringify({ name: 'app', version: '1.0.0', private: true, scripts: { handoff: 'handoff-ledger' } }, null, 2) + '\n',
    '.gitignore': 'node_modules/\n',
    'src/tz.ts': 'export const offset = -5;\n',
  });
  ok('npm', ['install', ...packed.map((p) => join(base, 'tgz', p.filename))], app);
  git(app, 'add', 'package.json', 'package-lock.json');
  git(app, 'commit', '-q', '-m', 'add handoff-ledger');
}, 180_000);
afterAll(() => s?.cleanup());

describe('when handoff-ledger is installed into another project from a packed tarball', () => {
  it('links both bin names, `ledger` and `handoff-ledger`, to the one shipped launcher', () => {
    const target = realpathSync(join(app, 'node_modules/handoff-ledger/dist/cli/ledger.cjs'));
    expect(realpathSync(join(app, 'node_modules/.bin/handoff-ledger'))).toBe(target);
    expect(realpathSync(join(app, 'node_modules/.bin/ledger'))).toBe(target);
    // What `bin` needs ships: the bundle, its cache and the audit worker beside the launcher.
    for (const f of ['bundle.cjs', 'bundle.cache', 'worker.js']) expect(existsSync(join(app, 'node_modules/handoff-ledger/dist/cli', f)), f).toBe(true);
  });

  it('runs `npx handoff-ledger init` there, keeps the key out of git, and runs the handoff log from a subdirectory', () => {
    const out = ok('npx', ['handoff-ledger', 'init', '--name', 'app'], app);
    expect(out).toMatch(/initialised ledger .*\/app\/\.ledger/);
    expect(out).toContain('git ignores /keys/*.key and /.ledger/ now');
    git(app, 'add', '-A');
    expect(statusPaths(app).sort()).toEqual(['.gitignore', 'keys/trust.json']);

    const sub = join(app, 'src');
    expect(ok('npx', ['ledger', '--version'], app)).toMatch(/^ledger\/0\.1\.0 /);
    expect(ok('npx', ['ledger', '--version'], sub)).toMatch(/^ledger\/0\.1\.0 /);
    ok('npx', ['handoff-ledger', 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()'], sub);
    // The essay's npm-script way: "handoff": "handoff-ledger".
    ok('npm', ['run', '--silent', 'handoff', '--', 'checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'found it', '--state', 'parser verified', '--next', 'fix toLocal', '--tests-cmd', 'node -e "process.exit(0)"'], sub);
    expect(ok('npm', ['run', '--silent', 'handoff', '--', 'resume', 'fix-tz'], sub)).toMatch(/fix toLocal/);
    // The views (HANDOFF.yml needs the yaml dependency) are in the project root.
    expect(readFileSync(join(app, 'HANDOFF.yml'), 'utf8')).toMatch(/fix-tz/);
    expect(ok('npx', ['ledger', 'audit'], sub)).toMatch(/pass/i);
    expect(ok('npx', ['handoff-ledger', 'doctor'], sub).trim().split('\n').at(-1)).toMatch(/^healthy/);
    // And a second init from the subdirectory refuses, naming the project's ledger.
    const again = run('npx', ['handoff-ledger', 'init'], sub);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`a ledger already exists at ${join(app, '.ledger')}`);
  });
});
