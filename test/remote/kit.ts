// Real git for the remote tests: a bare repository as the remote, a folder per machine (its own
// git repository, key and per-user state directory), one trust file that pins every machine's
// key, as a team commits it. Reached by path, or over `git daemon` on 127.0.0.1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, keep, runLedger, scratch, withSuiteEnv, type Run } from '../helpers/cli.js';
import { readSecretKey, writeSecretKey } from '../../src/keys/key-file.js';
import { trustEntry } from '../../src/keys/trust.js';
import { readTrust } from '../../src/keys/trust-file.js';
import type { Draft } from '../../src/record.js';
import type { LinkOptions } from '../../src/remote/link.js';
import { joinedRemote, openRemoteLink } from '../../src/remote/sync.js';
import { createSigner } from '../../src/sign.js';
import { transact, type LockedView } from '../../src/store/append.js';

// The shipped binary: from test/ (vitest) dist/cli/ledger.cjs; compiled under dist/test/ (the
// bench), the one beside it.
const LEDGER = existsSync(BIN) ? BIN : fileURLToPath(new URL('../../cli/ledger.cjs', import.meta.url));

function spawnLedgerSync(args: string[], opts: { cwd: string; env?: Record<string, string> }): Run {
  const r = spawnSync(process.execPath, [LEDGER, ...args], { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '', ...(opts.env ?? {}) }, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function spawnLedger(args: string[], opts: { cwd: string; env?: Record<string, string> }): ChildProcess {
  return spawn(process.execPath, [LEDGER, ...args], { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '', ...(opts.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * One handoff of `op` written on machine `m` through the library's own path, as a joined CLI
 * write goes: `transact` with m's RemoteLink (`link`: its options) as publisher and m's key,
 * trust file and state directory. `onDecide` sees the view of each decision (one per attempt).
 */
export function writeThroughLink(m: Machine, op: string, link: LinkOptions, opts: { now?: () => Date; onDecide?: (view: LockedView) => void } = {}) {
  const stateDir = m.env.LEDGER_STATE_DIR;
  const ctx = joinedRemote(m.ledger, stateDir)!;
  const trust = readTrust(join(m.dir, 'keys', 'trust.json'));
  const signer = createSigner(readSecretKey(join(m.dir, 'keys', 'harness.key')).seed);
  const res = transact({ dir: m.ledger, publisher: openRemoteLink(ctx, () => trust, link), ...(opts.now ? { now: opts.now } : {}), guard: { stateDir, trust: { trust } } }, signer, (view) => {
    opts.onDecide?.(view);
    return [{ kind: 'handoff', agent: m.name, logical_operation_id: op, execution_id: 'e', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft];
  });
  return { ctx, res };
}

export function git(args: string[], cwd?: string): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', GIT_CONFIG_NOSYSTEM: '1' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

export interface Machine {
  name: string;
  dir: string;
  ledger: string;
  env: Record<string, string>;
  /** In-process run (fast). */
  run: (args: string[], extra?: Record<string, string>) => Promise<Run>;
  /** The real binary, as a shell runs it. */
  spawnSync: (args: string[]) => Run;
  spawn: (args: string[]) => ChildProcess;
}

export interface World {
  root: string;
  /** The bare repository (the remote), by path. */
  bare: string;
  /** How machines reach it: the path, or a git:// URL once `serve()` ran. */
  url: string;
  machines: Machine[];
  trustPath: string;
  cleanup: () => void;
}

/** A remote and `n` machines, each with its own key pinned in one shared trust file (not yet joined). */
export function world(names: string[]): World {
  const s = scratch('ledger-remote-');
  const bare = join(s.dir, 'remote.git');
  git(['init', '--quiet', '--bare', bare]);
  const keys: unknown[] = [];
  const machines: Machine[] = names.map((name) => {
    const dir = join(s.dir, name);
    mkdirSync(join(dir, 'keys'), { recursive: true });
    git(['init', '--quiet', dir]);
    // The key as `ledger keygen --out keys/harness.key --name NAME` writes it, made in-process:
    // a process per machine of every world was the point of no test.
    const seed = new Uint8Array(randomBytes(32));
    writeSecretKey(join(dir, 'keys', 'harness.key'), name, seed);
    keys.push(trustEntry(name, createSigner(seed).publicKey));
    const env = withSuiteEnv({ PATH: process.env.PATH ?? '', HOME: dir, LEDGER_STATE_DIR: join(s.dir, `${name}-state`), LEDGER_AGENT: name });
    return {
      name, dir, ledger: join(dir, '.ledger'), env,
      run: (args, extra = {}) => runLedger(args, { cwd: dir, env: { ...env, ...extra } }),
      spawnSync: (args) => spawnLedgerSync(args, { cwd: dir, env }),
      spawn: (args) => spawnLedger(args, { cwd: dir, env }),
    };
  });
  const trust = `${JSON.stringify({ v: 1, keys })}\n`;
  for (const m of machines) writeFileSync(join(m.dir, 'keys', 'trust.json'), trust);
  return { root: s.dir, bare, url: bare, machines, trustPath: join(machines[0].dir, 'keys', 'trust.json'), cleanup: s.cleanup };
}

/** A world built once per file and put back before each use (helpers/cli.ts `keep`). */
export const keptWorld = (build: () => Promise<World>): (() => Promise<World>) => keep(build);

/** A free port on 127.0.0.1, chosen by the kernel (bound and released). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => resolve(false));
  });
}

/**
 * Serves the world's folder with `git daemon` (push enabled) and points `w.url` at it. Ready
 * when a connection succeeds: polled, never assumed after a delay.
 */
export async function serve(w: World): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  // Its own process group: `git daemon` runs git-daemon as a child, which a kill of `git` alone
  // would leave serving after the test (as one did, from every run).
  const daemon = spawn('git', ['daemon', '--export-all', '--enable=receive-pack', `--base-path=${w.root}`, '--listen=127.0.0.1', `--port=${port}`, '--reuseaddr', w.root], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', HOME: w.root }, detached: true });
  let exited = false;
  daemon.once('exit', () => void (exited = true));
  for (;;) {
    if (exited) throw new Error('git daemon exited');
    if (await canConnect(port)) break;
    await new Promise((r) => setImmediate(r));
  }
  const url = `git://127.0.0.1:${port}/remote.git`;
  w.url = url;
  const stop = () => {
    try {
      process.kill(-daemon.pid!, 'SIGKILL');
    } catch {
      daemon.kill('SIGKILL'); // the group is gone already
    }
  };
  return { url, stop };
}

/** Waits for a spawned ledger and collects its output. */
export function finished(child: ChildProcess): Promise<Run> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => void (stdout += d));
    child.stderr!.on('data', (d) => void (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function bytes(m: Machine): { records: string; head: string } {
  return { records: readFileSync(join(m.ledger, 'records.jsonl'), 'utf8'), head: readFileSync(join(m.ledger, 'HEAD'), 'utf8') };
}

export function records(m: Machine): Array<Record<string, unknown>> {
  return bytes(m).records.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The remote-state folder of a machine's ledger (one per ledger). */
export function remoteState(m: Machine): string {
  const base = join(m.env.LEDGER_STATE_DIR, 'remote');
  const [one] = readdirSync(base);
  return join(base, one);
}

export function evidenceDirs(m: Machine): string[] {
  const dir = join(remoteState(m), 'evidence');
  return existsSync(dir) ? readdirSync(dir) : [];
}

export const REF = 'refs/handoff/ledger';
