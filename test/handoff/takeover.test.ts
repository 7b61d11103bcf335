// issue 14 item 3, SPEC 10: a session that died (at its usage limit) does not lock its item. In a
// real git repository: claude starts, checkpoints a failing test and stops; codex takes the live
// lease over with --takeover --force --reason. The takeover is recorded with the reason and the
// previous owner, shown loudly in HANDOFF.md, HANDOFF.yml and resume, and claude's later writes
// are refused, naming who took over and why. No test waits for a lease to lapse: a lapsed lease is
// a start written with a lease that ended in 2000.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CP, LONG_AGO, appendRaw, ok, records, workLog } from './helpers.js';
import { gitProject, refusedUnchanged } from './git-project.js';

let p: Awaited<ReturnType<typeof gitProject>>;
beforeEach(async () => {
  p = await gitProject();
});
afterEach(() => p.cleanup());

const REASON = 'claude hit its usage limit mid-session';
const md = () => readFileSync(join(p.dir, 'HANDOFF.md'), 'utf8');
const yml = () => parse(readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8'));

describe('claude hits its usage limit, codex takes over with --force --reason', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal() for negative offsets');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'found the off-by-one', '--state', '14 pass, 2 fail',
      '--next', 'fix toLocal() for -05:00', '--tests-cmd', 'sh tz.test.sh');
  });

  it('refuses codex\'s --takeover alone while claude\'s lease is live, and says how to force it', async () => {
    const r = await refusedUnchanged(p, ['start', 'fix-tz', '--agent', 'codex', '--summary', 'finish it', '--takeover'], 2, 'INPUT_CONFLICT');
    expect(r.stderr).toContain('a live lease is taken over only with --force --reason');
    expect(r.stderr).toContain('--takeover --force --reason TEXT');
  });

  it('records the forced takeover with the reason and the previous owner, execution and lease', async () => {
    const claudeLease = workLog(p).items.get('fix-tz')!.lease_until!;
    const res = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'finish the tz fix', '--takeover', '--force', '--reason', REASON);
    expect(res.takeover).toEqual({ agent: 'claude', execution_id: 'claude-1', lease_until: claudeLease, forced: true, reason: REASON });
    const start = records(p).at(-1)!;
    expect(start).toMatchObject({ kind: 'start', agent: 'codex', takeover: { agent: 'claude', forced: true, reason: REASON } });
    const item = workLog(p).items.get('fix-tz')!;
    expect([item.owner, item.execution_id]).toEqual(['codex', res.execution_id]);
    expect(item.taken_over).toMatchObject({ agent: 'claude', by: 'codex', forced: true, reason: REASON });
  });

  it('says so loudly in HANDOFF.md, HANDOFF.yml and resume', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'finish the tz fix', '--takeover', '--force', '--reason', REASON);
    expect(md()).toMatch(new RegExp(`### fix-tz\n\n- \\*\\*Owner:\\*\\* codex .*\n- \\*\\*TAKEN OVER from claude by codex at \\S+ while its lease was live: ${REASON}\\*\\*`));
    expect(md()).toContain(`- **TAKEN OVER:** from claude by codex at`);
    const active = yml().active[0];
    expect(active.owner).toBe('codex');
    expect(active.taken_over).toMatch(new RegExp(`^TAKEN OVER from claude by codex at \\S+ while its lease was live: ${REASON}$`));
    expect(yml().latest.takeover).toMatchObject({ agent: 'claude', forced: true, reason: REASON });
    const r = await p.run('resume', 'fix-tz');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^fix-tz: open, owned by codex/);
    expect(lines[1]).toMatch(new RegExp(`^TAKEN OVER from claude by codex at \\S+ while its lease was live: "${REASON}"$`));
    // and the failing test claude left is still what codex reads first
    expect(r.stdout).toContain('`sh tz.test.sh` exit 1');
  });

  it('refuses claude\'s later checkpoint and finish, naming who took over and why', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'finish the tz fix', '--takeover', '--force', '--reason', REASON);
    for (const verb of ['checkpoint', 'finish']) {
      const r = await refusedUnchanged(p, [verb, 'fix-tz', '--agent', 'claude', ...CP], 2, 'INPUT_CONFLICT');
      expect(r.stderr).toContain(`only the owner may ${verb} fix-tz: it is owned by codex`);
      expect(r.stderr).toContain(`your execution claude-1 was taken over by codex at`);
      expect(r.stderr).toContain(`while its lease was live: "${REASON}"`);
    }
    // and a release from claude is refused the same way
    const rel = await refusedUnchanged(p, ['release', 'fix-tz', '--agent', 'claude'], 2, 'INPUT_CONFLICT');
    expect(rel.stderr).toContain(REASON);
  });

  it('lets codex finish it, and the chain audits clean with the new fields', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'finish the tz fix', '--takeover', '--force', '--reason', REASON);
    p.commit('tz.test.sh', 'echo "16 pass"\n', 'tz: fixed');
    await ok(p, 'finish', 'fix-tz', '--agent', 'codex', '--done', 'fixed toLocal()', '--state', '16 pass', '--next', 'release 1.4', '--tests-cmd', 'sh tz.test.sh');
    const audit = await p.run('audit', '--json');
    expect(audit.code, audit.stdout).toBe(0);
    expect(JSON.parse(audit.stdout).ok).toBe(true);
  });
});

describe('--takeover alone still takes only a lapsed lease', () => {
  it('takes a lapsed lease without --force, recording no forced flag (and a --reason if given)', async () => {
    appendRaw(p, [{ kind: 'start', agent: 'claude', logical_operation_id: 'fix-tz', execution_id: 'claude-old', summary: 'an old session', lease_until: LONG_AGO }]);
    const res = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'continue', '--takeover', '--reason', 'claude went quiet');
    expect(res.takeover).toEqual({ agent: 'claude', execution_id: 'claude-old', lease_until: LONG_AGO, reason: 'claude went quiet' });
    expect(md()).toContain(`- **Took over:** from claude (execution claude-old, lease lapsed at ${LONG_AGO}): claude went quiet`);
  });

  it('Policy: --force on a lapsed lease is an ordinary takeover (nothing live was broken)', async () => {
    appendRaw(p, [{ kind: 'start', agent: 'claude', logical_operation_id: 'fix-tz', execution_id: 'claude-old', summary: 'an old session', lease_until: LONG_AGO }]);
    const res = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'continue', '--takeover', '--force', '--reason', REASON);
    expect(res.takeover).toEqual({ agent: 'claude', execution_id: 'claude-old', lease_until: LONG_AGO, reason: REASON });
  });
});
