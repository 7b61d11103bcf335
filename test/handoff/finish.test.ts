// `finish`: a checkpoint that closes the work item, with the handoff's causal fields (outcome,
// evidence, invariants, depends_on, supersedes, note), so the gate can read it as a handoff.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { CP, expectRefused, ok, project, records, workLog, type Project } from './helpers.js';
import { recordProblems } from '../../src/record.js';

let p: Project;
beforeEach(async () => {
  p = await project();
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
});
afterEach(() => p.cleanup());

describe('finish', () => {
  it('records the handoff fields, defaults the outcome to success, and releases the item', async () => {
    writeFileSync(join(p.dir, 'tz.ts'), 'export {}\n');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--evidence', 'src=tz.ts', '--invariant', 'tests=ok',
      '--invariant', 'dst=fail:not handled yet', '--depends-on', 'migrate_schema_17', '--note', 'see PR 12');
    const [start, fin] = records(p).slice(-2) as unknown as Record<string, unknown>[];
    expect(recordProblems(fin)).toEqual([]);
    expect(fin).toMatchObject({
      kind: 'finish', logical_operation_id: 'fix-tz', execution_id: start.execution_id, outcome: 'success',
      evidence: { src: { source: 'file:tz.ts', digest: 'sha256:' + createHash('sha256').update('export {}\n').digest('hex') } },
      invariants: { tests: { ok: true, detail: '' }, dst: { ok: false, detail: 'not handled yet' } },
      depends_on: [{ logical_operation_id: 'migrate_schema_17', outcome: 'success' }],
      note: 'see PR 12',
    });
    expect(fin).not.toHaveProperty('lease_until');
    const item = workLog(p).items.get('fix-tz')!;
    expect([item.status, item.lease_until, item.outcome]).toEqual(['finished', null, 'success']);
  });

  it('takes another outcome, and refuses one that is not an outcome', async () => {
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'done'], 2, 'USAGE');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'failure');
    expect(workLog(p).items.get('fix-tz')?.outcome).toBe('failure');
  });

  it('warns when it says success with blockers open', async () => {
    const res = await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--blocker', 'DST');
    expect(res.warnings).toContain('finished with outcome success while 1 blocker is open');
  });

  it('may supersede an earlier finish of the same operation, and nothing else', async () => {
    const first = await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'ambiguous');
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'again');
    const startId = records(p).length - 1;
    const startRecord = (await p.run('show', String(startId), '--json')).stdout;
    const startRef = JSON.parse(startRecord).id as string;
    const reason = await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', ...CP, '--supersedes', startRef], 2, 'INPUT_REFUSED');
    expect(reason).toContain('is not a handoff or finish of fix-tz');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--supersedes', String(first.id));
    expect(records(p).at(-1)).toMatchObject({ kind: 'finish', supersedes: [first.id] });
  });

  it('is a handoff that `ledger gate` accepts, until a later start reopens the item', async () => {
    writeFileSync(join(p.dir, 'tz.ts'), 'export {}\n');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--evidence', 'src=tz.ts', '--invariant', 'tests=ok', '--tests-cmd', 'true');
    const pass = await p.run('gate', 'fix-tz', '--json');
    expect(pass.code, pass.stdout + pass.stderr).toBe(0);
    expect(JSON.parse(pass.stdout).failed_term).toBeNull();
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'one more fix');
    const hold = await p.run('gate', 'fix-tz', '--json');
    expect(hold.code).toBe(20);
    expect(JSON.parse(hold.stdout).failed_term).toBe('state_current');
  });
});
