// Two real users for the privilege-boundary tests (issue 23): root holds the key (the README's
// sudo-wrapper deployment: the ledger runs as root with SUDO_UID/SUDO_GID naming the caller),
// and the agent is another uid. CI runs as root, so it can be both; elsewhere these tests skip.
// The agent is `nobody` (65534) when the machine has it, as test/hostile/workflow-tests-user
// does; its home is whatever the password database says (/nonexistent, usually).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, chownSync, cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { BIN, withSuiteEnv, type Run } from './cli.js';

export const isRoot = process.getuid?.() === 0;
export const AGENT = 65534;
export const SKIP = 'skipped: not root, so there is no second user to be the agent';

/** The environment sudo gives the key owner's `ledger` when the agent calls it. */
export const SUDO_ENV = { SUDO_UID: String(AGENT), SUDO_GID: String(AGENT), SUDO_USER: 'nobody' };

/** A folder (mode 0755) that the agent owns: its project. */
export function agentFolder(prefix = 'ledger-agent-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  chownSync(dir, AGENT, AGENT);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A scratch root (0755, root's) holding the agent's project folder (`dir`: 0755, the agent's) and,
 * in `env`, the key owner's state directory beside it: the start of a fixture built once per file
 * and put back before each test (helpers/cli.ts `keep`), state directory included, so that no
 * test sees the marks another test's writes left for the same project path.
 */
export function agentProjectRoot(prefix: string): { root: string; dir: string; env: { LEDGER_STATE_DIR: string } } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(root, 0o755);
  const dir = join(root, 'project');
  mkdirSync(dir, { mode: 0o755 });
  chownSync(dir, AGENT, AGENT);
  return { root, dir, env: { LEDGER_STATE_DIR: join(root, 'state') } };
}

/** A folder only root may enter (0700): outside everything, where an attack must not reach. */
export function rootOnlyFolder(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-outside-'));
  chmodSync(dir, 0o700);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `ledger ...args` as the key owner (root) acting for the agent through sudo. */
export function asKeyOwner(args: string[], cwd: string, env: Record<string, string> = {}, input = ''): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...withSuiteEnv({ ...SUDO_ENV, ...env }) }, input, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A program run as the agent (uid and gid 65534), in `cwd`. */
export function asAgent(file: string, args: string[], cwd: string, env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync(file, args, { cwd, uid: AGENT, gid: AGENT, env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/nonexistent', ...env }, encoding: 'utf8' });
}

/** Gives `path` and everything below it to the agent. */
export function giveToAgent(path: string): void {
  chownSync(path, AGENT, AGENT);
  if (!lstatSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) {
    const p = join(path, name);
    if (lstatSync(p).isSymbolicLink()) continue;
    giveToAgent(p);
  }
}

/** A copy of the shipped CLI in a folder every user may read (the checkout may be root's alone). */
export function readableCli(): { bin: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-copy-'));
  chmodSync(dir, 0o755);
  cpSync(dirname(BIN), dir, { recursive: true });
  return { bin: join(dir, basename(BIN)), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every file under `dir`, by path, with its bytes and mode: to prove nothing outside the project changed. */
export function everything(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      const key = `${prefix}${name}`;
      if (st.isDirectory()) {
        out[`${key}/`] = (st.mode & 0o7777).toString(8);
        walk(p, `${key}/`);
      } else out[key] = `${(st.mode & 0o7777).toString(8)} ${st.uid} ${st.isFile() ? readFileSync(p).toString('base64') : st.isSymbolicLink() ? 'link' : 'other'}`;
    }
  };
  walk(dir, '');
  return out;
}

/** The key file's bytes, mode and owner. */
export function keyState(path: string): string {
  const st = statSync(path);
  return `${(st.mode & 0o7777).toString(8)} ${st.uid} ${readFileSync(path).toString('base64')}`;
}

/** The one line a refusal prints on stderr (asserts there is exactly one). */
export function oneLine(r: Run): string {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${lines.length}: ${r.stderr}`);
  return lines[0];
}
