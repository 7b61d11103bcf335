// Several real processes append at once: every acknowledged append lands exactly once and the
// chain links. And a lock left by a process that died is taken over without manual cleanup.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordId } from '../../src/canonical.js';
import { verifySig } from '../../src/sign.js';
import { BIN, initProject, spawnLedgerSync } from '../helpers/cli.js';

let project: Awaited<ReturnType<typeof initProject>>;
beforeEach(async () => {
  project = await initProject();
});
afterEach(() => project.cleanup());

function runProc(args: string[], cwd: string, stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', LEDGER_AGENT: 'racer' } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    if (stdin !== undefined) p.stdin.end(stdin);
    else p.stdin.end();
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Checks the chain from the bytes: consecutive seqs, links, signatures; returns the ids. */
function chainIds(ledgerDir: string): string[] {
  const head = JSON.parse(readFileSync(join(ledgerDir, 'HEAD'), 'utf8'));
  const bytes = readFileSync(join(ledgerDir, 'records.jsonl'));
  expect(bytes.length).toBe(head.size);
  const lines = bytes.toString('utf8').split('\n').slice(0, -1);
  const ids: string[] = [];
  lines.forEach((line, i) => {
    const r = JSON.parse(line);
    expect(r.seq).toBe(i);
    expect(r.prev_tail_hash).toBe(i === 0 ? null : ids[i - 1]);
    const id = recordId(r);
    expect(verifySig('record', id, r.sig)).toBe(true);
    ids.push(id);
  });
  expect(head.tail).toBe(ids[ids.length - 1]);
  expect(head.seq).toBe(lines.length - 1);
  return ids;
}

describe('when several real processes append at once', () => {
  it('lands every acknowledged append exactly once, in one linear chain', async () => {
    const procs = 6;
    const each = 5;
    const jobs: Promise<{ code: number; stdout: string; stderr: string }>[] = [];
    for (let p = 0; p < procs; p++) {
      jobs.push(
        (async () => {
          let out = '';
          for (let i = 0; i < each; i++) {
            const r = await runProc(['append', 'handoff', '--op', `op_${p}`, '--exec', `exec_${i}`, '--outcome', 'success', '--json', '--wait', '10m'], project.dir);
            if (r.code !== 0) return r;
            out += r.stdout;
          }
          return { code: 0, stdout: out, stderr: '' };
        })(),
      );
      }
    jobs.push(
      runProc(['append', '--batch', '--json', '--wait', '10m'], project.dir, Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({ kind: 'intent', logical_operation_id: 'batch_op', execution_id: `b_${i}`, action: 'deploy' })).join('\n') + '\n'),
    );
    const results = await Promise.all(jobs);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const acknowledged = results.flatMap((r) => r.stdout.trim().split('\n').map((l) => JSON.parse(l)))
      .flatMap((j) => (j.ids ? j.ids : [j.id]));
    expect(acknowledged).toHaveLength(procs * each + 10);
    const ids = chainIds(project.ledger);
    expect(ids).toHaveLength(1 + procs * each + 10);
    for (const id of acknowledged) expect(ids.filter((x) => x === id)).toHaveLength(1);
    // the batch landed contiguously: one lock, one HEAD update
    const batchSeqs = results[procs].stdout ? JSON.parse(results[procs].stdout) : null;
    expect(batchSeqs.last_seq - batchSeqs.first_seq).toBe(9);
  });
});

describe('when the lock holder died', () => {
  it('takes the lock over and appends without manual cleanup', () => {
    const deadPid = 2 ** 22 + 12345; // above pid_max's default range: never a live process
    writeFileSync(join(project.ledger, 'lock'), JSON.stringify({ pid: deadPid, host: hostname(), nonce: 'dead', since: new Date().toISOString() }));
    // --wait as a hang guard only: a dead holder is taken over at the first look, however long a
    // loaded machine takes to get there (a lock never freed would hold this run to the timeout).
    const r = spawnLedgerSync(['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--wait', '10m'], { cwd: project.dir, env: { LEDGER_AGENT: 'a' } });
    expect(r.code, r.stderr).toBe(0);
    expect(chainIds(project.ledger)).toHaveLength(2);
  });

  it('takes over a lock that names no holder (its writer died before writing it) once it is older than the grace', () => {
    // src/store/lock.ts holds such a lock for 2 s after its mtime; this one's mtime is an hour
    // back, so no clock or load can make it look younger than that.
    const lock = join(project.ledger, 'lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    const r = spawnLedgerSync(['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--wait', '10m'], { cwd: project.dir, env: { LEDGER_AGENT: 'a' } });
    expect(r.code, r.stderr).toBe(0);
    expect(chainIds(project.ledger)).toHaveLength(2);
    expect(existsSync(lock)).toBe(false);
  });

  it('waits for a live holder up to --wait, then exits 3 naming it', () => {
    writeFileSync(join(project.ledger, 'lock'), JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'live', since: new Date().toISOString() }));
    const before = readFileSync(join(project.ledger, 'records.jsonl'));
    const r = spawnLedgerSync(['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--wait', '300ms'], { cwd: project.dir, env: { LEDGER_AGENT: 'a' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`held by pid ${process.pid}`));
    expect(readFileSync(join(project.ledger, 'records.jsonl'))).toEqual(before);
  });
});
