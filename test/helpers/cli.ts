// Running the CLI in tests: in-process through runCli (fast, for tables of bad input) or as a
// real `ledger` process (for races, crashes and the exit code a shell sees): the shipped binary,
// dist/cli/ledger.cjs, which `npm test` builds first (`npm run build`).
import { spawn, spawnSync } from 'node:child_process';
import { afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/commands/common.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'dist/cli/ledger.cjs');

export interface Run { code: number; stdout: string; stderr: string }

/**
 * What every run of the CLI a test makes inherits from the suite's own environment, unless the
 * test's `env` names it: the test's per-user state directory (test/setup.ts), so no test writes
 * marks into the real home directory; LEDGER_FETCH_BUDGET (test/setup.ts); and LEDGER_NO_CACHE, which the suite's second run sets
 * (test/vitest.config.ts) to run the command-line and scenario tests with no cache at all
 * (src/cache/README.md).
 */
const INHERITED = ['LEDGER_STATE_DIR', 'LEDGER_NO_CACHE', 'LEDGER_FETCH_BUDGET'] as const;

/** `env` as given, plus what a test's runs inherit (INHERITED) that it does not name. */
export function withSuiteEnv(env: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined && !(name in (env ?? {}))) out[name] = value;
  }
  return { ...out, ...(env ?? {}) };
}

/** Runs `ledger ...args` in-process. `env` replaces the environment entirely (default: none but the test's state directory). */
export async function runLedger(args: string[], opts: { cwd: string; env?: Record<string, string>; stdin?: string }): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: withSuiteEnv(opts.env),
    cwd: opts.cwd,
    isTTY: false,
    readStdin: async () => opts.stdin ?? '',
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** Runs the built binary as a real process (run `npm run build` first; `npm test` does). */
export function spawnLedgerSync(args: string[], opts: { cwd: string; env?: Record<string, string>; stdin?: string }): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', ...withSuiteEnv(opts.env) },
    input: opts.stdin ?? '',
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function spawnLedger(args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', ...withSuiteEnv(opts.env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A fresh scratch directory; `cleanup()` removes it. */
export function scratch(prefix = 'ledger-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `cp -a from to`: a folder copied with its modes, owners and times (the kept worlds and scenarios). */
export function copyTree(from: string, to: string): void {
  const r = spawnSync('cp', ['-a', from, to], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cp -a ${from} ${to}: ${r.stderr}`);
}

/**
 * A folder built once per test file and put back before each use: the first call runs `build`,
 * which makes everything under the folder it returns (`root`), and keeps a copy of that folder
 * (`cp -a`: modes, owners and times as they were); each later call removes whatever the last test
 * left there and copies the kept one back to the same path, so the absolute paths inside (a
 * remote's URL, the per-user state directory's marks, keyed by the ledger's real path) stay true.
 * Every test still gets a folder no other test has touched. Speed: a fixture built by git and
 * ledger processes costs seconds of CPU, a copy a few milliseconds. Both go when the file ends.
 */
export function keep<T extends { root: string }>(build: () => T | Promise<T>): () => Promise<T> {
  let kept: { made: T; copy: string } | null = null;
  afterAll(() => {
    if (!kept) return;
    rmSync(kept.made.root, { recursive: true, force: true });
    rmSync(kept.copy, { recursive: true, force: true });
  });
  return async () => {
    if (!kept) {
      const made = await build();
      const copy = `${made.root}.kept`;
      copyTree(made.root, copy);
      kept = { made, copy };
      return made;
    }
    rmSync(kept.made.root, { recursive: true, force: true });
    copyTree(kept.copy, kept.made.root);
    return kept.made;
  };
}

/**
 * A project made once per worker process and copied into each test's folder: the first call runs
 * `build` in an empty folder (with `state`, a per-user state directory of the template's own, for
 * any `ledger` run it makes: so a copy has no writer marks of the template's path anywhere, as a
 * ledger new to its user has none); every call copies what it made (`cp -a`) into `into`. For
 * projects whose repository and ledger name no absolute path. Speed: the git processes and the
 * init of a build become one `cp`; every test still gets a project no other test has touched.
 * Removed when the worker exits.
 */
export function workerTemplate(prefix: string, build: (dir: string, state: string) => Promise<void>): (into: string) => Promise<void> {
  let made: Promise<string> | undefined;
  return async (into) => {
    made ??= (async () => {
      const base = scratch(prefix);
      process.once('exit', base.cleanup);
      const dir = join(base.dir, 'project');
      mkdirSync(dir);
      await build(dir, join(base.dir, 'state'));
      return dir;
    })();
    copyTree(`${await made}/.`, into);
  };
}

/** The bytes of records.jsonl and HEAD (and whether they exist), to prove a command changed nothing. */
export function snapshot(ledgerDir: string): { records: string | null; head: string | null } {
  const read = (p: string) => (existsSync(p) ? readFileSync(p).toString('base64') : null);
  return { records: read(join(ledgerDir, 'records.jsonl')), head: read(join(ledgerDir, 'HEAD')) };
}

/** A scratch project with an initialised ledger (.ledger, keys/harness.key, keys/trust.json). */
export async function initProject(name = 'test'): Promise<{ dir: string; ledger: string; cleanup: () => void }> {
  const s = scratch();
  const r = await runLedger(['init', '--name', name], { cwd: s.dir });
  if (r.code !== 0) throw new Error(`init failed: ${r.stderr}`);
  return { dir: s.dir, ledger: join(s.dir, '.ledger'), cleanup: s.cleanup };
}
