// Issue 14.12, in a real git repository: the views and resume as people read them. A person
// edits HANDOFF.md in an editor and commits it; the next checkpoint must not erase that edit
// without a word: it keeps the edited text beside the view and says so. And `resume` of a
// realistic failing run, with stack frames, spends its 80 lines on the assertion and the diff.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, scenario, statusPaths, type Scenario } from './kit.js';
import { TZ_FILES } from './tz-project.js';

let sc: Scenario;
afterEach(() => sc?.cleanup());

const CP = ['--done', 'ran the suite', '--state', '14 pass, 2 fail on the timezone helper', '--next', 'fix toLocal() for negative offsets'];

describe('when a person edits HANDOFF.md by hand and commits it, and an agent checkpoints next', () => {
  it('keeps the person\'s text beside the view, says so in one line, and rewrites the view from the ledger', () => {
    sc = scenario('tzapp', TZ_FILES);
    sc.ok(['start', 'fix-timezone', '--agent', 'claude', '--summary', 'fix toLocal() for negative offsets']);
    sc.commit('handoff: the views');
    const edited = sc.md().replace('## Open work items', '## Open work items\n\nPERSON: please also check the DST switch on 29 March.\n');
    writeFileSync(join(sc.root, 'HANDOFF.md'), edited);
    const mine = sc.commit('HANDOFF.md: a note for whoever is next');
    // render --check sees the edit and writes nothing
    const check = sc.ledger(['render', '--check']);
    expect(check.code).toBe(30);
    expect(sc.md()).toBe(edited);

    const cp = sc.ledger(['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP]);
    expect(cp.code, cp.stderr).toBe(0);
    const warnings = cp.stderr.trimEnd().split('\n');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^ledger: warning: ${sc.root}/HANDOFF\\.md had been edited by hand; its text is kept in ${sc.root}/HANDOFF\\.md\\.edited-\\S+ and the view was rewritten from the ledger$`));
    const kept = readdirSync(sc.root).filter((f) => f.startsWith('HANDOFF.md.edited-'));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(sc.root, kept[0]), 'utf8')).toBe(edited);
    expect(sc.md()).not.toContain('PERSON:');
    expect(sc.md()).toContain('· checkpoint ·');
    expect(sc.ok(['render', '--check']).ok).toBe(true);
    // git shows both: the view changed against the person's commit, and the kept file is new
    expect(statusPaths(sc.root)).toEqual(expect.arrayContaining(['HANDOFF.md', kept[0]]));
    expect(git(sc.root, 'show', `${mine}:HANDOFF.md`)).toBe(edited);
    // HANDOFF.yml was not edited, so nothing was kept of it
    expect(readdirSync(sc.root).filter((f) => f.startsWith('HANDOFF.yml.edited-'))).toEqual([]);
  });
});

// A jest-like failure: the assertion and its diff at the top, thirty stack frames, the summary.
const JEST = [
  'FAIL test/tz.test.js',
  '  ● toLocal › keeps the sign of a negative offset',
  '',
  '    expect(received).toBe(expected) // Object.is equality',
  '',
  '    Expected: 420',
  '    Received: 1020',
  '',
  ...Array.from({ length: 30 }, (_, i) => `      at frame${i} (node_modules/jest-circus/build/run.js:${100 + i}:7)`),
  '',
  'Tests:       2 failed, 14 passed, 16 total',
].join('\n');

describe('when codex resumes an item whose last run failed with a long stack', () => {
  it('resume keeps the assertion and the diff over the frames, within 80 lines, with everything else it owes', () => {
    sc = scenario('tzapp', { ...TZ_FILES, 'jest-out.txt': JEST + '\n' });
    sc.ok(['start', 'fix-timezone', '--agent', 'claude', '--summary', 'fix toLocal() for negative offsets']);
    for (let i = 1; i <= 5; i++) sc.ok(['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP, '--attempted', `attempt ${i}`, '--tests-cmd', 'echo ok; true']);
    for (let i = 1; i <= 6; i++) sc.ok(['note', 'fix-timezone', '--agent', 'reviewer', '--text', `review note ${i}`]);
    sc.ok(['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP,
      // a thorough checkpoint: resume owes all of this too, so the excerpt gets less room
      ...[1, 2, 3, 4, 5, 6].flatMap((i) => ['--verified', `east of UTC, case ${i}`, '--attempted', `west of UTC, case ${i}`, '--blocker', `blocker ${i}`]),
      '--tests-cmd', 'cat jest-out.txt; exit 1']);
    const r = sc.ledger(['resume', 'fix-timezone']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(80);
    const excerpt = lines.filter((l) => l.startsWith('    | '));
    // the recorded excerpt is 40 lines; resume has less room, and frames go first
    expect(excerpt.length).toBeLessThan(40);
    expect(excerpt).toEqual(expect.arrayContaining([
      '    |   ● toLocal › keeps the sign of a negative offset',
      '    |     Expected: 420',
      '    |     Received: 1020',
      '    | Tests:       2 failed, 14 passed, 16 total',
    ]));
    expect(excerpt.some((l) => /stack frame lines left out\)$/.test(l))).toBe(true);
    // and the rest is still there: owner, notes (the last of six), the next action, git
    expect(lines[0]).toMatch(/^fix-timezone: open, owned by claude/);
    expect(r.stdout).toContain('review note 6');
    expect(lines).toContain('  next: "fix toLocal() for negative offsets"');
    expect(r.stdout).toMatch(/^git: branch main/m);
  });
});
