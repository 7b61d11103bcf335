// issue 14 item 3, SPEC 10 `ledger release SLUG`: the owner hands an unfinished item back. It stays
// open and unowned; the next start, by anyone, takes it without --takeover; the views and resume
// say it was released. Only the owner may release. In a real git repository.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CP, LONG_AGO, appendRaw, ok, records, workLog, type Project } from './helpers.js';
import { gitProject, refusedUnchanged } from './git-project.js';

let p: Project;
beforeEach(async () => {
  p = await gitProject();
});
afterEach(() => p.cleanup());

const md = () => readFileSync(join(p.dir, 'HANDOFF.md'), 'utf8');
const yml = () => parse(readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8'));
const NOTE = 'out of budget; the -05:00 case still fails, see the last checkpoint';

describe('claude releases, codex starts without takeover', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'sh tz.test.sh');
  });

  it('records the release of claude\'s execution with the note; the item is open and unowned', async () => {
    const res = await ok(p, 'release', 'fix-tz', '--agent', 'claude', '--note', NOTE);
    expect(res).toMatchObject({ ok: true, kind: 'release', slug: 'fix-tz', execution_id: 'claude-1', note: NOTE });
    expect(records(p).at(-1)).toMatchObject({ kind: 'release', agent: 'claude', logical_operation_id: 'fix-tz', execution_id: 'claude-1', note: NOTE });
    const item = workLog(p).items.get('fix-tz')!;
    expect(item).toMatchObject({ status: 'open', owner: null, lease_until: null });
    expect(item.released).toMatchObject({ agent: 'claude', note: NOTE });
  });

  it('shows the release in HANDOFF.md, HANDOFF.yml and resume', async () => {
    await ok(p, 'release', 'fix-tz', '--agent', 'claude', '--note', NOTE);
    expect(md()).toMatch(/### fix-tz\n\n- \*\*Released by claude at \S+, nobody owns it \(the next `ledger start` takes it without --takeover\): out of budget/);
    expect(md()).toMatch(/### \S+ · claude · release · fix-tz\n\n- \*\*Record:\*\* seq 3, sha256:\S+, execution claude-1\n- \*\*Released:\*\* out of budget/);
    const active = yml().active[0];
    expect(active).toMatchObject({ slug: 'fix-tz', owner: null, lease_until: null });
    expect(active.released).toMatch(/^RELEASED by claude at /);
    const r = await p.run('resume', 'fix-tz');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^fix-tz: open, RELEASED by claude at \S+, nobody owns it .*: out of budget/);
    // the views are a pure function of the ledger, these records included
    expect((await p.run('render', '--check')).code).toBe(0);
  });

  it('lets codex start it without --takeover, as a fresh execution with no takeover recorded', async () => {
    await ok(p, 'release', 'fix-tz', '--agent', 'claude', '--note', NOTE);
    const res = await ok(p, 'start', 'fix-tz', '--agent', 'codex', '--summary', 'pick up the tz fix');
    expect(res.takeover).toBeNull();
    const item = workLog(p).items.get('fix-tz')!;
    expect([item.owner, item.released, item.taken_over]).toEqual(['codex', null, null]);
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'codex', ...CP);
  });

  it('refuses --takeover on a released item: there is nothing to take over', async () => {
    await ok(p, 'release', 'fix-tz', '--agent', 'claude');
    const r = await refusedUnchanged(p, ['start', 'fix-tz', '--agent', 'codex', '--summary', 's', '--takeover'], 2, 'INPUT_REFUSED');
    expect(r.stderr).toContain('nothing to take over: fix-tz was released by claude');
  });

  it('refuses claude\'s own checkpoint after its release (nobody owns the item; start takes it again)', async () => {
    await ok(p, 'release', 'fix-tz', '--agent', 'claude');
    const r = await refusedUnchanged(p, ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP], 2, 'INPUT_REFUSED');
    expect(r.stderr).toContain('work item fix-tz was released by claude');
    expect(r.stderr).toContain('`ledger start fix-tz --agent claude --summary ...` takes it');
    // claude can simply start it again
    const again = await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'back after all');
    expect(again.takeover).toBeNull();
  });
});

describe('who may release what', () => {
  it('refuses a release by anyone but the owner, a second release, and one of a finished or unknown item', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    await refusedUnchanged(p, ['release', 'fix-tz', '--agent', 'codex'], 2, 'INPUT_CONFLICT');
    await ok(p, 'release', 'fix-tz', '--agent', 'claude');
    const twice = await refusedUnchanged(p, ['release', 'fix-tz', '--agent', 'claude'], 2, 'INPUT_REFUSED');
    expect(twice.stderr).toContain('was released by claude');
    await ok(p, 'start', 'done-item', '--agent', 'claude', '--summary', 's');
    await ok(p, 'finish', 'done-item', '--agent', 'claude', ...CP);
    await refusedUnchanged(p, ['release', 'done-item', '--agent', 'claude'], 2, 'INPUT_REFUSED');
    await refusedUnchanged(p, ['release', 'never-started', '--agent', 'claude'], 2, 'INPUT_NOT_FOUND');
  });

  it('Policy: an owner whose lease lapsed (nobody took over) may still release it, with a warning', async () => {
    appendRaw(p, [{ kind: 'start', agent: 'claude', logical_operation_id: 'fix-tz', execution_id: 'claude-old', summary: 'old', lease_until: LONG_AGO }]);
    const res = await ok(p, 'release', 'fix-tz', '--agent', 'claude');
    expect(res.warnings.join('\n')).toContain(`your lease on fix-tz had lapsed at ${LONG_AGO}`);
    expect(workLog(p).items.get('fix-tz')!.owner).toBeNull();
  });

  it('a release written around the CLI by a non-owner is shown, marked, and changes nothing', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    appendRaw(p, [{ kind: 'release', agent: 'mallory', logical_operation_id: 'fix-tz', execution_id: 'claude-1' }]);
    expect(workLog(p).items.get('fix-tz')!.owner).toBe('claude');
    await ok(p, 'render');
    expect(md()).toContain('- **Not from the owning execution:** written around the CLI; it changed no ownership');
  });

  it('append --batch refuses release and note records (their verbs apply the rules)', async () => {
    const batch = [
      { kind: 'release', logical_operation_id: 'fix-tz', execution_id: 'claude-1' },
      { kind: 'note', logical_operation_id: 'fix-tz', text: 'hi' },
    ];
    for (const payload of batch) {
      const before = records(p).length;
      const { runLedger } = await import('../helpers/cli.js');
      const r = await runLedger(['append', '--batch', '--agent', 'claude', '--json'], { cwd: p.dir, stdin: JSON.stringify(payload) + '\n' });
      expect(r.code, r.stdout).toBe(2);
      expect(JSON.parse(r.stdout).error.message).toContain(`a ${payload.kind} record is written only by \`ledger ${payload.kind}\``);
      expect(records(p)).toHaveLength(before);
    }
  });
});
