import { defineConfig } from 'vitest/config';

// Lives under test/ because the design card keeps the top level to a fixed list.
//
// Two runs in one `npm test` (CI counts both from the one JSON report, .ci/count.mjs):
//   - main: every test file;
//   - no-cache: the tests that drive the CLI end to end (the command-line and scenario tests)
//     again with LEDGER_NO_CACHE=1, under which every verb must give the same answers with no
//     cache at all (issue 22). test/helpers/cli.ts passes the variable on to every CLI run.
//
// Speed (measured on this suite, CPU seconds of a whole run): forks without isolation. A file's
// modules (vitest's own, src/, the SDK) are loaded once per worker process instead of once per
// file, which was most of the cost of the many small files; worker threads cost more than forks
// here, since most files spawn processes and a fork from one large process costs more. Without
// isolation a file must leave no state behind that another depends on: per-user state is a
// fresh folder per file (test/setup.ts), and src/ keeps no state a test relies on being fresh.
const NO_CACHE_RUN = ['test/cli/**/*.test.ts', 'test/scenarios/**/*.test.ts'];

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    exclude: ['**/node_modules/**', 'dist/**', 'test/.scratch/**'],
    setupFiles: ['test/setup.ts'],
    // Hang guards only: no test's outcome may depend on how fast the machine is (CI shares two
    // cores), so these are far above what any test takes under load.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Real processes race for locks in several suites; two cores on these machines.
    maxWorkers: 2,
    pool: 'forks',
    isolate: false,
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'no-cache', include: NO_CACHE_RUN, env: { LEDGER_NO_CACHE: '1' } } },
    ],
  },
});
