import { defineConfig } from 'vitest/config';

// Lives under test/ because the design card keeps the top level to a fixed list.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'dist/**', 'test/.scratch/**'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Real processes race for locks in several suites; two cores on these machines.
    maxWorkers: 2,
  },
});
