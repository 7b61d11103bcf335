// `finish`: a checkpoint that closes the work item, with the handoff's causal fields (outcome,
// evidence, invariants, depends_on, supersedes, note), so the gate can read it as a handoff.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { CP, expectRefused, ok, project, records, workLog, type Project } from './helpers.js';
import { recordProblems } from '../../src/record.js';
import { projectState } from '../helpers/project-state.js';

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

describe('when the ledger itself ran the tests (harness-observed, SPEC 10, issue 14.5)', () => {
  it('refuses --invariant tests=ok when the command it ran failed: exit 2, no record, no blob, views untouched', async () => {
    const before = projectState(p.dir);
    const reason = await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'echo 2 failed; false', '--invariant', 'tests=ok'], 2, 'INPUT_REFUSED');
    expect(reason).toContain('--invariant tests=ok, but the ledger ran --tests-cmd and it exited 1');
    expect(projectState(p.dir)).toEqual(before);
    // and the gate has nothing to proceed on
    expect((await p.run('gate', 'fix-tz')).code).toBe(20);
  });

  it('Policy: records the observed result as the `tests` invariant when the caller gave none', async () => {
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'failure', '--tests-cmd', 'exit 3');
    expect(records(p).at(-1)).toMatchObject({ invariants: { tests: { ok: false, detail: 'observed by the ledger: --tests-cmd exited 3' } } });
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'again');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'true');
    expect(records(p).at(-1)).toMatchObject({ invariants: { tests: { ok: true, detail: 'observed by the ledger: --tests-cmd exited 0' } } });
  });

  it('keeps the caller\'s own `tests` invariant when it agrees, or when it says less (fail while the run passed)', async () => {
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'true', '--invariant', 'tests=ok:16 passed');
    expect(records(p).at(-1)).toMatchObject({ invariants: { tests: { ok: true, detail: '16 passed' } } });
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'again');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'failure', '--tests-cmd', 'true', '--invariant', 'tests=fail:flaky on CI');
    expect(records(p).at(-1)).toMatchObject({ invariants: { tests: { ok: false, detail: 'flaky on CI' } } });
  });

  it('leaves a reported --tests TEXT with tests=ok as the caller\'s claim (nothing was observed)', async () => {
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests', '16 passed', '--invariant', 'tests=ok');
    expect(records(p).at(-1)).toMatchObject({ invariants: { tests: { ok: true, detail: '' } } });
  });
});

describe('a finish with nothing for a gate to check', () => {
  it('warns on stderr when it records no evidence, no invariants and no test output, and still succeeds', async () => {
    const r = await p.run('finish', 'fix-tz', '--agent', 'claude', ...CP);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('this finish records no evidence, no invariants and no test output');
  });

  it('does not warn when any one of them is there', async () => {
    const r = await p.run('finish', 'fix-tz', '--agent', 'claude', ...CP, '--invariant', 'review=ok');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
