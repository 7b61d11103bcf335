// Real `ledger` processes for the crash and race tests: started from the built binary
// (dist/src/bin.js; `npm test` builds it first), with stdin, and killable at any moment.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../../helpers/cli.js';
import { checkLedgerBytes, type CheckedLedger } from './check-bytes.js';

export interface Exit { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export interface Started { child: ChildProcess; done: Promise<Exit> }

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npx tsc -p .\` (npm test does) before the real-process tests`);
}

export function startLedger(args: string[], opts: { cwd: string; env?: Record<string, string>; stdin?: string }): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
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
