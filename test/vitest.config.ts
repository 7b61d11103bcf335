import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { defineConfig } from 'vitest/config';

// Lives under test/ because the design card keeps the top level to a fixed list.
//
// Two projects:
//   - main: every test file (`npm test` runs this one: `--project main`);
//   - no-cache: the tests that drive the CLI end to end (the command-line and scenario tests)
//     again with LEDGER_NO_CACHE=1, under which every verb must give the same answers with no
//     cache at all (issue 22). test/helpers/cli.ts passes the variable on to every CLI run.
//     CI runs it after `npm test` on the same build and counts both runs (.ci/run, .ci/count.mjs);
//     `npm run test:no-cache` runs it by hand.
//
// Speed (measured on this suite, CPU seconds of a whole run): forks without isolation. A file's
// modules (vitest's own, src/, the SDK) are loaded once per worker process instead of once per
// file, which was most of the cost of the many small files; worker threads cost more than forks
// here, since most files spawn processes and a fork from one large process costs more. Without
// isolation a file must leave no state behind that another depends on: per-user state is a
// fresh folder per file (test/setup.ts), and src/ keeps no state a test relies on being fresh.
const NO_CACHE_RUN = ['test/cli/**/*.test.ts', 'test/scenarios/**/*.test.ts'];
// Not run again: files under test/cli that open no ledger, so no cache can change what they see
// (the bundle's bytes, the launcher's reader, help texts and misspelt verbs).
const NO_CACHE_SKIP = ['test/cli/bundle-ascii.test.ts', 'test/cli/read-wrapped.test.ts', 'test/cli/help.test.ts'];

// Speed: the tests' scratch folders (os.tmpdir()) go on a RAM disk where Linux has one with room
// (/dev/shm, at least 2 GiB free), unless TMPDIR names a folder already. The files are still
// real files, written, fsynced and renamed by the real code; an fsync there costs nothing, where
// on a shared virtual disk thousands of them held the workers up: measured, a whole run (2,033
// tests, load about 4) took 377 s with /tmp on ext4 and 272 s with it on /dev/shm. One folder per
// run, removed when vitest exits, so nothing a test leaves behind stays in memory.
function ramTmpdir(): string | null {
  if (process.env.TMPDIR || process.platform !== 'linux') return null;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < 2 ** 31) return null;
    const dir = mkdtempSync('/dev/shm/ledger-suite-');
    // What /tmp is: tests that run a process as another user (hostile/workflow-tests-user) make
    // their folders there readable and expect the temp folder itself to be passable.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return null;
  }
}
const ram = ramTmpdir();
if (ram) {
  // The disk's own temp folder, for the one test that needs a disk's file system (chattr).
  process.env.SUITE_DISK_TMPDIR = tmpdir();
  process.env.TMPDIR = ram;
  process.on('exit', () => {
    try {
      rmSync(ram, { recursive: true, force: true });
    } catch {
      /* a mount a test left (disk.test.ts unmounts its own): the folder stays */
    }
  });
}

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
      { extends: true, test: { name: 'no-cache', include: NO_CACHE_RUN, exclude: ['**/node_modules/**', 'dist/**', 'test/.scratch/**', ...NO_CACHE_SKIP], env: { LEDGER_NO_CACHE: '1' } } },
    ],
  },
});
