// issue 14 item 4, SPEC 10 `ledger status [--agent A]` and `ledger resume` without a slug: what an
// arriving agent reads first. Every open item with its owner (or released), its lease (live with
// the time left, lapsed and how long ago), the age of its last checkpoint and its next action;
// pending intents; ambiguous and timed-out outcomes that no later success or cancel resolved;
// A's own items first. Times: the library's clock is passed in, so nothing waits on the clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Ledger } from '../../src/ledger.js';
import { formatStatus, type StatusReport } from '../../src/handoff/status.js';
import { CP, LONG_AGO, appendRaw, ok, type Project } from './helpers.js';
import { gitProject } from './git-project.js';

let p: Project;
beforeEach(async () => {
  p = await gitProject();
});
afterEach(() => p.cleanup());

const MIN = 60_000;
const handoff = (op: string, exec: string, outcome: string) =>
  ok(p, 'append', 'handoff', '--agent', 'ci', '--op', op, '--exec', exec, '--outcome', outcome);

describe('an arriving agent runs status', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'sh tz.test.sh');
    await ok(p, 'start', 'docs', '--agent', 'gemini', '--summary', 'document the tz API');
    await ok(p, 'release', 'docs', '--agent', 'gemini', '--note', 'needs the tz fix first');
    appendRaw(p, [{ kind: 'start', agent: 'codex', logical_operation_id: 'api', execution_id: 'codex-old', summary: 'the api client', lease_until: LONG_AGO }]);
    await ok(p, 'start', 'done', '--agent', 'codex', '--summary', 'finished work is not listed');
    await ok(p, 'finish', 'done', '--agent', 'codex', ...CP);
    await ok(p, 'append', 'intent', '--agent', 'ci', '--op', 'deploy_api', '--exec', 'e1', '--action', 'deploy the api to prod');
    await ok(p, 'append', 'intent', '--agent', 'ci', '--op', 'settled', '--exec', 'e1', '--action', 'settled by its handoff');
    await handoff('settled', 'e1', 'success');
    await handoff('migrate_17', 'e1', 'ambiguous'); // then a failure: still unresolved
    await handoff('migrate_17', 'e2', 'failure');
    await handoff('backup', 'e1', 'timeout'); // then a success: resolved
    await handoff('backup', 'e2', 'success');
    await handoff('rotate', 'e1', 'ambiguous'); // then a cancel: resolved
    await handoff('rotate', 'e2', 'cancelled');
    await handoff('purge', 'e1', 'timeout'); // nothing since
  });

  it('--json: every open item, the asker\'s own first, with lease, last checkpoint and next action', async () => {
    const s = (await ok(p, 'status', '--agent', 'codex')) as unknown as StatusReport;
    expect(s.ok).toBe(true);
    expect(s.agent).toBe('codex');
    expect(s.items.map((i) => [i.slug, i.owner, i.mine, i.lease.state])).toEqual([
      ['api', 'codex', true, 'lapsed'],
      ['docs', null, false, 'released'],
      ['fix-tz', 'claude', false, 'live'],
    ]);
    const [api, docs, tz] = s.items;
    expect(api.lease.until).toBe(LONG_AGO);
    expect(api.last_checkpoint).toBeNull();
    expect(docs.released).toMatchObject({ by: 'gemini', note: 'needs the tz fix first' });
    expect(tz.lease.ms).toBeGreaterThan(59 * MIN);
    expect(tz.lease.ms).toBeLessThanOrEqual(60 * MIN);
    expect(tz.last_checkpoint).toMatchObject({ kind: 'checkpoint', agent: 'claude', next: 'fix toLocal()' });
  });

  it('--json: pending intents, and the ambiguous or timed-out outcomes that no success or cancel resolved', async () => {
    const s = (await ok(p, 'status')) as unknown as StatusReport;
    expect(s.agent).toBeNull();
    expect(s.pending_intents.map((i) => [i.logical_operation_id, i.execution_id, i.action])).toEqual([['deploy_api', 'e1', 'deploy the api to prod']]);
    expect(s.unresolved_outcomes.map((u) => [u.logical_operation_id, u.execution_id, u.outcome])).toEqual([
      ['migrate_17', 'e1', 'ambiguous'],
      ['purge', 'e1', 'timeout'],
    ]);
  });

  it('text: aligned columns, the asker marked, loud lines under released items', async () => {
    const r = await p.run('status', '--agent', 'codex');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('open work items, codex\'s own first: 3'));
    expect(at).toBeGreaterThan(-1);
    const [header, ...rows] = lines.slice(at + 1).filter((l) => /^  \S/.test(l)).slice(0, 4);
    expect(header).toMatch(/^  ITEM +OWNER +LEASE +LAST CHECKPOINT +NEXT$/);
    // every column starts where its header does
    for (const col of ['OWNER', 'LEASE', 'LAST CHECKPOINT', 'NEXT']) {
      const x = header.indexOf(col);
      for (const row of rows) {
        expect(row[x - 1], `${col} in "${row}"`).toBe(' ');
        expect(row[x], `${col} in "${row}"`).not.toBe(' ');
      }
    }
    // span() leaves out a zero hour ("9837d ago" in the first hour of a UTC day, after a lease
    // that lapsed at midnight): the test must not depend on the time of day it runs.
    expect(rows[0]).toMatch(/^  api +codex \(you\) +LAPSED \d+d( \d+h)? ago +none yet +\(summary\) "the api client"$/);
    expect(rows[1]).toMatch(/^  docs +nobody \(released by gemini\) +released \S+ ago +none yet/);
    expect(rows[2]).toMatch(/^  fix-tz +claude +live, (59|60)m left +\S+ ago +"fix toLocal\(\)"$/);
    expect(r.stdout).toContain('      released by gemini: "needs the tz fix first"');
    expect(r.stdout).toMatch(/pending intents \(no outcome since\): 1\n  OPERATION +EXECUTION +AGENT +AGE +ACTION\n  deploy_api +e1 +ci +\S+ ago +deploy the api to prod\n/);
    expect(r.stdout).toMatch(/unresolved outcomes \(ambiguous or timeout, no success or cancel since\): 2\n/);
    expect(r.stdout).toMatch(/  migrate_17 +e1 +ambiguous +ci +/);
    expect(r.stdout).not.toContain('finished work is not listed');
  });
});

describe('status as of a time passed in (the library)', () => {
  // A clock an hour ahead of the real one, on a minute boundary, so the store never clamps it.
  const T0 = Math.ceil(Date.now() / MIN) * MIN + 60 * MIN;
  const open = (t: number) => Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key'), now: () => new Date(t) });

  it('reports the time left on a live lease and how long ago a lapsed one ended, and the age of the checkpoint', async () => {
    await open(T0).start({ slug: 'fix-tz', agent: 'claude', summary: 's', views: false });
    await open(T0 + 5 * MIN).checkpoint({ slug: 'fix-tz', agent: 'claude', done: 'd', state: 's', next: 'handle DST', views: false });
    const at = (t: number) => open(t).status({ agent: 'claude', now: new Date(t) });
    const live = at(T0 + 24 * MIN); // lease renewed to T0+65m
    expect(live.items[0].lease).toEqual({ state: 'live', until: new Date(T0 + 65 * MIN).toISOString(), ms: 41 * MIN });
    expect(live.items[0].last_checkpoint?.age_ms).toBe(19 * MIN);
    expect(formatStatus(live).join('\n')).toMatch(/  fix-tz +claude \(you\) +live, 41m left +19m ago +"handle DST/);
    const lapsed = at(T0 + 77 * MIN);
    expect(lapsed.items[0].lease).toMatchObject({ state: 'lapsed', ms: 12 * MIN });
    expect(formatStatus(lapsed).join('\n')).toMatch(/  fix-tz +claude \(you\) +LAPSED 12m ago +1h 12m ago +"handle DST/);
    // at the lease's end instant it has lapsed (lease.ts: one boundary for every check)
    expect(at(T0 + 65 * MIN).items[0].lease.state).toBe('lapsed');
  });

  it('says when the asker owns nothing', () => {
    const s = open(T0).status({ agent: 'codex', now: new Date(T0) });
    expect(s.items).toEqual([]);
    expect(formatStatus(s)).toContain('codex owns no open item: `ledger start SLUG` takes one (a released one needs no --takeover)');
  });
});

describe('ledger resume without a slug', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
  });

  it('gives the caller\'s own open item (--agent or $LEDGER_AGENT)', async () => {
    const r = await p.run('resume', '--agent', 'claude');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([`claude's open item: fix-tz`, expect.stringMatching(/^fix-tz: open, owned by claude/)]);
    const { runLedger } = await import('../helpers/cli.js');
    const env = await runLedger(['resume', '--json'], { cwd: p.dir, env: { LEDGER_AGENT: 'claude' } });
    expect(JSON.parse(env.stdout)).toMatchObject({ ok: true, mode: 'resume', slug: 'fix-tz', owner: 'claude' });
  });

  it('prints the status when the caller owns none, or several (listing them), or gave no name', async () => {
    const none = await ok(p, 'resume', '--agent', 'codex');
    expect(none).toMatchObject({ ok: true, mode: 'status', reason: 'none', own: [] });
    expect((await p.run('resume', '--agent', 'codex')).stdout).toMatch(/^codex owns no open item; the status instead[^\n]*\nstatus at /);
    await ok(p, 'start', 'docs', '--agent', 'claude', '--summary', 'docs');
    const several = await ok(p, 'resume', '--agent', 'claude');
    expect(several).toMatchObject({ mode: 'status', reason: 'several', own: ['docs', 'fix-tz'] });
    expect((await p.run('resume', '--agent', 'claude')).stdout).toMatch(/^claude owns 2 open items \(docs, fix-tz\); `ledger resume SLUG` reads one\. The status:\n/);
    const nobody = await ok(p, 'resume');
    expect(nobody).toMatchObject({ mode: 'status', reason: 'no-agent', agent: null });
    expect((nobody as unknown as StatusReport).items.map((i) => i.slug)).toEqual(['docs', 'fix-tz']);
  });
});
