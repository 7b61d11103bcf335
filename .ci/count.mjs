// CI's last line, "N passed, N failed", from vitest's JSON report (--reporter=json).
// Usage: node .ci/count.mjs REPORT STATUS [REPORT STATUS ...], with STATUS the exit code of the
// run that wrote REPORT (`npm test`'s, then the LEDGER_NO_CACHE=1 run's: .ci/run). The line is
// the sum over every run. It always prints the line; it exits 1 when it counted a failure, else 0.
//
// What counts, per test file in a report (a file run by two vitest projects, or by two runs, is
// counted each time it ran):
//   - passed: each test that passed (skipped and todo tests are neither);
//   - failed: each test that failed, or, when none did but the file failed (it did not load: an
//     import error, a syntax error; or a hook failed, so its tests were skipped), the file once.
// Not vitest's numFailedTestSuites: it counts every describe block around a failing test as
// well as the file, so one failing test read "3 failed".
// Policy: a run that failed with nothing counted (no report, an unreadable one, or an error
// outside every test file) reads as 1 failed, never 0: CI must not print a clean line for a run
// that did not pass.
import { readFileSync } from 'node:fs';

/** The counts for one vitest JSON report and the run's exit status. */
function countReport(report, status) {
  let passed = 0;
  let failed = 0;
  for (const file of report.testResults ?? []) {
    const tests = file.assertionResults ?? [];
    passed += tests.filter((t) => t.status === 'passed').length;
    const failedTests = tests.filter((t) => t.status === 'failed').length;
    failed += failedTests > 0 ? failedTests : file.status === 'failed' ? 1 : 0;
  }
  if (status !== 0 && failed === 0) failed = 1;
  return { passed, failed };
}

/** One run's counts: its report, or 1 failed when it left none (the build or vitest failed first). */
function countRun(reportPath, statusText) {
  try {
    return countReport(JSON.parse(readFileSync(reportPath, 'utf8')), Number(statusText));
  } catch (e) {
    process.stderr.write(`count: no test report (${e instanceof Error ? e.message.split('\n')[0] : String(e)})\n`);
    return { passed: 0, failed: 1 };
  }
}

const args = process.argv.slice(2);
const counts = { passed: 0, failed: 0 };
// Policy: an odd or empty argument list is a broken CI script, counted as a failure.
if (args.length === 0 || args.length % 2 !== 0) counts.failed = 1;
for (let i = 0; i + 1 < args.length; i += 2) {
  const c = countRun(args[i], args[i + 1]);
  counts.passed += c.passed;
  counts.failed += c.failed;
}
console.log(`${counts.passed} passed, ${counts.failed} failed`);
process.exitCode = counts.failed > 0 ? 1 : 0;
