// The excerpt keeps the failure (issue 26, item 7), for each runner's real output shape: the
// failing lines and the summary first, then the tail, never frames alone; and the exit codes and
// words that mean nothing was tested (item 2).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXCERPT_CHARS, EXCERPT_LINES, excerptOf, excerptWithin } from '../../src/handoff/excerpt.js';
import { nothingTested } from '../../src/handoff/runner-output.js';
import { charCount } from '../../src/record.js';
import { runs } from '../helpers/runs.js';

const frames = (n: number, indent = '    ') => Array.from({ length: n }, (_, i) => `${indent}at fn${i} (file:///app/node_modules/lib/x.js:${i + 1}:5)`);
const passing = (n: number, mark: (i: number) => string) => Array.from({ length: n }, (_, i) => mark(i));

interface Case { runner: string; lines: string[]; must: string[] }

const CASES: Case[] = [
  {
    runner: 'TAP',
    lines: [
      'TAP version 13', ...passing(20, (i) => `ok ${i + 1} - passes ${i}`),
      'not ok 21 - toLocal keeps -05:00', '  ---', '  operator: equal', '  expected: \'10:00-05:00\'', '  actual: \'15:00Z\'', '  stack: |-', ...frames(60, '    '), '  ...',
      '1..21', '# tests 21', '# pass 20', '# fail 1',
    ],
    must: ['not ok 21 - toLocal keeps -05:00', "  expected: '10:00-05:00'", "  actual: '15:00Z'", '# fail 1'],
  },
  {
    runner: 'node --test (spec)',
    lines: [
      ...passing(10, (i) => `\u2714 passes ${i} (0.5ms)`),
      '\u2716 first failing test (1.2ms)', '  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:', ...frames(30),
      '\u2716 second failing test with a long name that must not be cut (0.9ms)', '  AssertionError [ERR_ASSERTION]: 1 !== 2', ...frames(30),
      '\u2139 tests 12', '\u2139 suites 0', '\u2139 pass 10', '\u2139 fail 2', '\u2139 cancelled 0', '\u2139 duration_ms 51',
    ],
    must: ['\u2716 first failing test (1.2ms)', '\u2716 second failing test with a long name that must not be cut (0.9ms)', '\u2139 fail 2'],
  },
  {
    runner: 'pytest',
    lines: [
      '..........F.F.....', '=================================== FAILURES ===================================', '_________________________________ test_to_local _________________________________',
      '', '    def test_to_local():', '>       assert to_local("10:00", -5) == "05:00"', 'E       AssertionError: assert \'10:00\' == \'05:00\'', 'E         - 05:00', 'E         + 10:00',
      ...passing(50, (i) => `tests/test_tz.py:${i}: in helper_${i}`),
      '=========================== short test summary info ============================', 'FAILED tests/test_tz.py::test_to_local - AssertionError: assert \'10:00\' == \'05:00\'', 'FAILED tests/test_tz.py::test_dst - assert 1 == 2',
      ...passing(30, (i) => `warning line ${i}`),
      '2 failed, 16 passed in 0.12s',
    ],
    must: ['E       AssertionError: assert \'10:00\' == \'05:00\'', 'FAILED tests/test_tz.py::test_to_local - AssertionError: assert \'10:00\' == \'05:00\'', 'FAILED tests/test_tz.py::test_dst - assert 1 == 2', '2 failed, 16 passed in 0.12s'],
  },
  {
    runner: 'jest',
    lines: [
      'FAIL src/tz.test.js', '  toLocal', '    \u2715 keeps the offset (3 ms)', '', '  \u25CF toLocal \u203A keeps the offset', '', '    expect(received).toBe(expected) // Object.is equality', '', '    Expected: "05:00"', '    Received: "10:00"',
      ...frames(50),
      'Test Suites: 1 failed, 1 total', 'Tests:       1 failed, 14 passed, 15 total', 'Snapshots:   0 total', 'Time:        0.5 s',
    ],
    must: ['  \u25CF toLocal \u203A keeps the offset', '    Expected: "05:00"', '    Received: "10:00"', 'Tests:       1 failed, 14 passed, 15 total'],
  },
  {
    runner: 'go test',
    lines: [
      '=== RUN   TestToLocal', '--- FAIL: TestToLocal (0.00s)', '    tz_test.go:12: toLocal("10:00", -5) = "10:00", want "05:00"',
      ...passing(60, (i) => `=== RUN   TestOther${i}\n--- PASS: TestOther${i} (0.00s)`).flatMap((l) => l.split('\n')),
      'FAIL', 'FAIL\texample.com/tz\t0.004s',
    ],
    must: ['--- FAIL: TestToLocal (0.00s)', '    tz_test.go:12: toLocal("10:00", -5) = "10:00", want "05:00"', 'FAIL\texample.com/tz\t0.004s'],
  },
  {
    runner: 'cargo test',
    lines: [
      'running 16 tests', ...passing(15, (i) => `test tests::ok_${i} ... ok`), 'test tests::to_local ... FAILED', '', 'failures:', '', '---- tests::to_local stdout ----',
      "thread 'tests::to_local' panicked at src/lib.rs:10:5:", 'assertion `left == right` failed', '  left: "10:00"', ' right: "05:00"', 'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace',
      ...passing(40, (i) => `   ${i}: std::rt::lang_start_internal::h${i}`), '', 'failures:', '    tests::to_local', '',
      'test result: FAILED. 15 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
    ],
    must: ["thread 'tests::to_local' panicked at src/lib.rs:10:5:", '  left: "10:00"', ' right: "05:00"', 'test result: FAILED. 15 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s'],
  },
];

describe('the excerpt keeps the failure, for each runner', () => {
  it.each(CASES)('$runner: the failing lines and the summary are kept, within the bounds, then the tail', ({ lines, must }) => {
    const text = lines.join('\n') + '\n';
    const out = excerptOf(Buffer.from(text), false).split('\n');
    for (const line of must) expect(out, line).toContain(line);
    expect(out.length).toBeLessThanOrEqual(EXCERPT_LINES);
    // The last line of the output is always there: the tail follows.
    expect(out.at(-1)).toBe(lines.at(-1));
    // The failure comes before the tail, in the order of the output.
    expect(out.indexOf(must[0])).toBeLessThan(out.length - 1);
  });

  it('output with no failure keeps its last 40 lines, as it always did', () => {
    const lines = passing(100, (i) => `ok ${i + 1} - passes`);
    expect(excerptOf(Buffer.from(lines.join('\n')), false).split('\n')).toEqual(lines.slice(-40));
  });

  it('says how many lines were left out between the failures and the tail', () => {
    const out = excerptOf(Buffer.from(CASES[0].lines.join('\n')), false).split('\n');
    expect(out.find((l) => l.startsWith('\u2026 ('))).toMatch(/^\u2026 \(\d+ lines left out; the output ends:\)$/);
  });

  // Any mix of the runners' failure, reason, frame and summary lines with other text, lines
  // longer than the whole bound included.
  const anyLine = fc.oneof(
    fc.constantFrom('not ok 3 - adds', '  expected: 3', '  actual: 4', '    at f (x.js:1:2)', '', '# tests 5', '# fail 1', 'FAILED t.py::x', 'E   assert 1 == 2', '--- FAIL: TestX (0.00s)', 'ok 1 - y', '\u25CF Suite \u203A t', 'Tests: 1 failed', 'x'.repeat(9000)),
    fc.string({ maxLength: 120 }),
  );

  it('property: at most 40 lines and 8192 characters, and the first failing test is kept when the output is short', () => {
    fc.assert(
      fc.property(fc.array(anyLine, { maxLength: 300, size: 'max' }), fc.boolean(), (lines, cut) => {
        const text = lines.join('\n');
        const out = excerptOf(Buffer.from(text), cut);
        expect(out.split('\n').length).toBeLessThanOrEqual(EXCERPT_LINES);
        expect(charCount(out)).toBeLessThanOrEqual(EXCERPT_CHARS);
        // The first line that names a failing test, whichever runner's: kept (later ones may
        // not be, past FAILURE_LINES).
        const first = lines.findIndex((l) => ['not ok 3 - adds', 'FAILED t.py::x', '--- FAIL: TestX (0.00s)', '\u25CF Suite \u203A t'].includes(l));
        if (!cut && first >= 0 && charCount(text) < 4000) expect(out.split('\n')).toContain(lines[first]);
      }),
      { numRuns: runs(300, 20_000) },
    );
  });

  it('property: read back under a line budget (resume), it never takes more lines than the budget', () => {
    fc.assert(
      fc.property(fc.array(anyLine.map((l) => l.slice(0, 200)), { maxLength: 100, size: 'max' }), fc.integer({ min: 0, max: 50 }), (lines, budget) => {
        expect(excerptWithin(lines, budget).length).toBeLessThanOrEqual(budget);
      }),
      { numRuns: runs(300, 20_000) },
    );
  });
});

describe('nothing was tested', () => {
  const TABLE: [string, number, string, string | null][] = [
    ['pytset -q', 127, 'sh: 1: pytset: not found', 'the command was not found (exit 127)'],
    ['./run-tests', 126, 'sh: ./run-tests: Permission denied', 'the command could not be executed (exit 126)'],
    ['python3 -m pytest -q', 5, '\nno tests ran in 0.01s', 'pytest collected no tests (exit 5)'],
    ['python3 -m pytest --bogus', 4, 'ERROR: usage: pytest [options]', 'pytest was given a usage error (exit 4)'],
    ['make test', 2, '==================== no tests ran in 0.02s ====================', 'pytest collected no tests'],
    ['python3 -m pytest', 2, '=========== short test summary info ===========\nERROR tests/test_x.py\n!!!!! Interrupted: 1 error during collection !!!!!\n', 'the tests could not be collected (exit 2)'],
    ['pytest', 2, 'Interrupted: 1 error during collection', 'the tests could not be collected (exit 2)'],
    ['node --test', 0, '1..0\n# tests 0\n# pass 0', 'the runner ran 0 tests'],
    ['node --test', 0, '\u2139 tests 0\n\u2139 pass 0', 'the runner ran 0 tests'],
    ['npx jest', 1, 'No tests found, exiting with code 1', 'jest found no tests'],
    ['./check', 2, 'usage: check [-v] DIR', 'the command printed its usage (exit 2)'],
    ['python3 -m pytest -q', 1, '2 failed, 14 passed in 0.1s', null],
    ['python3 -m pytest -q', 0, '16 passed in 0.1s', null],
    ['npm test', 0, '# tests 16\n# pass 16', null],
  ];
  it.each(TABLE)('`%s` exit %i: %j -> %j', (command, exit, text, want) => {
    expect(nothingTested(command, exit, text)).toBe(want);
  });
});
