// What a test runner's output says, read from its text: the lines that name a failure and why,
// the summary line, and whether anything was tested at all. Pure.
//
// Policy (issue 26, items 2 and 7): the runners read are TAP (and `node --test`, whose reporters
// are TAP or "spec"), pytest, jest (and vitest), go test and cargo test; any other output keeps
// the plain tail. A pattern only ever adds lines to keep or words to show: a runner that is not
// recognised loses nothing it had before.
// Written with \u escapes: one non-ASCII character in the CLI bundle makes V8 hold its whole
// source as two-byte text.

/** A line that starts a failure: the test's name, as each runner prints it. */
const FAILURE_HEAD: readonly RegExp[] = [
  /^\s*not ok \d+/, // TAP, node --test (tap)
  /^\s*\u2716 /, // node --test (spec): ✖ name
  /^FAILED \S/, // pytest short summary
  /^_{3,} .+ _{3,}$/, // pytest: ___ test_name ___
  /^\s*\u25CF .+/, // jest: ● Suite › test
  /^\s*(?:\u00D7|\u2717|FAIL) .+/, // vitest ×, jest "FAIL file"
  /^\s*--- FAIL: /, // go
  /^---- \S+ stdout ----$/, // cargo
  /^thread '.*' panicked at /, // cargo, rust
];

/** A line under a failure that says why (kept with it, a few per failure). */
const FAILURE_WHY: readonly RegExp[] = [
  /^\s+(?:message|expected|actual|operator|error|code|failureType|stack):/, // TAP YAML
  /^E\s{2,}\S/, // pytest
  /^>\s+\S/, // pytest: the failing source line
  /^\s*(?:Expected|Received)(?: \w+)*:/, // jest, vitest
  /^\s+\S+\.go:\d+: /, // go: file.go:12: message
  /^\s*(?:left|right): /, // cargo assert_eq
  /^\s*assertion .* failed/, // cargo
  /\b(?:AssertionError|Error|panicked)\b/,
];

/** The line a runner ends with: counts of passed and failed. */
const SUMMARY: readonly RegExp[] = [
  /^# (?:tests|pass|fail|skip|todo|cancelled) \d+$/, // TAP (node --test)
  /^\u2139 (?:tests|pass|fail) \d+$/, // node --test (spec): ℹ tests 16
  /^=*\s*(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?)(?:, )?)+ in [\d.]+s/, // pytest
  /^=+ no tests ran in /, // pytest
  /^\s*Tests:\s+\d/, // jest
  /^\s*Test (?:Files|s)\s+\d/, // vitest
  /^(?:FAIL|ok)\s+\S+\s+[\d.]+s$/, // go: per package
  /^(?:FAIL|PASS)$/, // go
  /^test result: /, // cargo
];

const any = (res: readonly RegExp[], line: string) => res.some((re) => re.test(line));

/** Policy: at most this many lines under one failure, and this many failure lines in all. */
export const WHY_PER_FAILURE = 4;
export const FAILURE_LINES = 20;

/**
 * The lines that name a failure and why, in their order: each head line and up to
 * WHY_PER_FAILURE of the explaining lines in the 30 lines after it (stack frames are never
 * among them), at most FAILURE_LINES in all; and the summary lines (the last three).
 */
export function failureAndSummary(lines: readonly string[]): { failures: number[]; summary: number[] } {
  const failures: number[] = [];
  const kept = new Set<number>();
  for (let i = 0; i < lines.length && failures.length < FAILURE_LINES; i++) {
    if (!any(FAILURE_HEAD, lines[i]) || kept.has(i)) continue;
    failures.push(i);
    kept.add(i);
    let why = 0;
    for (let j = i + 1; j < Math.min(lines.length, i + 30) && why < WHY_PER_FAILURE && failures.length < FAILURE_LINES; j++) {
      if (any(FAILURE_HEAD, lines[j])) break;
      if (/^\s+at\s\S/.test(lines[j])) continue;
      if (any(FAILURE_WHY, lines[j])) {
        failures.push(j);
        kept.add(j);
        why++;
      }
    }
  }
  const summary: number[] = [];
  for (let i = lines.length - 1; i >= 0 && summary.length < 3; i--) if (any(SUMMARY, lines[i]) && !kept.has(i)) summary.unshift(i);
  return { failures, summary };
}

/**
 * Why a run tested nothing, in words, or null. Policy: exit 127 (not found) and 126 (cannot
 * execute) from the shell; pytest's 5 (no tests collected) and 4 (usage error) when the
 * command runs pytest; and, whatever the exit code, a runner's own words: pytest's "no tests
 * ran" or collection errors, TAP's "# tests 0", jest's "No tests found", cargo's "running 0 tests"
 * with nothing else, a usage message.
 */
export function nothingTested(command: string, exitCode: number, text: string): string | null {
  if (exitCode === 127) return 'the command was not found (exit 127)';
  if (exitCode === 126) return 'the command could not be executed (exit 126)';
  const pytest = /\bpytest\b|\bpy\.test\b/.test(command);
  if (pytest && exitCode === 5) return 'pytest collected no tests (exit 5)';
  if (pytest && exitCode === 4) return 'pytest was given a usage error (exit 4)';
  if (/^=+ no tests ran\b/m.test(text)) return 'pytest collected no tests';
  if (/^(?:[=!]+ )?Interrupted: \d+ errors? during collection/m.test(text)) return `the tests could not be collected (exit ${exitCode})`;
  if (/^(?:# tests 0|\u2139 tests 0)$/m.test(text)) return 'the runner ran 0 tests';
  if (/^No tests found\b/m.test(text)) return 'jest found no tests';
  if (exitCode !== 0 && /^(?:error: |ERROR: )?usage: /im.test(text)) return `the command printed its usage (exit ${exitCode})`;
  return null;
}
