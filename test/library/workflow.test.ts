// The handoff-log workflow through the library gives the records the CLI gives: the same steps
// (start, a checkpoint whose failing test command the library runs itself, finish), once
// through Ledger and once through `ledger`, make the same claims.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestSource, Ledger } from '../../src/index.js';
import { initProject, runLedger } from '../helpers/cli.js';
import { claimOf, expectRefused, libraryProject, type LibraryProject } from './kit.js';

let p: LibraryProject | undefined;
let cli: Awaited<ReturnType<typeof initProject>> | undefined;
afterEach(() => {
  p?.cleanup();
  cli?.cleanup();
  p = cli = undefined;
});

const TESTS = 'echo "14 pass"; echo "2 fail: toLocal -05:00"; exit 1';
const records = (dir: string) => [...Ledger.open({ dir }).records()].map((r) => r.record);

describe('when the workflow runs through the library and through the CLI', () => {
  it('writes the same start, checkpoint and finish, and the same warnings', async () => {
    p = libraryProject();
    cli = await initProject('cli');
    for (const root of [p.root, cli.dir]) writeFileSync(join(root, 'tz.ts'), 'export {}\n');

    // Through the library (its clock, moved by hand).
    const lib = Ledger.open({ dir: p.dir, key: p.key, now: () => new Date(p!.clock.t) });
    const started = await lib.start({ slug: 'fix-tz', agent: 'claude', summary: 'fix toLocal()' });
    expect(started.views).toEqual({ ok: true, dir: p.root });
    p.clock.t += 60_000;
    const cp = await lib.checkpoint({
      slug: 'fix-tz', agent: 'claude', done: 'ran the suite', state: '14 pass, 2 fail', next: 'fix toLocal() for -05:00',
      verified: ['parser'], tests: { command: TESTS, cwd: p.root },
    });
    expect(cp.tests?.tests).toMatchObject({ command: TESTS, exit_code: 1, excerpt: '14 pass\n2 fail: toLocal -05:00' });
    expect(readFileSync(cp.tests!.blob.path, 'utf8')).toBe('14 pass\n2 fail: toLocal -05:00\n');
    p.clock.t += 60_000;
    const evidence = { src: digestSource('tz.ts', { root: p.root, ledgerDir: p.dir }) };
    const fin = await lib.finish({
      slug: 'fix-tz', agent: 'claude', done: 'gave up for today', state: '2 fail', next: 'handle DST', outcome: 'failure',
      evidence, invariants: { tests: { ok: false, detail: '2 fail' } }, blockers: ['DST'],
    });

    // Through the CLI, on its own project.
    const run = async (...args: string[]) => {
      const r = await runLedger([...args, '--json'], { cwd: cli!.dir });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { warnings: string[] };
    };
    await run('start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    const cliCp = await run('checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'ran the suite', '--state', '14 pass, 2 fail', '--next', 'fix toLocal() for -05:00', '--verified', 'parser', '--tests-cmd', TESTS);
    const cliFin = await run('finish', 'fix-tz', '--agent', 'claude', '--done', 'gave up for today', '--state', '2 fail', '--next', 'handle DST', '--outcome', 'failure',
      '--evidence', 'src=tz.ts', '--invariant', 'tests=fail:2 fail', '--blocker', 'DST');

    // Each ran its tests in its own project (not a git work tree): the same claim but for the path.
    const where = (root: string) => (r: Record<string, unknown>) => JSON.parse(JSON.stringify(r).replaceAll(JSON.stringify(root).slice(1, -1), '<project>'));
    const mine = records(p.dir).slice(1).map(claimOf).map(where(p.root));
    const theirs = records(cli.ledger).slice(1).map(claimOf).map(where(cli.dir));
    expect(mine.map((r) => r.kind)).toEqual(['start', 'checkpoint', 'finish']);
    expect(mine).toEqual(theirs);
    expect([cp.warnings, fin.warnings]).toEqual([cliCp.warnings, cliFin.warnings]);
    // Policy (issue 26): "14 pass, 2 fail" with a claim is an honest partial verification, not a false claim.
    expect(cp.warnings).toEqual([]);

    // The CLI reads what the library wrote: the views are current, and the chain audits clean.
    const check = await runLedger(['render', '--check'], { cwd: p.root });
    expect(check.code, check.stdout).toBe(0);
    const audit = await runLedger(['audit', '--json', '--trust', join(p.root, 'keys/trust.json')], { cwd: p.root });
    expect(JSON.parse(audit.stdout).ok, audit.stdout).toBe(true);
  });

  it('refuses a checkpoint from anyone but the owner before its test command runs, and changes nothing', async () => {
    p = libraryProject();
    await p.ledger.start({ slug: 'fix-tz', agent: 'claude', summary: 'fix toLocal()', views: false });
    const marker = join(p.root, 'ran');
    const e = await expectRefused(p, 'INPUT_CONFLICT', () =>
      p!.ledger.checkpoint({ slug: 'fix-tz', agent: 'codex', done: 'd', state: 's', next: 'n', tests: { command: `touch ${marker}` }, views: false }));
    expect(e.message).toContain('only the owner may checkpoint fix-tz');
    expect(() => readFileSync(marker)).toThrow();
  });

  it('refuses a bad request the way the CLI refuses the flag', async () => {
    p = libraryProject();
    await p.ledger.start({ slug: 'fix-tz', agent: 'claude', summary: 'fix toLocal()', views: false });
    const cp = { slug: 'fix-tz', agent: 'claude', done: 'd', state: 's', next: 'n', views: false as const };
    expect((await expectRefused(p, 'USAGE', () => p!.ledger.checkpoint({ ...cp, done: ' ' }))).message).toContain('--done is empty');
    expect((await expectRefused(p, 'USAGE', () => p!.ledger.checkpoint({ ...cp, next: ['a', 'b'] as unknown as string }))).message).toContain('exactly one next action');
    expect((await expectRefused(p, 'USAGE', () => p!.ledger.checkpoint({ ...cp, leaseMs: 0 }))).message).toContain('--lease must be between 1ms and 30d');
    await expectRefused(p, 'USAGE', () => p!.ledger.start({ slug: 'bad slug', agent: 'claude', summary: 's', views: false }));
  });
});
