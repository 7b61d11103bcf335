// The two views (issue 5): rewritten after every start/checkpoint/finish, equal to the render
// of the ledger (same ledger, same bytes), and checked by `render --check` (exit 30 when a view
// is missing, stale or was edited by hand).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runs } from '../helpers/runs.js';
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync, symlinkSync, lstatSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CP, appendRaw, expectRefused, ok, project, workLog, type Project } from './helpers.js';
import { headerText, isSealed, keptName, renderViews, sealView, viewGenesis, writeViews } from '../../src/handoff/views.js';
import fc from 'fast-check';
import type { Draft } from '../../src/record.js';
import { scratch, snapshot } from '../helpers/cli.js';

let p: Project;
beforeEach(async () => {
  p = await project();
});
afterEach(() => p.cleanup());

const md = (dir = p.dir) => readFileSync(join(dir, 'HANDOFF.md'), 'utf8');
const yml = (dir = p.dir) => readFileSync(join(dir, 'HANDOFF.yml'), 'utf8');

/** Both files on disk are exactly the render of the ledger as it is now. */
function expectViewsMatchLedger(dir = p.dir) {
  const expected = renderViews(workLog(p));
  expect(md(dir)).toBe(expected['HANDOFF.md']);
  expect(yml(dir)).toBe(expected['HANDOFF.yml']);
}

describe('when more items are open than HANDOFF.yml lists (the snapshot is bounded)', () => {
  it('lists the most recently worked on, in slug order, says how many are open, and HANDOFF.md shows them all', async () => {
    const { ACTIVE_LIMIT } = await import('../../src/handoff/render-yml.js');
    const n = ACTIVE_LIMIT + 3;
    for (let i = 0; i < n; i++) await ok(p, 'start', `item-${String(i).padStart(2, '0')}`, '--agent', 'claude', '--summary', `item ${i}`);
    // item-00 checkpointed last: it is worked on most recently, so it stays listed.
    await ok(p, 'checkpoint', 'item-00', '--agent', 'claude', ...CP);
    expectViewsMatchLedger();
    const y = parse(yml());
    expect(y.active_total).toBe(n);
    expect(y.active.map((a: { slug: string }) => a.slug)).toEqual(['item-00', ...Array.from({ length: ACTIVE_LIMIT - 1 }, (_, k) => `item-${String(n - ACTIVE_LIMIT + 1 + k).padStart(2, '0')}`)]);
    for (let i = 0; i < n; i++) expect(md()).toContain(`\n### item-${String(i).padStart(2, '0')}\n`);
  });

  it('with no more than the limit open, there is no active_total', async () => {
    await ok(p, 'start', 'one', '--agent', 'claude', '--summary', 'one');
    expect(parse(yml())).not.toHaveProperty('active_total');
  });
});

describe('in a long-lived project (HANDOFF.md is bounded)', () => {
  const lease = '2099-01-01T00:00:00.000Z';
  /** The text of HANDOFF.md's section `name`, its heading to the next section's (or the end). */
  const section = (name: string) => {
    const text = md();
    const from = text.indexOf(`## ${name}`);
    const to = text.indexOf('\n## ', from + 1);
    return text.slice(from, to < 0 ? undefined : to);
  };
  const headings = (s: string) => [...s.matchAll(/^### (.+)$/gm)].map((m) => m[1]);

  it('shows the open items within the bound, the newest operations and log entries, and says how many older ones it leaves out', async () => {
    const { LOG_LIMIT, OPERATIONS_LIMIT } = await import('../../src/handoff/render-md.js');
    const done = OPERATIONS_LIMIT + 7;
    const drafts: Draft[] = [];
    for (let i = 0; i < done; i++) {
      const work = { logical_operation_id: `done-${String(i).padStart(3, '0')}`, execution_id: `claude-${i}` };
      drafts.push({ kind: 'start', agent: 'claude', ...work, summary: `item ${i}`, lease_until: lease } as Draft);
      drafts.push({ kind: 'finish', agent: 'claude', ...work, done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft);
    }
    // Three items left open, started first: the oldest records of all, and still every one shown.
    const open = ['open-a', 'open-b', 'open-c'].map((slug, i) => ({ kind: 'start', agent: 'codex', logical_operation_id: slug, execution_id: `codex-${i}`, summary: slug, lease_until: lease }) as Draft);
    appendRaw(p, [...open, ...drafts]);
    await ok(p, 'render');
    expectViewsMatchLedger();
    expect(headings(section('Open work items'))).toEqual(['open-a', 'open-b', 'open-c']);
    expect(section('Open work items')).not.toContain('not shown here');
    // The operations with the newest records, newest first, and a line for the rest.
    expect(headings(section('Operations'))).toEqual(Array.from({ length: OPERATIONS_LIMIT }, (_, k) => `done-${String(done - 1 - k).padStart(3, '0')}`));
    expect(section('Operations')).toContain('_7 older operations are not shown here: `ledger log --op SLUG` lists the records of one._');
    // The newest LOG_LIMIT entries, the newest (the last finish) first, and how many are left out.
    const log = section('Log, newest first');
    const entries = headings(log);
    expect(entries).toHaveLength(LOG_LIMIT);
    expect(entries[0]).toMatch(new RegExp(`· claude · finish · done-${String(done - 1).padStart(3, '0')}$`));
    const total = open.length + 2 * done;
    expect(log).toContain(`_${total - LOG_LIMIT} older entries are not shown here: \`ledger log\` lists every record, and \`ledger show SEQ\` prints one._`);
    // Only the two sections past their bound say so.
    expect(md().match(/older (entries|operations) are not shown/g)).toHaveLength(2);
  });

  it('shows the open items most recently worked on, in slug order, and says how many more are open', async () => {
    const { OPEN_LIMIT } = await import('../../src/handoff/render-md.js');
    const n = OPEN_LIMIT + 4;
    const start = (i: number) => ({ kind: 'start', agent: 'claude', logical_operation_id: `item-${String(i).padStart(3, '0')}`, execution_id: `claude-${i}`, summary: `item ${i}`, lease_until: lease }) as Draft;
    // item-000 is checkpointed last: worked on most recently, so it stays; items 1-4 are left out.
    appendRaw(p, [...Array.from({ length: n }, (_, i) => start(i)),
      { kind: 'checkpoint', agent: 'claude', logical_operation_id: 'item-000', execution_id: 'claude-0', done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], lease_until: lease } as Draft]);
    await ok(p, 'render');
    expectViewsMatchLedger();
    const open = section('Open work items');
    expect(headings(open)).toEqual(['item-000', ...Array.from({ length: OPEN_LIMIT - 1 }, (_, k) => `item-${String(k + 5).padStart(3, '0')}`)]);
    expect(open).toContain('_4 older open items are not shown here: `ledger status --json` lists every open item._');
  });

  it('says nothing of older entries while everything fits', async () => {
    await ok(p, 'start', 'one', '--agent', 'claude', '--summary', 'one');
    expect(md()).not.toContain('not shown here');
  });
});

describe('after every verb', () => {
  it('the views match the ledger and say what the verb wrote', async () => {
    const start = await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    expectViewsMatchLedger();
    expect(md()).toContain('### ');
    expect(md()).toContain('· claude · start · fix-tz');
    // the open item with its owner, summary and next action, in prose (issue 26)
    expect(md()).toMatch(/### fix-tz\n\n- \*\*Owner:\*\* claude \(execution claude-1\), lease until \S+\n- \*\*Summary \(claude, \S+\):\*\* fix toLocal\(\)\n- \*\*Next:\*\* no checkpoint yet/);
    expect(parse(yml()).active).toEqual([{ slug: 'fix-tz', owner: 'claude', execution_id: start.execution_id, lease_until: start.lease_until, summary: 'fix toLocal()' }]);

    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'ran the suite', '--state', '14 pass, 2 fail',
      '--next', 'fix toLocal()', '--verified', 'parser', '--attempted', 'dst', '--blocker', 'tz db', '--tests', '14 pass\n2 fail');
    expectViewsMatchLedger();
    const y = parse(yml());
    expect(y.latest).toMatchObject({ kind: 'checkpoint', agent: 'claude', done: 'ran the suite', state: '14 pass, 2 fail', next: 'fix toLocal()', verified: ['parser'], attempted: ['dst'], blockers: ['tz db'] });
    expect(y.latest.tests.excerpt).toBe('14 pass\n2 fail');
    expect(y.trail).toHaveLength(1);
    expect(md()).toMatch(/- \*\*Verified:\*\*\n {2}- parser\n- \*\*Attempted, not verified:\*\*\n {2}- dst/);
    expect(md()).toMatch(/- \*\*Next \(claude's checkpoint, seq 2, \S+\):\*\* fix toLocal\(\)/);

    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP, '--outcome', 'success', '--invariant', 'tests=ok');
    expectViewsMatchLedger();
    expect(parse(yml()).active).toEqual([]);
    expect(parse(yml()).latest).toMatchObject({ kind: 'finish', outcome: 'success', invariants: { tests: { ok: true, detail: '' } } });
    // newest first: the finish heads the log
    const log = md().slice(md().indexOf('## Log, newest first'));
    expect(log.indexOf('· finish ·')).toBeLessThan(log.indexOf('· checkpoint ·'));
    expect(log.indexOf('· checkpoint ·')).toBeLessThan(log.indexOf('· start ·'));
  });

  it('a takeover is shown as one, and the views match again once the verb rewrote them', async () => {
    appendRaw(p, [{ kind: 'start', agent: 'codex', logical_operation_id: 'fix-tz', execution_id: 'codex-old', summary: 'old session', lease_until: '2000-01-01T00:00:00.000Z' }]);
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'continue', '--takeover');
    expectViewsMatchLedger();
    expect(md()).toContain('- **Took over:** from codex (execution codex-old, lease lapsed at 2000-01-01T00:00:00.000Z)');
    expect(parse(yml()).latest.takeover).toEqual({ agent: 'codex', execution_id: 'codex-old', lease_until: '2000-01-01T00:00:00.000Z' });
  });

  it('the trail holds the five entries before the latest, newest first', async () => {
    await ok(p, 'start', 'a', '--agent', 'claude', '--summary', 's');
    for (let i = 1; i <= 6; i++) await ok(p, 'checkpoint', 'a', '--agent', 'claude', '--done', `step ${i}`, '--state', 's', '--next', 'n');
    const y = parse(yml());
    expect(y.latest.done).toBe('step 6');
    expect(y.trail.map((t: string) => /step (\d)/.exec(t)?.[1])).toEqual(['5', '4', '3', '2', '1']);
    expectViewsMatchLedger();
  });

  it('a refused verb leaves the views as they were', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    const before = [md(), yml()];
    await expectRefused(p, ['start', 'fix-tz', '--agent', 'codex', '--summary', 's'], 2, 'INPUT_CONFLICT');
    expect([md(), yml()]).toEqual(before);
  });

  it('--views DIR puts them elsewhere', async () => {
    const other = join(p.dir, 'views');
    mkdirSync(other);
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's', '--views', 'views');
    expectViewsMatchLedger(other);
    const r = await p.run('render', '--check', '--views', 'views');
    expect(r.code).toBe(0);
  });
});

describe('same ledger, same bytes', () => {
  it('a copy of the ledger elsewhere renders byte-identical views', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix\ttabs and\nnewlines');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests', '\x1b[32mok\x1b[0m 3 ```fence```');
    const s = scratch();
    try {
      cpSync(p.ledger, join(s.dir, '.ledger'), { recursive: true });
      const r = await p.run('render', '--dir', join(s.dir, '.ledger'));
      expect(r.code, r.stderr).toBe(0);
      expect(md(s.dir)).toBe(md());
      expect(yml(s.dir)).toBe(yml());
    } finally {
      s.cleanup();
    }
  });
});

describe('render --check', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
  });

  it('passes on fresh views', async () => {
    const r = await p.run('render', '--check', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).views.map((v: { status: string }) => v.status)).toEqual(['ok', 'ok']);
  });

  it('catches a hand-edited HANDOFF.md (exit 30), and `render` repairs it', async () => {
    writeFileSync(join(p.dir, 'HANDOFF.md'), md().replace('14 pass, 2 fail', '16 pass'));
    const before = snapshot(p.ledger);
    const r = await p.run('render', '--check', '--json');
    expect(r.code).toBe(30);
    expect(JSON.parse(r.stdout).views.map((v: { status: string }) => v.status)).toEqual(['edited', 'ok']);
    expect(snapshot(p.ledger)).toEqual(before);
    expect((await p.run('render')).code).toBe(0);
    expect((await p.run('render', '--check')).code).toBe(0);
    expectViewsMatchLedger();
  });

  it('catches a hand-edited HANDOFF.yml, even one that only adds a comment', async () => {
    writeFileSync(join(p.dir, 'HANDOFF.yml'), yml() + '# looks fine\n');
    const r = await p.run('render', '--check');
    expect(r.code).toBe(30);
    expect(r.stdout).toMatch(/^edited +.*HANDOFF\.yml$/m);
  });

  it('calls views stale when a record was written around the CLI', async () => {
    appendRaw(p, [{ kind: 'checkpoint', agent: 'claude', logical_operation_id: 'fix-tz', execution_id: 'claude-1', done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [], lease_until: '2030-01-01T00:00:00.000Z' }]);
    const r = await p.run('render', '--check', '--json');
    expect(r.code).toBe(30);
    expect(JSON.parse(r.stdout).views.map((v: { status: string }) => v.status)).toEqual(['stale', 'stale']);
  });

  it('reports a missing view', async () => {
    rmSync(join(p.dir, 'HANDOFF.yml'));
    const r = await p.run('render', '--check', '--json');
    expect(r.code).toBe(30);
    expect(JSON.parse(r.stdout).views.map((v: { status: string }) => v.status)).toEqual(['ok', 'missing']);
  });

  it('is not made stale by records of other kinds', async () => {
    const h = await p.run('append', 'handoff', '--agent', 'ci', '--op', 'deploy', '--exec', 'e1', '--outcome', 'success');
    expect(h.code, h.stderr).toBe(0);
    expect((await p.run('render', '--check')).code).toBe(0);
  });
});

describe('when a person edits a view and a verb rewrites it', () => {
  const kept = (dir = p.dir) => readdirSync(dir).filter((f) => f.includes('.edited-')).sort();

  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
  });

  it('the next checkpoint keeps the edited text beside HANDOFF.md and says so in one line', async () => {
    const edited = md().replace('## Open work items', '## Open work items\n\nNOTE from Ana: do not touch the parser, it is fine.');
    writeFileSync(join(p.dir, 'HANDOFF.md'), edited);
    const r = await p.run('checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n').filter((l) => l.includes('edited by hand'));
    expect(lines).toHaveLength(1);
    expect(kept()).toEqual([expect.stringMatching(/^HANDOFF\.md\.edited-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$/)]);
    expect(lines[0]).toContain(join(p.dir, 'HANDOFF.md'));
    expect(lines[0]).toContain(join(p.dir, kept()[0]));
    expect(readFileSync(join(p.dir, kept()[0]), 'utf8')).toBe(edited);
    expectViewsMatchLedger();
    // the view is the ledger's again: the next write keeps nothing more
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
    expect(kept()).toHaveLength(1);
  });

  it('--json lists the kept copy in the warnings', async () => {
    writeFileSync(join(p.dir, 'HANDOFF.yml'), yml() + 'extra: by hand\n');
    const j = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
    expect(j.warnings.filter((w) => w.includes('HANDOFF.yml had been edited by hand'))).toHaveLength(1);
    expect(kept()).toEqual([expect.stringMatching(/^HANDOFF\.yml\.edited-/)]);
  });

  it('`ledger render` keeps it too; `render --check` still only reports', async () => {
    writeFileSync(join(p.dir, 'HANDOFF.md'), md() + '\nall done, trust me\n');
    const check = await p.run('render', '--check');
    expect(check.code).toBe(30);
    expect(kept()).toEqual([]);
    const r = await p.run('render');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^ledger: warning: .*HANDOFF\.md had been edited by hand; its text is kept in .*HANDOFF\.md\.edited-\S+ /m);
    expect(kept()).toHaveLength(1);
    expect((await p.run('render', '--check')).code).toBe(0);
  });

  it('never writes over a file already at the kept name: a planted file or link stays as it was', () => {
    const now = new Date('2026-03-04T05:06:07.890Z');
    const first = keptName('HANDOFF.md', now);
    expect(first).toBe('HANDOFF.md.edited-2026-03-04T05-06-07Z');
    writeFileSync(join(p.dir, first), 'planted');
    symlinkSync('/etc/passwd', join(p.dir, keptName('HANDOFF.md', now, 2)));
    writeFileSync(join(p.dir, 'HANDOFF.md'), 'my own notes\n');
    const w = writeViews(p.ledger, p.dir, 1000, now);
    expect(w.kept).toEqual([{ file: join(p.dir, 'HANDOFF.md'), kept: join(p.dir, keptName('HANDOFF.md', now, 3)) }]);
    expect(readFileSync(join(p.dir, first), 'utf8')).toBe('planted');
    expect(lstatSync(join(p.dir, keptName('HANDOFF.md', now, 2))).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(p.dir, keptName('HANDOFF.md', now, 3)), 'utf8')).toBe('my own notes\n');
    expectViewsMatchLedger();
  });

  it('a view as the ledger wrote it carries a digest line that any edit breaks', () => {
    const views = renderViews(workLog(p));
    for (const name of ['HANDOFF.md', 'HANDOFF.yml'] as const) {
      expect(isSealed(name, views[name])).toBe(true);
      expect(isSealed(name, views[name].replace('fix', 'fiz'))).toBe(false);
      expect(isSealed(name, views[name] + '\n')).toBe(false);
      expect(isSealed(name, views[name].slice(0, -1))).toBe(false);
    }
    // As read from disk (bytes): the same answers; bytes that are not UTF-8 are never sealed.
    for (const name of ['HANDOFF.md', 'HANDOFF.yml'] as const) {
      const bytes = Buffer.from(views[name], 'utf8');
      expect(isSealed(name, bytes)).toBe(true);
      expect(isSealed(name, Buffer.concat([Buffer.from([0xff]), bytes]))).toBe(false);
      expect(isSealed(name, bytes.subarray(1))).toBe(false);
    }
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('HANDOFF.md', 'HANDOFF.yml') as fc.Arbitrary<'HANDOFF.md' | 'HANDOFF.yml'>, (body, name) => {
      const sealed = sealView(name, `${body}\n`); // a rendered view ends its text with a line feed
      expect(isSealed(name, Buffer.from(sealed, 'utf8'))).toBe(isSealed(name, sealed));
      expect(isSealed(name, sealed)).toBe(true);
    }));
    expect(views['HANDOFF.md'].trimEnd().split('\n').at(-1)).toMatch(/^<!-- ledger-view digest sha256:[0-9a-f]{64} -->$/);
    expect(views['HANDOFF.yml'].trimEnd().split('\n').at(-1)).toMatch(/^# ledger-view digest sha256:[0-9a-f]{64}$/);
  });
});

describe('when a view is a symbolic link or a FIFO planted by the repository', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
  });

  it('render refuses a linked view (exit 3) and leaves the link and its target as they were', async () => {
    const target = join(p.dir, 'elsewhere.txt');
    writeFileSync(target, 'not yours\n');
    rmSync(join(p.dir, 'HANDOFF.md'));
    symlinkSync(target, join(p.dir, 'HANDOFF.md'));
    const r = await p.run('render', '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('OP_IO');
    expect(readFileSync(target, 'utf8')).toBe('not yours\n');
    expect(lstatSync(join(p.dir, 'HANDOFF.md')).isSymbolicLink()).toBe(true);
  });

  it('render --check and render answer at once on a FIFO, instead of blocking on it', async () => {
    rmSync(join(p.dir, 'HANDOFF.yml'));
    execFileSync('mkfifo', [join(p.dir, 'HANDOFF.yml')]);
    const check = await p.run('render', '--check', '--json');
    expect(check.code).toBe(30);
    expect(JSON.parse(check.stdout).views.map((v: { status: string }) => v.status)).toEqual(['ok', 'edited']);
    const edited = md() + '\na note by hand\n';
    writeFileSync(join(p.dir, 'HANDOFF.md'), edited);
    const r = await p.run('render', '--json');
    expect(r.code).toBe(3);
    expect(lstatSync(join(p.dir, 'HANDOFF.yml')).isFIFO()).toBe(true);
    // refused before either view was touched: HANDOFF.md is neither kept nor rewritten
    expect(md()).toBe(edited);
    expect(readdirSync(p.dir).filter((f) => f.includes('.edited-'))).toEqual([]);
  });
});

describe("a view's header, read alone", () => {
  it('property: the genesis it names is the one the whole text names, for any bytes', () => {
    const G = `sha256:${'ab'.repeat(32)}`;
    const line = fc.oneof(fc.constantFrom('', '# HANDOFF', `<!-- ledger-view genesis ${G} -->`, `# ledger-view genesis ${G}`, '<!-- x -->', '# c', 'text'), fc.string({ unit: 'binary', maxLength: 12 }));
    fc.assert(fc.property(fc.array(line, { maxLength: 20, size: 'max' }), fc.uint8Array({ maxLength: 6 }), (lines, junk) => {
      const bytes = Buffer.concat([Buffer.from(lines.join('\n'), 'utf8'), Buffer.from(junk)]);
      expect(viewGenesis(headerText(bytes))).toBe(viewGenesis(bytes.toString('utf8')));
    }), { numRuns: runs(300, 10_000) });
  });
});
