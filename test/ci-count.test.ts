// How CI counts a run: .ci/count.mjs reads vitest's JSON report (.ci/run) and prints the one
// line "N passed, N failed". Checked on real vitest runs over throwaway test files.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

describe('when CI counts a run (.ci/count.mjs on vitest\'s JSON report)', () => {
  /**
   * Runs a real vitest over throwaway test files in a scratch folder under test/.scratch (which
   * the suite's own config excludes), then CI's count over the report it wrote. The inner run
   * pools its files as `npm test` does (test/vitest.config.ts: forks without isolation), in one
   * worker: what CI counts is the report of such a run, and one worker process for all the files
   * costs about 0.9 s of CPU less per run than vitest's default of a fresh one per file.
   */
  function ciLine(files: Record<string, string>, config = "export default { test: { include: ['*.test.mjs'], pool: 'forks', isolate: false, maxWorkers: 1 } };\n"): { line: string; code: number | null } {
    mkdirSync(join(ROOT, 'test/.scratch'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'test/.scratch/ci-count-'));
    try {
      writeFileSync(join(dir, 'vitest.config.mjs'), config);
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      const report = join(dir, 'report.json');
      // A clean environment: this suite's own VITEST_* variables would confuse the inner run.
      const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.config.mjs', '--reporter=json', `--outputFile.json=${report}`], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir },
        encoding: 'utf8',
      });
      const count = spawnSync(process.execPath, [join(ROOT, '.ci/count.mjs'), report, String(run.status)], { encoding: 'utf8' });
      return { line: count.stdout, code: count.status };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const head = "import { beforeAll, describe, expect, it } from 'vitest';\n";

  it('counts one failing test, inside nested describe blocks, as 1 failed', () => {
    const r = ciLine({
      'one.test.mjs': `${head}describe('outer', () => { describe('inner', () => { it('fails', () => expect(1).toBe(2)); it('passes', () => {}); }); });\nit.skip('skipped', () => {});\n`,
    });
    expect(r).toEqual({ line: '1 passed, 1 failed\n', code: 1 });
  });

  it('counts a file that fails to load once, and a file whose hook failed once (not once per skipped test)', () => {
    const r = ciLine({
      'broken.test.mjs': `import { gone } from './no-such-module.mjs';\n${head}it('never runs', () => gone());\n`,
      'hook.test.mjs': `${head}beforeAll(() => { throw new Error('no database'); });\nit('a', () => {});\nit('b', () => {});\n`,
      'fine.test.mjs': `${head}it('a', () => {});\nit('b', () => expect(2).toBe(2));\n`,
    });
    expect(r).toEqual({ line: '2 passed, 2 failed\n', code: 1 });
  });

  it('prints 0 failed, and exits 0, for a run that passed', () => {
    expect(ciLine({ 'fine.test.mjs': `${head}describe('d', () => { it('a', () => {}); it('b', () => {}); });\n` })).toEqual({ line: '2 passed, 0 failed\n', code: 0 });
  });

  it('counts each run of a file that two projects run', () => {
    const config = "export default { test: { projects: [{ test: { name: 'main', include: ['*.test.mjs'] } }, { test: { name: 'again', include: ['a.test.mjs'], env: { AGAIN: '1' } } }] } };\n";
    const r = ciLine({
      'a.test.mjs': `${head}it('passes only in the first run', () => expect(process.env.AGAIN).toBeUndefined());\n`,
      'b.test.mjs': `${head}it('passes', () => {});\n`,
    }, config);
    expect(r).toEqual({ line: '2 passed, 1 failed\n', code: 1 });
  });

  it('sums two runs (`npm test`, then the no-cache run) and counts a second run that left no report as 1 failed', () => {
    mkdirSync(join(ROOT, 'test/.scratch'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'test/.scratch/ci-count-'));
    try {
      const report = (passed: number, failed: number) => ({ testResults: [{ status: failed ? 'failed' : 'passed', assertionResults: [...Array(passed).fill({ status: 'passed' }), ...Array(failed).fill({ status: 'failed' })] }] });
      writeFileSync(join(dir, 'a.json'), JSON.stringify(report(3, 0)));
      writeFileSync(join(dir, 'b.json'), JSON.stringify(report(2, 1)));
      const count = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, '.ci/count.mjs'), ...args], { encoding: 'utf8' });
      expect(count(join(dir, 'a.json'), '0', join(dir, 'b.json'), '1')).toMatchObject({ stdout: '5 passed, 1 failed\n', status: 1 });
      expect(count(join(dir, 'a.json'), '0', join(dir, 'a.json'), '0')).toMatchObject({ stdout: '6 passed, 0 failed\n', status: 0 });
      expect(count(join(dir, 'a.json'), '0', join(dir, 'gone.json'), '1')).toMatchObject({ stdout: '3 passed, 1 failed\n', status: 1 });
      // A broken CI script (a report without its status) never reads as clean.
      expect(count(join(dir, 'a.json'))).toMatchObject({ stdout: '0 passed, 1 failed\n', status: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never prints a clean line for a failed run that left no report (a build that failed)', () => {
    const count = spawnSync(process.execPath, [join(ROOT, '.ci/count.mjs'), join(ROOT, 'test/.scratch/no-such-report.json'), '1'], { encoding: 'utf8' });
    expect(count.stdout).toBe('0 passed, 1 failed\n');
    expect(count.status).toBe(1);
  });
});
