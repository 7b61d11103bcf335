// issue 14 item 12, SPEC 10 `ledger note SLUG --text TEXT`: anyone (a reviewer, a person) adds a
// note to a work item. It takes no ownership and renews no lease; the views and resume show it.
// Policy: the item must exist (open or finished). Texts are counted in characters (code points).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CP, ok, records, workLog, type Project } from './helpers.js';
import { gitProject, refusedUnchanged } from './git-project.js';

let p: Project;
beforeEach(async () => {
  p = await gitProject();
});
afterEach(() => p.cleanup());

const md = () => readFileSync(join(p.dir, 'HANDOFF.md'), 'utf8');
const yml = () => parse(readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8'));
const REVIEW = 'the -05:00 fix must not change UTC output; add a test for +00:00';
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a reviewer adds a note', () => {
  beforeEach(async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'sh tz.test.sh');
  });

  it('records it under the reviewer\'s name, and claude still owns the item with the same lease', async () => {
    const before = workLog(p).items.get('fix-tz')!;
    const res = await ok(p, 'note', 'fix-tz', '--agent', 'reviewer', '--text', REVIEW);
    expect(res).toMatchObject({ ok: true, kind: 'note', slug: 'fix-tz' });
    expect(records(p).at(-1)).toMatchObject({ kind: 'note', agent: 'reviewer', logical_operation_id: 'fix-tz', text: REVIEW });
    const after = workLog(p).items.get('fix-tz')!;
    expect([after.owner, after.execution_id, after.lease_until]).toEqual([before.owner, before.execution_id, before.lease_until]);
    expect(after.notes.map((n) => [n.agent, n.text])).toEqual([['reviewer', REVIEW]]);
    // claude's checkpoint is not disturbed by it
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
  });

  it('a note by the owner renews no lease either', async () => {
    const lease = workLog(p).items.get('fix-tz')!.lease_until;
    await ok(p, 'note', 'fix-tz', '--agent', 'claude', '--text', 'reminder to self');
    expect(workLog(p).items.get('fix-tz')!.lease_until).toBe(lease);
  });

  it('shows it in HANDOFF.md\'s log, HANDOFF.yml\'s active item, and resume', async () => {
    await ok(p, 'note', 'fix-tz', '--agent', 'reviewer', '--text', REVIEW);
    expect(md()).toMatch(/### \S+ · reviewer · note · fix-tz\n\n- \*\*Record:\*\* seq 3, sha256:\S+…\n- \*\*Note:\*\* the -05\\:00 fix must not change UTC output; add a test for \+00\\:00\n/);
    expect(md()).toContain('- 1 note in the log below');
    // newest first: the note comes before claude's checkpoint in the log
    expect(md().indexOf('· reviewer · note ·')).toBeGreaterThan(0);
    expect(md().indexOf('· reviewer · note ·')).toBeLessThan(md().indexOf('· claude · checkpoint ·'));
    expect(yml().active[0].notes).toEqual([expect.stringMatching(new RegExp(`^\\S+ note by reviewer: ${esc(REVIEW)}$`))]);
    const r = await p.run('resume', 'fix-tz');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`notes \\(1\\):\\n  \\S+ reviewer: "${esc(REVIEW)}"\\n`));
    // the views are a pure function of the ledger, these records included
    expect((await p.run('render', '--check')).code).toBe(0);
  });

  it('resume shows at most the last five notes, with the count', async () => {
    for (let i = 1; i <= 7; i++) await ok(p, 'note', 'fix-tz', '--agent', 'reviewer', '--text', `remark ${i}`);
    const r = await p.run('resume', 'fix-tz', '--json');
    const report = JSON.parse(r.stdout);
    expect(report.notes.count).toBe(7);
    expect(report.notes.latest.map((n: { text: string }) => n.text)).toEqual(['remark 3', 'remark 4', 'remark 5', 'remark 6', 'remark 7']);
    const text = (await p.run('resume', 'fix-tz')).stdout;
    expect(text).toContain('notes (7, the last 5):');
    expect(text).not.toContain('remark 2');
  });
});

describe('notes on items that are not open, and texts measured in characters', () => {
  it('Policy: a finished item takes notes (a review after the fact); a slug never started is refused', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    await ok(p, 'finish', 'fix-tz', '--agent', 'claude', ...CP);
    await ok(p, 'note', 'fix-tz', '--agent', 'reviewer', '--text', 'reviewed after merge: fine');
    expect(workLog(p).items.get('fix-tz')!.status).toBe('finished');
    const r = await refusedUnchanged(p, ['note', 'fix-tx', '--agent', 'reviewer', '--text', 'typo in the slug'], 2, 'INPUT_NOT_FOUND');
    expect(r.stderr).toContain('no work item fix-tx in this ledger');
  });

  it('takes 4096 characters of astral text (8192 UTF-16 units) and refuses 4097', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 's');
    await ok(p, 'note', 'fix-tz', '--agent', 'reviewer', '--text', '🦀'.repeat(4096));
    const r = await refusedUnchanged(p, ['note', 'fix-tz', '--agent', 'reviewer', '--text', '🦀'.repeat(4097)], 2, 'USAGE');
    expect(r.stderr).toContain('--text is 4097 characters; at most 4096');
  });
});
