// The checkpoint discipline (the essay, SPEC 10): exactly one next action, a done and a state
// that say something, verified kept apart from attempted, and a warning when "verified" has no
// test output behind it. Every refusal is exit 2 with records.jsonl and HEAD unchanged.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectRefused, ok, project, records, type Project } from './helpers.js';
import { rawFlagValues } from '../../src/cli/commands/common.js';
import { recordProblems } from '../../src/record.js';

let p: Project;
beforeEach(async () => {
  p = await project();
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
});
afterEach(() => p.cleanup());

const cp = (...rest: string[]) => ['checkpoint', 'fix-tz', '--agent', 'claude', ...rest];

describe('the one-next-action rule', () => {
  it('refuses a checkpoint with no --next', async () => {
    const r = await expectRefused(p, cp('--done', 'd', '--state', 's'), 2, 'USAGE');
    expect(r).toContain('--next is required: exactly one concrete next action');
  });

  it('refuses two --next', async () => {
    const r = await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'a', '--next', 'b'), 2, 'USAGE');
    expect(r).toContain('--next was given 2 times; a checkpoint names exactly one next action');
  });

  it('refuses an empty or blank --next, and a --next with no value', async () => {
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', ''), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', '   '), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next='), 2, 'USAGE');
  });

  it('holds for finish too', async () => {
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's'], 2, 'USAGE');
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'a', '--next', 'b'], 2, 'USAGE');
  });
});

describe('done and state', () => {
  it('refuses an empty --done and an empty --state (cac would have read "" as "0")', async () => {
    expect(await expectRefused(p, cp('--done', '', '--state', 's', '--next', 'n'), 2, 'USAGE')).toContain('--done is empty');
    expect(await expectRefused(p, cp('--done', 'd', '--state', ' \n ', '--next', 'n'), 2, 'USAGE')).toContain('--state is empty');
    await expectRefused(p, cp('--state', 's', '--next', 'n'), 2, 'USAGE');
  });

  it('records text exactly as typed, number-like or not', async () => {
    await ok(p, ...cp('--done', '1e3', '--state', '007', '--next', '0x10', '--verified', '42'));
    const last = records(p).at(-1) as unknown as Record<string, unknown>;
    expect([last.done, last.state, last.next, last.verified]).toEqual(['1e3', '007', '0x10', ['42']]);
  });
});

describe('verified versus attempted', () => {
  it('keeps the two lists and the blockers apart, in order', async () => {
    await ok(p, ...cp('--done', 'd', '--state', 's', '--next', 'n', '--tests', '14 pass',
      '--verified', 'parser', '--verified', 'utc', '--attempted', 'dst', '--blocker', 'tz db missing'));
    const last = records(p).at(-1) as unknown as Record<string, unknown>;
    expect([last.verified, last.attempted, last.blockers]).toEqual([['parser', 'utc'], ['dst'], ['tz db missing']]);
  });

  it('warns on stderr when items are claimed verified with no test output', async () => {
    const r = await p.run(...cp('--done', 'd', '--state', 's', '--next', 'n', '--verified', 'parser'));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('1 item claimed as verified, but no test output recorded');
  });

  it('does not warn when the test output is there', async () => {
    const r = await p.run(...cp('--done', 'd', '--state', 's', '--next', 'n', '--verified', 'parser', '--tests', 'ok 14/14'));
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('refuses --tests together with --tests-cmd, and --tests-timeout alone', async () => {
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--tests', 'x', '--tests-cmd', 'true'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--tests-timeout', '5m'), 2, 'USAGE');
  });

  it('refuses a bad slug, lease or evidence before anything is written', async () => {
    await expectRefused(p, ['checkpoint', 'no spaces', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n'], 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--lease', 'soon'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--lease', '0m'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--lease', '999999999d'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--tests-cmd', 'true', '--tests-timeout', '25d'), 2, 'USAGE');
    await expectRefused(p, cp('--done', 'd', '--state', 's', '--next', 'n', '--evidence', 'x=missing.txt'), 2, 'INPUT_EVIDENCE');
  });
});

describe('rawFlagValues (typed strings, read past cac)', () => {
  it('reads --f V, --f=V, a missing value, and stops at --', () => {
    expect(rawFlagValues(['x', '--next', '', '--next=007', '--next', '--done', '--', '--next', 'z'], 'next')).toEqual(['', '007', '']);
  });
});

describe('tests.workdir (where a --tests-cmd ran) is strict, like every field', () => {
  const cp = (workdir: unknown) => ({
    v: 1, seq: 1, prev_tail_hash: `sha256:${'0'.repeat(64)}`, ts: '2026-01-01T00:00:00.000Z', kind: 'checkpoint', agent: 'claude',
    sig: { alg: 'ed25519', key: 'A'.repeat(43), value: 'A'.repeat(86) },
    logical_operation_id: 'fix-tz', execution_id: 'claude-1', done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [],
    tests: { excerpt: '', digest: `sha256:${'0'.repeat(64)}`, command: 'true', exit_code: 0, bytes: 0, workdir },
    lease_until: '2026-01-01T01:00:00.000Z',
  });
  const problems = (workdir: unknown) => recordProblems(cp(workdir)).filter((p) => p.includes('workdir'));

  it('takes a directory outside git, and one inside with commit, branch and clean', () => {
    expect(problems({ path: '/src/app', git: null })).toEqual([]);
    expect(problems({ path: '/src/app', git: { commit: 'a'.repeat(40), branch: 'claude-branch', clean: true } })).toEqual([]);
    expect(problems({ path: '/src/app', git: { commit: null, branch: null, clean: false } })).toEqual([]);
    expect(problems({ path: '/src/app', git: { commit: 'b'.repeat(64), branch: 'main', clean: true } })).toEqual([]);
  });

  it('refuses an unknown field, a commit that is not one, an empty branch, a missing clean', () => {
    expect(problems({ path: '/src/app', git: null, host: 'x' })).toEqual(['$.tests.workdir.host: unknown field']);
    expect(problems({ path: '/src/app', git: { commit: 'HEAD', branch: 'main', clean: true } })).toHaveLength(1);
    expect(problems({ path: '/src/app', git: { commit: 'A'.repeat(40), branch: 'main', clean: true } })).toHaveLength(1);
    expect(problems({ path: '/src/app', git: { commit: null, branch: '', clean: true } })).toHaveLength(1);
    expect(problems({ path: '/src/app', git: { commit: null, branch: null } })).toEqual(['$.tests.workdir.git.clean: missing']);
    expect(problems({ path: '', git: null })).toHaveLength(1);
    expect(problems({ git: null })).toEqual(['$.tests.workdir.path: missing']);
  });
});
