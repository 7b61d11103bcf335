// `ledger resume SLUG` inside a real scratch git repository: owner and lease, the latest
// checkpoint, the trail, the evidence that changed since that checkpoint, and branch, changed
// files and the last three commits, in at most 80 lines.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keep, runLedger, scratch, spawnLedgerSync } from '../helpers/cli.js';
import { ok, project, type Project } from './helpers.js';
import { excerptWithin } from '../../src/handoff/excerpt.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
}

/**
 * A repository of four commits with a ledger, an item owned by codex and a failing checkpoint
 * with evidence; after it the evidence file changes and a file appears. Built once (git and the
 * checkpoint's test run are most of this file's CPU), put back before each test (`keep`). The
 * per-user state directory lives in the folder, so each test's writes start from the same marks.
 */
const gitProject = keep(async () => {
  const { dir: root } = scratch();
  const dir = join(root, 'project');
  const env = { LEDGER_STATE_DIR: join(root, 'state') };
  const run = (...args: string[]) => runLedger(args, { cwd: dir, env });
  mkdirSync(join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'trunk');
  writeFileSync(join(dir, '.gitignore'), '.ledger/\nkeys/\nHANDOFF.*\n');
  for (const [i, subject] of ['one: scaffold', 'two: parser', 'three: tz helper', 'four: failing tz tests'].entries()) {
    writeFileSync(join(dir, 'src', 'tz.ts'), `export const v = ${i};\n`);
    writeFileSync(join(dir, 'README'), 'readme\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', subject);
  }
  expect((await run('init')).code).toBe(0);
  const start = await run('start', 'fix-tz', '--agent', 'codex', '--summary', 'fix toLocal() for negative offsets');
  expect(start.code, start.stderr).toBe(0);
  const cp = await run('checkpoint', 'fix-tz', '--agent', 'codex', '--done', 'found the off-by-one in toLocal()',
    '--state', 'parser verified; tz helper still fails 2 tests', '--next', 'fix toLocal() for -05:00',
    '--verified', 'parser round-trips', '--attempted', 'DST handling', '--blocker', 'tzdata missing in CI',
    '--evidence', 'tz=src/tz.ts', '--evidence', 'readme=README', '--tests-cmd', 'echo "14 pass"; echo "2 fail"; exit 1');
  expect(cp.code, cp.stderr).toBe(0);
  // after the checkpoint: the evidence file changes, and a file appears
  writeFileSync(join(dir, 'src', 'tz.ts'), 'export const v = 99;\n');
  writeFileSync(join(dir, 'notes.txt'), 'scratch\n');
  return { root, dir, env };
});

describe('in a git repository', () => {
  let dir: string;
  let env: Record<string, string>;
  const run = (...args: string[]) => runLedger(args, { cwd: dir, env });

  beforeEach(async () => {
    ({ dir, env } = await gitProject());
  });

  it('shows owner, lease, the latest checkpoint, the trail, changed evidence and git', async () => {
    const r = await run('resume', 'fix-tz');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^fix-tz: open, owned by codex \(execution codex-1\), lease live until \S+Z \(\d+m left\)$/);
    // SPEC 12: record text quoted, after whose words they are.
    expect(r.stdout).toContain('  done: "found the off-by-one in toLocal()"');
    expect(r.stdout).toContain('  state: "parser verified; tz helper still fails 2 tests"');
    expect(r.stdout).toContain('  verified:\n    - "parser round-trips"');
    expect(r.stdout).toContain('  attempted, not verified:\n    - "DST handling"');
    expect(r.stdout).toContain('  blockers:\n    - "tzdata missing in CI"');
    expect(r.stdout).toContain('`echo "14 pass"; echo "2 fail"; exit 1` exit 1');
    expect(r.stdout).toContain('    | 14 pass\n    | 2 fail');
    expect(r.stdout).toContain('  next: "fix toLocal() for -05:00"');
    expect(r.stdout).toMatch(/trail \(newest first\):\n {2}\S+Z codex start fix-tz: fix toLocal\(\) for negative offsets/);
    expect(r.stdout).toContain('1 changed, 0 gone, 1 unchanged, 0 not re-checkable');
    expect(r.stdout).toContain('  changed tz (file:src/tz.ts): was sha256:');
    expect(r.stdout).toContain('git: branch trunk, 2 changed files');
    const commits = lines.slice(lines.findIndex((l) => l.startsWith('git: ')) + 1);
    expect(commits.map((l) => l.replace(/^ {2}[0-9a-f]+ /, ''))).toEqual(['four: failing tz tests', 'three: tz helper', 'two: parser']);
  });

  it('--json gives the same facts as one object', async () => {
    const r = await run('resume', 'fix-tz', '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ slug: 'fix-tz', status: 'open', owner: 'codex', execution_id: 'codex-1', lease: { live: true } });
    expect(j.latest).toMatchObject({ kind: 'checkpoint', next: 'fix toLocal() for -05:00', tests: { exit_code: 1, excerpt: '14 pass\n2 fail' } });
    expect(j.evidence.changed.map((c: { name: string }) => c.name)).toEqual(['tz']);
    expect(j.evidence.unchanged).toEqual(['readme']);
    expect(j.git.branch).toBe('trunk');
    expect(j.git.changed_files).toBe(2);
    expect(j.git.last_commits.map((c: { subject: string }) => c.subject)).toEqual(['four: failing tz tests', 'three: tz helper', 'two: parser']);
  });

  it('names a detached HEAD as such', async () => {
    git(dir, 'checkout', '-q', '--detach', 'HEAD');
    const j = JSON.parse((await run('resume', 'fix-tz', '--json')).stdout);
    expect(j.git.branch).toMatch(/^\(detached at [0-9a-f]+\)$/);
    expect(j.git.last_commits[0].subject).toBe('four: failing tz tests');
  });

  it('stays within 80 lines however much a checkpoint says', async () => {
    const many = (flag: string, n: number) => Array.from({ length: n }, (_, i) => [flag, `${flag.slice(2)} item ${i}`]).flat();
    const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const cp = await run('checkpoint', 'fix-tz', '--agent', 'codex', '--done', long, '--state', long, '--next', long,
      ...many('--verified', 64), ...many('--attempted', 64), ...many('--blocker', 64),
      '--tests-cmd', 'i=0; while [ $i -lt 500 ]; do echo "test $i"; i=$((i+1)); done; exit 1');
    expect(cp.code, cp.stderr).toBe(0);
    for (let i = 0; i < 8; i++) expect((await run('checkpoint', 'fix-tz', '--agent', 'codex', '--done', long, '--state', 's', '--next', 'n')).code).toBe(0);
    const r = await run('resume', 'fix-tz');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(80);
    // still the essentials: owner, the next action, the trail and git
    expect(lines[0]).toContain('owned by codex');
    expect(r.stdout).toMatch(/^ {2}next:/m);
    expect(r.stdout).toContain('trail (newest first):');
    expect(r.stdout).toContain('git: branch trunk');
  });
});

describe('outside a git repository', () => {
  let p: Project;
  beforeEach(async () => {
    p = await project();
  });
  afterEach(() => p.cleanup());

  it('says so, and still shows the item', async () => {
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    const r = await p.run('resume', 'fix-tz');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('latest checkpoint: none yet');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('git: not a git work tree');
  });

  it('refuses an unknown slug with exit 2', async () => {
    const r = await p.run('resume', 'nope', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_NOT_FOUND');
  });
});

// A jest failure as it ends a real run: the failing test, its assertion and diff, the code frame,
// then eighteen stack frames, then the summary. 40 lines, the excerpt's own limit.
const JEST_FAILURE = [
  ' FAIL  src/time.test.ts',
  '  toLocal',
  '    ✓ keeps UTC (3 ms)',
  '    ✕ keeps the offset for -05:00 (5 ms)',
  '',
  '  ● toLocal › keeps the offset for -05:00',
  '',
  '    expect(received).toBe(expected) // Object.is equality',
  '',
  '    Expected: "06:00"',
  '    Received: "07:00"',
  '',
  '      10 |   it(\'keeps the offset for -05:00\', () => {',
  "      11 |     const d = new Date('2024-03-31T11:00:00Z');",
  "    > 12 |     expect(toLocal(d, '-05:00')).toBe('06:00');",
  '         |                                  ^',
  '      13 |   });',
  '',
  ...Array.from({ length: 18 }, (_, i) => `      at ${['Object.<anonymous>', 'Promise.then.completed', 'new Promise', 'callAsyncCircusFn', '_callCircusTest', 'processTicksAndRejections'][i % 6]} (${i === 0 ? 'src/time.test.ts:12:34' : `node_modules/jest-circus/build/utils.js:${100 + i}:28`})`),
  '',
  'Test Suites: 1 failed, 1 total',
  'Tests:       1 failed, 1 passed, 2 total',
  'Time:        0.412 s',
].join('\n');

describe("when a failing test's output is cut to fit the 80 lines", () => {
  let p: Project;
  beforeEach(async () => {
    p = await project();
  });
  afterEach(() => p.cleanup());

  it('keeps the assertion, the diff and the summary over stack frames, and uses the lines left', async () => {
    expect(JEST_FAILURE.split('\n')).toHaveLength(40);
    const seven = (what: string) => Array.from({ length: 7 }, (_, i) => `${what} line ${i}`).join('\n');
    const many = (flag: string) => Array.from({ length: 8 }, (_, i) => [flag, `${flag.slice(2)} ${i}`]).flat();
    await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', '--done', seven('done'), '--state', seven('state'), '--next', 'fix toLocal() for -05:00',
      ...many('--verified'), ...many('--attempted'), ...many('--blocker'), '--tests', JEST_FAILURE);
    const r = await p.run('resume', 'fix-tz');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(80);
    expect(lines.length).toBeGreaterThanOrEqual(78); // the budget is used, not left idle
    const shown = lines.filter((l) => l.startsWith('    | ')).map((l) => l.slice(6));
    expect(shown.length).toBeLessThan(40); // it was cut ...
    for (const line of ['  ● toLocal › keeps the offset for -05:00', '    Expected: "06:00"', '    Received: "07:00"', '    expect(received).toBe(expected) // Object.is equality',
      "    > 12 |     expect(toLocal(d, '-05:00')).toBe('06:00');", 'Tests:       1 failed, 1 passed, 2 total', '    ✕ keeps the offset for -05:00 (5 ms)']) {
      expect(shown).toContain(line); // ... but not here
    }
    expect(shown.filter((l) => /^\s+at /.test(l)).length).toBeLessThan(18);
    expect(shown.some((l) => /^… \(\d+ stack frame lines left out\)$/.test(l))).toBe(true);
    // what was kept is in the output's order
    expect(shown.indexOf('    Expected: "06:00"')).toBeLessThan(shown.indexOf('Tests:       1 failed, 1 passed, 2 total'));
  });

  it('shows all of an excerpt that fits, untouched', () => {
    const lines = JEST_FAILURE.split('\n');
    expect(excerptWithin(lines, 40)).toEqual(lines);
    expect(excerptWithin(lines, 80)).toEqual(lines);
  });

  it('within any budget: never more lines than the budget, failures before frames, gaps marked', () => {
    const lines = JEST_FAILURE.split('\n');
    for (let budget = 0; budget < 40; budget++) {
      const out = excerptWithin(lines, budget);
      expect(out.length, `budget ${budget}`).toBeLessThanOrEqual(budget);
      if (budget >= 3) expect(out.length, `budget ${budget}`).toBeGreaterThanOrEqual(budget - 1);
      const frames = out.filter((l) => /^\s+at /.test(l)).length;
      if (frames > 0) expect(out, `budget ${budget}`).toContain('    Received: "07:00"');
      for (const l of out) expect(lines.includes(l) || /^… \(\d+ (stack frame )?lines? left out\)$/.test(l) || /^… \(\d+ earlier lines\)$/.test(l), l).toBe(true);
    }
  });
});

/** A git repository of one commit at `dir` (made), with a ledger and one item `slug` started by codex. */
async function oneCommitProject(dir: string, branch: string, slug: string): Promise<void> {
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', branch);
  writeFileSync(join(dir, '.gitignore'), '.ledger/\nkeys/\nHANDOFF.*\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'only commit');
  expect((await runLedger(['init'], { cwd: dir })).code).toBe(0);
  expect((await runLedger(['start', slug, '--agent', 'codex', '--summary', `the item ${slug}`], { cwd: dir })).code).toBe(0);
}

describe('when git is asked', () => {
  it('only for a known item: an unknown slug is refused first, no git process is started', async () => {
    const s = scratch();
    try {
      const dir = join(s.dir, 'project');
      await oneCommitProject(dir, 'main', 'known');
      // A git on PATH that writes down each run, then runs the real one (the built binary, a
      // process of its own: git's environment is the process's).
      const bin = join(s.dir, 'bin');
      const calls = join(s.dir, 'git-calls');
      mkdirSync(bin);
      const realGit = execFileSync('/bin/sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
      const env = { PATH: `${bin}:${process.env.PATH}` };
      const unknown = spawnLedgerSync(['resume', 'unknwn', '--json'], { cwd: dir, env });
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain('unknwn');
      expect(existsSync(calls)).toBe(false);
      const known = spawnLedgerSync(['resume', 'known', '--json'], { cwd: dir, env });
      expect(known.code, known.stderr).toBe(0);
      expect((JSON.parse(known.stdout) as { git: { branch: string } }).git.branch).toBe('main');
      expect(existsSync(calls)).toBe(true);
    } finally {
      s.cleanup();
    }
  });
});

describe('in a git repository whose folder name holds shell syntax', () => {
  it('git is asked about that folder (the name reaches the shell as an argument, never as script)', async () => {
    const s = scratch();
    try {
      const dir = join(s.dir, `it's $(touch PWNED) "a b" \`x\``);
      await oneCommitProject(dir, 'odd', 'odd');
      const r = await runLedger(['resume', 'odd', '--json'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as { git: { branch: string; last_commits: { subject: string }[] } };
      expect(j.git.branch).toBe('odd');
      expect(j.git.last_commits.map((c) => c.subject)).toEqual(['only commit']);
      expect(existsSync(join(s.dir, 'PWNED'))).toBe(false);
      expect(existsSync(join(dir, 'PWNED'))).toBe(false);
      expect(existsSync(join(process.cwd(), 'PWNED'))).toBe(false);
    } finally {
      s.cleanup();
    }
  });
});
