// Issue 14.7: `append --batch` of more than about 100,000 payloads published them and then exited
// 1 with "RangeError: Maximum call stack size exceeded" (Math.min(...seqs) over every seq), so a
// retry could never report success either. Nothing may spread or recurse over record counts.
// Slow by nature (150,000 real records, signed and fsynced as one batch): the payloads are tiny
// and the timeout generous, since CI shares two cores.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, initProject, snapshot } from '../helpers/cli.js';

/** The real binary, with room for its output (tens of MB: spawnSync's default cap is 1 MiB). */
function ledger(args: string[], cwd: string, stdin = '') {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, input: stdin, encoding: 'utf8', maxBuffer: 1 << 30 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const COUNT = 150_000;
const payloads = Array.from({ length: COUNT }, (_, i) => `{"kind":"intent","logical_operation_id":"o","execution_id":"e${i}","action":"a"}`).join('\n') + '\n';

let project: Awaited<ReturnType<typeof initProject>>;
beforeAll(async () => {
  project = await initProject();
});
afterAll(() => project.cleanup());

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
