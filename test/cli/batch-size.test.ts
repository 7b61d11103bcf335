// Issue 14.7: `append --batch` of more than about 100,000 payloads published them and then exited
// 1 with "RangeError: Maximum call stack size exceeded" (Math.min(...seqs) over every seq), so a
// retry could never report success either. Nothing may spread or recurse over record counts.
//
// What overflows is a count beyond what the stack holds: about 127,000 spread arguments in
// Node's default stack (984 KB), which is why this test once wrote 150,000 records (50 s).
// The same proof at a tenth of the work: the real binary runs with a smaller stack
// (--stack-size=STACK_KB, still about twice what the CLI's deepest ordinary call needs), where a
// spread overflows at about 15,500 arguments, and the batch is COUNT records, checked below to
// be at least 1.4 times what a spread survives in that stack.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, initProject, scratch, snapshot, withSuiteEnv } from '../helpers/cli.js';

const STACK_KB = 128;
const COUNT = 24_000;

/**
 * The real binary with a STACK_KB stack, with room for its output (MBs: spawnSync's default cap
 * is 1 MiB). A copy of dist/cli: V8 refuses a code cache made under other flags, and the launcher
 * then writes one of its own, which must not replace the shipped caches other tests check.
 */
function ledger(args: string[], cwd: string, stdin = '') {
  const env = { PATH: process.env.PATH ?? '', ...withSuiteEnv({}) };
  const r = spawnSync(process.execPath, [`--stack-size=${STACK_KB}`, bin, ...args], { cwd, env, input: stdin, encoding: 'utf8', maxBuffer: 1 << 30 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const payloads = Array.from({ length: COUNT }, (_, i) => `{"kind":"intent","logical_operation_id":"o","execution_id":"e${i}","action":"a"}`).join('\n') + '\n';

let project: Awaited<ReturnType<typeof initProject>>;
let copy: ReturnType<typeof scratch>;
let bin: string;
beforeAll(async () => {
  project = await initProject();
  copy = scratch('ledger-batch-bin-');
  cpSync(join(ROOT, 'dist/cli'), join(copy.dir, 'cli'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy.dir, 'node_modules'));
  bin = join(copy.dir, 'cli', basename(BIN));
});
afterAll(() => {
  project.cleanup();
  copy?.cleanup();
});

describe(`with a ${STACK_KB} KB stack, where a spread of ${COUNT.toLocaleString('en')} arguments overflows`, () => {
  it(`the count is beyond what a spread survives in that stack, so the batch below would overflow had it spread the seqs`, () => {
    // The largest spread that passes, found by bisection in one process with the same stack.
    const probe = 'let lo = 0, hi = 1 << 20; while (hi - lo > 64) { const n = (lo + hi) >> 1; try { Math.min(...new Array(n).fill(0)); lo = n; } catch { hi = n; } } console.log(lo);';
    const r = spawnSync(process.execPath, [`--stack-size=${STACK_KB}`, '-e', probe], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const survives = Number(r.stdout);
    expect(survives).toBeGreaterThan(1000);
    expect(COUNT).toBeGreaterThan(survives * 1.4);
  });
});

describe(`when a batch of ${COUNT.toLocaleString('en')} payloads is appended, then retried`, () => {
  it('publishes them all and exits 0 with first_seq and last_seq; the identical retry appends nothing and exits 0', () => {
    const first = ledger(['append', '--batch', '--agent', 'ci', '--json'], project.dir, payloads);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const out = JSON.parse(first.stdout) as { ok: boolean; count: number; appended: number; existing: number; first_seq: number; last_seq: number; ids: string[] };
    expect({ ok: out.ok, count: out.count, appended: out.appended, existing: out.existing, first_seq: out.first_seq, last_seq: out.last_seq }).toEqual({ ok: true, count: COUNT, appended: COUNT, existing: 0, first_seq: 1, last_seq: COUNT });
    expect(out.ids).toHaveLength(COUNT);
    const head = JSON.parse(readFileSync(join(project.ledger, 'HEAD'), 'utf8')) as { seq: number };
    expect(head.seq).toBe(COUNT);

    const before = snapshot(project.ledger);
    const retry = ledger(['append', '--batch', '--agent', 'ci', '--json'], project.dir, payloads);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr).toMatch(new RegExp(`${COUNT} of ${COUNT} payloads were already recorded with identical content; appended 0`));
    const again = JSON.parse(retry.stdout) as typeof out;
    expect({ appended: again.appended, existing: again.existing, first_seq: again.first_seq, last_seq: again.last_seq }).toEqual({ appended: 0, existing: COUNT, first_seq: 1, last_seq: COUNT });
    expect(again.ids).toEqual(out.ids);
    expect(snapshot(project.ledger)).toEqual(before);
  }, 600_000);

  it('shows the last of them by seq, and lists them in `log`, without overflowing the stack', () => {
    const shown = ledger(['show', String(COUNT), '--json'], project.dir);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).record.execution_id).toBe(`e${COUNT - 1}`);
    const log = ledger(['log', '--limit', String(COUNT + 1), '--json'], project.dir);
    expect(log.code, log.stderr).toBe(0);
    expect(JSON.parse(log.stdout).records).toHaveLength(COUNT + 1);
  }, 600_000);
});
