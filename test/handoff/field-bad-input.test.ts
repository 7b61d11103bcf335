// The bad-input table of issue 26's flags and names: --tests-cwd, append --ids, a batch payload
// with several problems, a mistyped slug, the old owner of an item taken over and finished. Each
// row exits with its documented code and error code, prints one line on stderr, and leaves
// records.jsonl, HEAD, HANDOFF.md and HANDOFF.yml byte-identical. In a real git repository.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CP, ok, type Project } from './helpers.js';
import { gitProject, refusedUnchanged, snapshotAll } from './git-project.js';
import { runLedger } from '../helpers/cli.js';

let p: Project;
beforeAll(async () => {
  p = await gitProject();
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
  await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
  // dist-tests: claude's, taken over by codex (forced, with a reason) and finished by codex.
  await ok(p, 'start', 'dist-tests', '--agent', 'claude', '--summary', 'dist tests');
  await ok(p, 'start', 'dist-tests', '--agent', 'codex', '--summary', 'take it', '--takeover', '--force', '--reason', 'claude hit its usage limit');
  await ok(p, 'finish', 'dist-tests', '--agent', 'codex', ...CP, '--invariant', 'tests=ok');
  writeFileSync(join(p.dir, 'a-file'), 'x');
});
afterAll(() => p.cleanup());

const CHECKPOINT = ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP];

// [what the user did, argv, exit code, error code, a phrase of the one-line reason]
const ROWS: [string, string[], number, string, RegExp][] = [
  ['--tests-cwd without --tests-cmd', [...CHECKPOINT, '--tests-cwd', '.'], 2, 'USAGE', /--tests-cwd applies only with --tests-cmd/],
  ['--tests-cwd with --tests TEXT', [...CHECKPOINT, '--tests', '14 pass', '--tests-cwd', '.'], 2, 'USAGE', /--tests-cwd applies only with --tests-cmd/],
  ['--tests-cwd empty', [...CHECKPOINT, '--tests-cmd', 'true', '--tests-cwd', ''], 2, 'USAGE', /--tests-cwd needs a value/],
  ['--tests-cwd twice', [...CHECKPOINT, '--tests-cmd', 'true', '--tests-cwd', '.', '--tests-cwd', '.'], 2, 'USAGE', /given 2 times/],
  ['--tests-cwd that does not exist', [...CHECKPOINT, '--tests-cmd', 'true', '--tests-cwd', 'no-such-dir'], 2, 'USAGE', /--tests-cwd .*no-such-dir is not a directory; nothing was run or recorded/],
  ['--tests-cwd naming a file', [...CHECKPOINT, '--tests-cmd', 'true', '--tests-cwd', 'a-file'], 2, 'USAGE', /a-file is not a directory/],
  ['append --ids without --batch', ['append', 'handoff', '--agent', 'ci', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--ids'], 2, 'USAGE', /--ids applies only with --batch/],
  ['a checkpoint of a mistyped slug', ['checkpoint', 'fix-zt', '--agent', 'claude', ...CP], 2, 'INPUT_NOT_FOUND', /no work item fix-zt in this ledger; did you mean `fix-tz`\? `ledger status` lists the open items\n$/],
  ['a finish of a mistyped slug', ['finish', 'dst-tests', '--agent', 'codex', ...CP], 2, 'INPUT_NOT_FOUND', /did you mean `dist-tests`\?/],
  ['a release of a mistyped slug', ['release', 'fix-t', '--agent', 'claude'], 2, 'INPUT_NOT_FOUND', /did you mean `fix-tz`\?/],
  ['a note on a mistyped slug', ['note', 'dst-tests', '--agent', 'reviewer', '--text', 'hi'], 2, 'INPUT_NOT_FOUND', /did you mean `dist-tests`\?/],
  ['a resume of a mistyped slug', ['resume', 'fixtz'], 2, 'INPUT_NOT_FOUND', /did you mean `fix-tz`\?/],
  ['a start a typo away from an open item', ['start', 'fix-zt', '--agent', 'codex', '--summary', 's'], 2, 'INPUT_REFUSED',
    /^ledger: no work item fix-zt in this ledger; did you mean `fix-tz`\?; `ledger resume fix-tz` shows it; to start fix-zt as a new item anyway, add --new-item\n$/],
  ['a start with --new-item and --takeover', ['start', 'fix-zt', '--agent', 'codex', '--summary', 's', '--new-item', '--takeover'], 2, 'USAGE', /--new-item starts an item the ledger does not hold and --takeover takes one it does; pass one/],
  ['a checkpoint of a slug far from every other', ['checkpoint', 'zzzzzz', '--agent', 'claude', ...CP], 2, 'INPUT_NOT_FOUND', /take it first: `ledger start zzzzzz/],
  ['the old owner checkpoints an item taken over and finished', ['checkpoint', 'dist-tests', '--agent', 'claude', ...CP], 2, 'INPUT_REFUSED',
    /work item dist-tests was finished \(success\) by codex at \S+ \(seq \d+\) \(your execution claude-\d+ was taken over by codex at \S+ while its lease was live: "claude hit its usage limit"\); a checkpoint needs an open item; read `ledger resume dist-tests` for what codex did; the item is not yours to reopen\n$/],
];

describe('issue 26: bad input to the new flags and names', () => {
  it.each(ROWS)('%s: %j exits %i, %s, nothing changed', async (_what, args, exit, code, phrase) => {
    const r = await refusedUnchanged(p, args, exit, code);
    expect(r.stderr).toMatch(phrase);
    // Never an offer to start, or reopen, an item a typo away from one that exists.
    if (code !== 'INPUT_NOT_FOUND' || /did you mean/.test(r.stderr)) expect(r.stderr).not.toMatch(/ledger start (?!--help)|reopens/);
  });
});

describe('append --batch: a bad payload names every problem; a good batch prints a summary', () => {
  const handoff = (exec: string, extra: Record<string, unknown> = {}) => JSON.stringify({ kind: 'handoff', logical_operation_id: 'deploy', execution_id: exec, outcome: 'success', evidence: {}, invariants: {}, depends_on: [], ...extra });

  it('lists all three problems of one payload, and the other bad lines, in one line; appends nothing', async () => {
    const before = snapshotAll(p);
    const stdin = [handoff('e1'), handoff('e2', { outcome: 'done', invariants: { tests: 'ok' }, depends_on: 'x' }), handoff('e3', { outcome: 'nope' })].join('\n') + '\n';
    const r = await runLedger(['append', '--batch', '--agent', 'ci', '--json'], { cwd: p.dir, stdin });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_SCHEMA');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^ledger: stdin line 2: 3 problems: \$\.outcome[^;]*; \$\.invariants\.tests[^;]*; \$\.depends_on[^;]* \(and 1 more bad payload: line 3\); nothing was appended; see `ledger append --help` for the payload format\n$/);
    expect(snapshotAll(p)).toEqual(before);
  });

  it('prints a summary by default, the ids with --ids, and both in --json', async () => {
    const text = await runLedger(['append', '--batch', '--agent', 'ci'], { cwd: p.dir, stdin: `${handoff('b1')}\n${handoff('b2')}\n` });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^appended 2 records: seq (\d+)-(\d+), HEAD sha256:[0-9a-f]{64}\n$/);
    const ids = await runLedger(['append', '--batch', '--agent', 'ci', '--ids'], { cwd: p.dir, stdin: `${handoff('b3')}\n${handoff('b4')}\n` });
    expect(ids.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/), expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    const again = await runLedger(['append', '--batch', '--agent', 'ci', '--json'], { cwd: p.dir, stdin: `${handoff('b3')}\n${handoff('b5')}\n` });
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, count: 2, appended: 1, existing: 1, ids: [ids.stdout.split('\n')[0], expect.any(String)] });
  });

  it('the payload format is in the help', async () => {
    const h = await runLedger(['append', '--help'], { cwd: p.dir });
    expect(h.stdout).toContain('"kind":"handoff","logical_operation_id":OP');
    expect(h.stdout).toContain('--ids');
  });
});

describe('gate: an operation id the ledger has never seen', () => {
  it('holds, and names the nearest operation when one is close', async () => {
    const r = await runLedger(['gate', 'dst-tests'], { cwd: p.dir });
    expect(r.code).toBe(20);
    expect(r.stderr).toContain('ledger: dst-tests has no records in this ledger; did you mean `dist-tests`?');
  });
});

describe('start: a slug a typo away from an open item (issue 26.4)', () => {
  it('is started with --new-item; numbered siblings and a slug that extends another by a word need none', async () => {
    const started = await ok(p, 'start', 'fix-zt', '--agent', 'codex', '--summary', 'really another item', '--new-item');
    expect(started.slug).toBe('fix-zt');
    await ok(p, 'start', 'task-17', '--agent', 'codex', '--summary', 'one of a series');
    await ok(p, 'start', 'task-18', '--agent', 'codex', '--summary', 'the next of the series');
    await ok(p, 'start', 'fix-tz-ui', '--agent', 'codex', '--summary', 'a part of fix-tz');
    // A finished item is not open: a slug near it is started as asked.
    await ok(p, 'start', 'dist-test', '--agent', 'codex', '--summary', 'near a finished item');
  });
});
