// Installing the package into another project (issue 14.11), as a user would: `npm pack`, then
// `npm install <tarball>` in a scratch git project, then `npx handoff-ledger ...` and the
// `"handoff": "handoff-ledger"` script there, from its top and from a subdirectory.
//
// Offline, so CI never waits on the registry: the tarball is packed from the built tree (the
// build is `npm test`'s first step; --ignore-scripts, or `prepare` would build again), and each
// runtime dependency is packed from this project's node_modules, the exact versions the lock
// file installed (nested ones too), and the app gets a lock file that resolves each to its
// tarball: `npm ci` with --offline into an empty npm cache then installs that tree and asks no
// registry.
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

interface LockEntry { version: string; name?: string; dev?: boolean; devOptional?: boolean; resolved?: string; integrity?: string; [k: string]: unknown }

/**
 * Every runtime package of this project's tree, where the lock file placed it (a path under
 * node_modules, nested ones included: two versions of one package can both be needed), with its
 * lock entry. Dev-only packages, and optional ones that are not installed, are left out.
 */
function runtimePackages(): [string, LockEntry][] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  return Object.entries(lock.packages)
    .filter(([path, e]) => path.startsWith('node_modules/') && !e.dev && !e.devOptional && existsSync(join(ROOT, path, 'package.json')))
    .sort(([a], [b]) => (a < b ? -1 : 1));
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
  const runtime = runtimePackages();
  const packed = JSON.parse(ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', join(base, 'tgz'), ROOT, ...runtime.map(([path]) => join(ROOT, path))], base)) as { filename: string; name: string; version: string }[];
  expect(packed.map((p) => p.name)).toContain('handoff-ledger');
  expect(packed).toHaveLength(runtime.length + 1);

  // The app's lock file is this project's runtime tree, each package resolved to its packed
  // tarball (integrity left out: a repacked tarball is not the registry's bytes), so `npm ci`
  // installs exactly that tree offline, nested versions included, and resolves nothing.
  const self = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string>; bin: Record<string, string>; license: string; engines: Record<string, string> };
  const tarball = (i: number) => `file:../tgz/${packed[i].filename}`;
  const packages: Record<string, unknown> = {
    '': { name: 'app', version: '1.0.0', dependencies: { 'handoff-ledger': tarball(0) } },
    'node_modules/handoff-ledger': { version: self.version, resolved: tarball(0), license: self.license, dependencies: self.dependencies, bin: self.bin, engines: self.engines },
  };
  runtime.forEach(([path, entry], i) => {
    const { integrity: _integrity, resolved: _resolved, ...rest } = entry;
    expect(packed[i + 1].version, path).toBe(entry.version);
    packages[path] = { ...rest, resolved: tarball(i + 1) };
  });

  app = gitRepo(join(base, 'app'), {
    'package.json': JSON.stringify({ name: 'app', version: '1.0.0', private: true, scripts: { handoff: 'handoff-ledger' } }, null, 2) + '\n',
    '.gitignore': 'node_modules/\n',
    'src/tz.ts': 'export const offset = -5;\n',
  });
  // What `npm install handoff-ledger` leaves: the dependency in package.json, and the lock file.
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, scripts: { handoff: 'handoff-ledger' }, dependencies: { 'handoff-ledger': tarball(0) } }, null, 2) + '\n');
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2) + '\n');
  ok('npm', ['ci'], app);
  git(app, 'add', 'package.json', 'package-lock.json');
  git(app, 'commit', '-q', '-m', 'add handoff-ledger');
});
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
    // Each way in once (an npx run or npm script is an npm process of about a second); then the
    // installed bin itself, which those ran.
    expect(ok('npx', ['ledger', '--version'], sub)).toMatch(/^ledger\/0\.1\.0 /);
    ok('npx', ['handoff-ledger', 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()'], sub);
    // The essay's npm-script way: "handoff": "handoff-ledger".
    ok('npm', ['run', '--silent', 'handoff', '--', 'checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'found it', '--state', 'parser verified', '--next', 'fix toLocal', '--tests-cmd', 'node -e "process.exit(0)"'], sub);
    const bin = join(app, 'node_modules/.bin/ledger');
    expect(ok(bin, ['resume', 'fix-tz'], sub)).toMatch(/fix toLocal/);
    // The views (HANDOFF.yml needs the yaml dependency) are in the project root.
    expect(readFileSync(join(app, 'HANDOFF.yml'), 'utf8')).toMatch(/fix-tz/);
    expect(ok(bin, ['audit'], sub)).toMatch(/pass/i);
    expect(ok(join(app, 'node_modules/.bin/handoff-ledger'), ['doctor'], sub).trim().split('\n').at(-1)).toMatch(/^healthy/);
    // And a second init from the subdirectory refuses, naming the project's ledger.
    const again = run(bin, ['init'], sub);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`a ledger already exists at ${join(app, '.ledger')}`);
  });

  it('`ledger setup claude` there writes the portable launcher, which finds the installed bin, and that `ledger mcp` serves with the app\'s own SDK', async () => {
    ok('npx', ['ledger', 'setup', 'claude'], app);
    const mcp = JSON.parse(readFileSync(join(app, '.mcp.json'), 'utf8')).mcpServers['handoff-ledger'];
    // SPEC 12: no path of this machine is written; the launcher finds node_modules/.bin/ledger.
    expect(mcp).toEqual({ command: 'sh', args: ['-c', expect.any(String), 'ledger', 'mcp'], env: { LEDGER_AGENT: 'claude' } });
    expect(JSON.stringify(mcp)).not.toContain(app);
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'install-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: mcp.command, args: mcp.args, cwd: join(app, 'src'), env: { ...npmEnv, ...mcp.env }, stderr: 'ignore' }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('checkpoint');
      const r = await client.callTool({ name: 'status', arguments: {} });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { items: { slug: string }[] }).items.map((i) => i.slug)).toEqual(['fix-tz']);
    } finally {
      await client.close();
    }
    // The SDK it ran is the app's, not this project's.
    expect(existsSync(join(app, 'node_modules/@modelcontextprotocol/sdk/package.json'))).toBe(true);
  });
});
