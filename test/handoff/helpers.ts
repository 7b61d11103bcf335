// Shared by the handoff-log suites: a project with a ledger, the verbs as one-liners, and the
// refusal check every suite uses (exit code, error code, and records.jsonl + HEAD unchanged).
import { expect } from 'vitest';
import { join } from 'node:path';
import { initProject, runLedger, snapshot, type Run } from '../helpers/cli.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft, LedgerRecord } from '../../src/record.js';
import { foldWorkLog } from '../../src/handoff/workitems.js';
import { readSecretKey } from '../../src/keys/key-file.js';
import { createSigner } from '../../src/sign.js';
import { appendDrafts } from '../../src/store/append.js';

export interface Project {
  dir: string;
  ledger: string;
  cleanup: () => void;
  run: (...args: string[]) => Promise<Run>;
}

export async function project(name = 'handoff'): Promise<Project> {
  const p = await initProject(name);
  return { ...p, run: (...args: string[]) => runLedger(args, { cwd: p.dir }) };
}

/** Runs a command that must be refused: asserts its exit code, its --json error code, and that
 * records.jsonl and HEAD are byte-identical afterwards. Returns the one-line reason. */
export async function expectRefused(p: Project, args: string[], exit: number, code: string): Promise<string> {
  const before = snapshot(p.ledger);
  const r = await p.run(...args, '--json');
  expect(r.code, r.stderr).toBe(exit);
  expect(JSON.parse(r.stdout).error.code).toBe(code);
  expect(snapshot(p.ledger)).toEqual(before);
  return r.stderr;
}

/** Asserts success and returns the --json result. */
export async function ok(p: Project, ...args: string[]): Promise<Record<string, unknown> & { warnings: string[] }> {
  const r = await p.run(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

export function records(p: Project): LedgerRecord[] {
  return [...Ledger.open({ dir: p.ledger }).records()].map((r) => r.record);
}

export function workLog(p: Project) {
  return foldWorkLog(Ledger.open({ dir: p.ledger }).records());
}

/** Appends drafts straight through the store, below the Ledger's rules (a start whose lease
 * already lapsed, a record written around the CLI): no waiting on the clock in any test. */
export function appendRaw(p: Project, drafts: Draft[]): void {
  appendDrafts({ dir: p.ledger }, createSigner(readSecretKey(join(p.dir, 'keys/harness.key')).seed), drafts);
}

export const LONG_AGO = '2000-01-01T00:00:00.000Z';

/** The flags of a well-formed checkpoint, for tests that vary one thing. */
export const CP = ['--done', 'ran the suite', '--state', '14 pass, 2 fail on the tz helper', '--next', 'fix toLocal()'];
