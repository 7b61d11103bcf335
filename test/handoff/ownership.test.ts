// One owner per work item (issue 5, SPEC 10): who may start, checkpoint and finish a slug, and
// what a refusal says. Lapsed leases are made by writing a start whose lease ended in 2000, so no
// test waits on the clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CP, LONG_AGO, appendRaw, expectRefused, ok, project, records, workLog, type Project } from './helpers.js';

let p: Project;
beforeEach(async () => {
  p = await project();
});
afterEach(() => p.cleanup());

const lapsedStart = (agent: string, slug = 'fix-tz') =>
  appendRaw(p, [{ kind: 'start', agent, logical_operation_id: slug, execution_id: `${agent}-old`, summary: 'an old session', lease_until: LONG_AGO }]);

describe('when another agent holds a live lease', () => {
  it('refuses a second start, naming the owner and the lease end, and writes nothing', async () => {
    const first = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'fix toLocal()');
    const reason = await expectRefused(p, ['start', 'fix-tz', '--agent', 'claude', '--summary', 'me too'], 2, 'INPUT_CONFLICT');
    expect(reason).toContain(`slug fix-tz is owned by codex until ${String(first.lease_until)}`);
    expect(reason).toContain('--takeover');
  });

  it('refuses a takeover of the live lease', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'fix toLocal()');
    const reason = await expectRefused(p, ['start', 'fix-tz', '--agent', 'claude', '--summary', 'take it', '--takeover'], 2, 'INPUT_CONFLICT');
    expect(reason).toContain('a live lease is taken over only with --force --reason');
    expect(workLog(p).items.get('fix-tz')?.owner).toBe('codex');
  });

  it('refuses a checkpoint and a finish from a non-owner', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'fix toLocal()');
    const cp = await expectRefused(p, ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP], 2, 'INPUT_CONFLICT');
    expect(cp).toContain('only the owner may checkpoint fix-tz: it is owned by codex');
    const fin = await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', ...CP], 2, 'INPUT_CONFLICT');
    expect(fin).toContain('only the owner may finish fix-tz');
  });

  it('refuses a non-owner before running its test command', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'fix toLocal()');
    await expectRefused(p, ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'touch ran.txt'], 2, 'INPUT_CONFLICT');
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${p.dir}/ran.txt`)).toBe(false);
  });
});

describe('when the owner\'s lease has lapsed', () => {
  it('refuses a start without --takeover, saying how to take over', async () => {
    lapsedStart('codex');
    const reason = await expectRefused(p, ['start', 'fix-tz', '--agent', 'claude', '--summary', 'continue'], 2, 'INPUT_CONFLICT');
    expect(reason).toContain(`lease lapsed at ${LONG_AGO}`);
    expect(reason).toContain('--takeover');
  });

  it('takes over with --takeover and records the previous owner and execution', async () => {
    lapsedStart('codex');
    const res = await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'continue', '--takeover');
    expect(res.takeover).toEqual({ agent: 'codex', execution_id: 'codex-old', lease_until: LONG_AGO });
    const item = workLog(p).items.get('fix-tz')!;
    expect([item.owner, item.execution_id]).toEqual(['claude', res.execution_id]);
  });

  it('refuses the old owner after a takeover, telling it who took over', async () => {
    lapsedStart('codex');
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'continue', '--takeover');
    const reason = await expectRefused(p, ['checkpoint', 'fix-tz', '--agent', 'codex', ...CP], 2, 'INPUT_CONFLICT');
    expect(reason).toContain('your execution codex-old was taken over by claude');
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'codex', ...CP], 2, 'INPUT_CONFLICT');
    // and it cannot take the item back while claude's fresh lease is live
    await expectRefused(p, ['start', 'fix-tz', '--agent', 'codex', '--summary', 'mine', '--takeover'], 2, 'INPUT_CONFLICT');
  });

  it('lets the owner itself checkpoint, renewing the lease, with a warning', async () => {
    lapsedStart('codex');
    const res = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'codex', ...CP);
    expect(res.execution_id).toBe('codex-old');
    expect(res.warnings.join('\n')).toContain(`lease on fix-tz had lapsed at ${LONG_AGO}`);
    expect(workLog(p).items.get('fix-tz')?.lease_until).toBe(res.lease_until);
  });
});

describe('Policy: an agent re-starting an item it owns', () => {
  it('opens a new execution and records the one it replaces', async () => {
    const a = await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'first session');
    const b = await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'second session');
    expect(b.execution_id).not.toBe(a.execution_id);
    expect(b.takeover).toEqual({ agent: 'claude', execution_id: a.execution_id, lease_until: a.lease_until });
  });
});

describe('execution ids', () => {
  it('are <agent>-<seq of the start>, with @ made _', async () => {
    const a = await ok(p, 'start', 'one', '--agent', 'ci@build', '--summary', 's');
    expect(a.execution_id).toBe(`ci_build-${String(a.seq)}`);
  });
});

describe('items that are not open', () => {
  it('refuses a checkpoint of a slug never started (not found) and of a finished one (refused)', async () => {
    await expectRefused(p, ['checkpoint', 'nope', '--agent', 'claude', ...CP], 2, 'INPUT_NOT_FOUND');
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP);
    const reason = await expectRefused(p, ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP], 2, 'INPUT_REFUSED');
    expect(reason).toContain('was finished (success) by claude');
  });

  it('refuses --takeover when there is nothing to take over', async () => {
    await expectRefused(p, ['start', 'fresh', '--agent', 'claude', '--summary', 's', '--takeover'], 2, 'INPUT_REFUSED');
  });

  it('lets anyone start a finished item again (reopening it) without --takeover', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'failure');
    const again = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'second try');
    expect(again.takeover).toBeNull();
    expect(records(p).filter((r) => r.kind === 'start')).toHaveLength(2);
  });
});
