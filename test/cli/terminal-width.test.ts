// Issue 26 item 6: `status` and `resume` fit the terminal they print to. The real binary runs in
// a real pseudo-terminal (util-linux `script`, which allocates one; skipped with the reason when
// the machine has none), sized with `stty cols N`: no line is wider than the terminal, the next
// action is still there (under its row when the table leaves it too little room), digests are
// shortened with a `…`. Through a pipe the lines are whole, as scripts read them.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, initProject, runLedger, withSuiteEnv } from '../helpers/cli.js';

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

const SLUG = 'fix-timezone-in-the-date-parser';
const NEXT = 'write the test for +00:00, then look at the DST transition in March that breaks the parser for users in New York';
const SUMMARY = 'fix toLocal() so that the -05:00 offset does not change the UTC output for users in New York and Toronto';

let project: Awaited<ReturnType<typeof initProject>>;
const env = (agent: string) => ({ LEDGER_AGENT: agent });
beforeAll(async () => {
  project = await initProject();
  const run = async (agent: string, ...args: string[]) => {
    const r = await runLedger(args, { cwd: project.dir, env: env(agent) });
    if (r.code !== 0) throw new Error(r.stderr);
  };
  await run('claude', 'start', SLUG, '--summary', SUMMARY);
  await run('claude', 'checkpoint', SLUG, '--done', 'ran the suite: 14 pass, 2 fail', '--state', '14 pass, 2 fail', '--next', NEXT, '--tests', 'not ok 3 - tz\n14 pass, 2 fail');
  await run('codex', 'start', 'docs-install-for-python-projects', '--summary', 'a global install for projects that are not JavaScript');
});
afterAll(() => project?.cleanup());

/** The CLI in a pseudo-terminal `cols` wide: its lines, the terminal's carriage returns taken off. */
function inTerminal(cols: number, ...args: string[]): string[] {
  const cmd = `stty cols ${cols} rows 200; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args.map((a) => JSON.stringify(a)).join(' ')}`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: project.dir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...withSuiteEnv(env('claude')) }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.replace(/\r/g, '').replace(/\n$/, '').split('\n');
}

const widest = (lines: string[]) => Math.max(...lines.map((l) => [...l].length));
/** The words of the lines as one text (a wrapped line reads back as the line). */
const words = (lines: string[]) => lines.map((l) => l.trim()).join(' ');

describe.skipIf(!hasScript)('in a terminal 80 columns wide (a pseudo-terminal)', () => {
  it('status: no line is wider; the next action moves under its row, a slug too long is cut there and said whole under it', () => {
    const lines = inTerminal(80, 'status');
    expect(widest(lines)).toBeLessThanOrEqual(80);
    expect(lines.find((l) => l.trim().startsWith("ITEM")), lines.join("\n")).toMatch(/^ {2}ITEM +OWNER +LEASE +LAST CHECKPOINT$/);
    const row = lines.findIndex((l) => l.startsWith(`  ${SLUG}  claude (you)`));
    expect(row, lines.join('\n')).toBeGreaterThan(0);
    expect(lines[row + 1]).toMatch(/^ {6}next: "write the test for \+00:00/);
    expect(words(lines)).toContain(`"${NEXT}"`);
    // a slug too long for the table is cut there, and said whole on the line under its row
    const other = lines.findIndex((l) => /^ {2}docs-install-for-python-pro\S*… +codex/.test(l));
    expect(other, lines.join('\n')).toBeGreaterThan(row);
    expect(lines[other + 1]).toMatch(/^ {6}docs-install-for-python-projects: next: \(summary\) "a global install/);
  });

  it('resume: no line is wider, hashes are shortened, every word of the next action is there', () => {
    const lines = inTerminal(80, 'resume', SLUG);
    expect(widest(lines)).toBeLessThanOrEqual(80);
    expect(lines.join('\n')).not.toMatch(/[0-9a-f]{64}/);
    expect(lines.join('\n')).toMatch(/sha256:[0-9a-f]{12}…/);
    expect(words(lines)).toContain(`"${NEXT}"`);
    expect(words(lines)).toContain(`"${SUMMARY}"`);
  });

  it('at 120 columns the next action stays in the table, cut with a `…` to fit', () => {
    const lines = inTerminal(120, 'status');
    expect(widest(lines)).toBeLessThanOrEqual(120);
    expect(lines.find((l) => l.trim().startsWith('ITEM'))).toMatch(/LAST CHECKPOINT +NEXT$/);
    expect(lines.find((l) => l.trim().startsWith(SLUG))).toMatch(/"write the test for \+00:00.*…"$/);
    expect(lines.find((l) => l.trim().startsWith(SLUG))).toMatch(new RegExp(`^ {2}${SLUG} `));
  });
});

describe('through a pipe (not a terminal)', () => {
  it('prints the lines whole: the full digest, the next action in the table', async () => {
    const r = await runLedger(['resume', SLUG], { cwd: project.dir, env: env('claude') });
    expect(r.stdout).toMatch(/sha256:[0-9a-f]{64}/);
    const s = await runLedger(['status'], { cwd: project.dir, env: env('claude') });
    expect(s.stdout).toMatch(/LAST CHECKPOINT +NEXT\n/);
  });
});
