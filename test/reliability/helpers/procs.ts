// Real `ledger` processes for the crash and race tests: started from the built binary
// (dist/src/cli/bin.js; `npm test` builds it first), with stdin, and killable at any moment.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT } from '../../helpers/cli.js';
import { checkLedgerBytes, type CheckedLedger } from './check-bytes.js';

export interface Exit { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export interface Started { child: ChildProcess; done: Promise<Exit> }

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npx tsc -p .\` (npm test does) before the real-process tests`);
}

function listing(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${join(e.parentPath, e.name)} ${statSync(join(e.parentPath, e.name)).mtimeMs}`)
    .sort()
    .join('\n');
}

let privateBin: string | null = null;
/** Which build the real-process tests run: the shipped bundle when it is current, else tsc's. */
export let binKind: 'bundle' | 'tsc' = 'tsc';

function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => statSync(join(e.parentPath, e.name)).mtimeMs));
}

/**
 * A private copy of the built binary, so that a rebuild of dist/ by someone else in the same
 * checkout cannot swap modules under processes that run for minutes. It is the shipped bundle
 * (dist/cli/ledger.cjs, what `bin` points at) when that is at least as new as tsc's output,
 * else dist/src/cli/bin.js; the copy is kept only if dist/ did not change while it was copied.
 */
export function stableBin(): string {
  if (privateBin) return privateBin;
  assertBuilt();
  const bundle = join(ROOT, 'dist/cli/ledger.cjs');
  const useBundle = existsSync(bundle) && statSync(bundle).mtimeMs >= newestMtime(join(ROOT, 'dist/src'));
  const parts = useBundle ? ['dist/cli'] : ['dist/src', 'dist/audit'];
  for (let attempt = 0; attempt < 20; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-bin-'));
    const before = parts.map((p) => listing(join(ROOT, p))).join('\n');
    for (const p of parts) cpSync(join(ROOT, p), join(dir, p), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    if (parts.map((p) => listing(join(ROOT, p))).join('\n') === before) {
      binKind = useBundle ? 'bundle' : 'tsc';
      privateBin = join(dir, useBundle ? 'dist/cli/ledger.cjs' : 'dist/src/cli/bin.js');
      process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
      return privateBin;
    }
    rmSync(dir, { recursive: true, force: true });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500); // a build is under way
  }
  throw new Error('dist/ kept changing while it was copied; run the real-process tests again');
}

export function startLedger(args: string[], opts: { cwd: string; env?: Record<string, string>; stdin?: string }): Started {
  const child = spawn(process.execPath, [stableBin(), ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', ...(opts.env ?? {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdin!.on('error', () => {}); // a killed child closes its stdin under us
  child.stdin!.end(opts.stdin ?? '');
  const done = new Promise<Exit>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/**
 * The ids a finished `ledger append --json` (one or --batch) acknowledged, from its stdout: a
 * process killed before it printed a whole line acknowledged nothing.
 */
export function acknowledged(out: string): string[] {
  const line = out.split('\n')[0];
  try {
    const j = JSON.parse(line);
    return Array.isArray(j.ids) ? j.ids : typeof j.id === 'string' ? [j.id] : [];
  } catch {
    return [];
  }
}

/** The published chain of a real ledger directory, checked from its bytes (throws on a flaw). */
export function readChain(ledgerDir: string, key: string): CheckedLedger & { records_bytes: Buffer } {
  const records = readFileSync(join(ledgerDir, 'records.jsonl'));
  const checked = checkLedgerBytes(records, readFileSync(join(ledgerDir, 'HEAD')), key);
  return { ...checked, records_bytes: records };
}
