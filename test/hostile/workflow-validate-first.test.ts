// Issue 13 finding 16: a refused finish ran its test command first (--supersedes was checked
// after the run). Everything that can be checked without running the command is checked before
// it: each case below would run `touch MARKER` if it got that far, and must leave no marker and
// the ledger, the blobs and the views as they were.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CP, expectRefused, ok, project, type Project } from '../handoff/helpers.js';
import { projectState } from '../helpers/project-state.js';
import { Ledger } from '../../src/ledger.js';
import type { FinishRequest } from '../../src/index.js';
import { LedgerError } from '../../src/errors.js';

let p: Project;
let marker: string;
beforeEach(async () => {
  p = await project();
  marker = join(p.dir, 'ran');
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
});
afterEach(() => p.cleanup());

const fin = (...rest: string[]) => ['finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', `touch ${marker}`, ...rest];

describe('when a finish is refused for something known before its test command would run', () => {
  it('a --supersedes that names no handoff or finish of this item: refused, the command never ran', async () => {
    const genesis = (await p.run('show', '0', '--json')).stdout;
    const before = projectState(p.dir);
    await expectRefused(p, fin('--supersedes', JSON.parse(genesis).id), 2, 'INPUT_REFUSED');
    await expectRefused(p, fin('--supersedes', `sha256:${'ab'.repeat(32)}`), 2, 'INPUT_REFUSED');
    expect(existsSync(marker)).toBe(false);
    expect(projectState(p.dir)).toEqual(before);
  });

  it('a bad flag of any kind (outcome, invariant, depends-on, evidence, note, agent, owner): refused, never ran', async () => {
    const before = projectState(p.dir);
    await expectRefused(p, fin('--outcome', 'done'), 2, 'USAGE');
    await expectRefused(p, fin('--invariant', 'tests=maybe'), 2, 'USAGE');
    await expectRefused(p, fin('--depends-on', 'no spaces allowed'), 2, 'USAGE');
    await expectRefused(p, fin('--evidence', 'src=missing.ts'), 2, 'INPUT_EVIDENCE');
    await expectRefused(p, fin('--note', 'x'.repeat(4097)), 2, 'USAGE');
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'codex', ...CP, '--tests-cmd', `touch ${marker}`], 2, 'INPUT_CONFLICT');
    await expectRefused(p, ['finish', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', `touch ${marker}`, '--key', 'keys/missing.key'], 2, 'INPUT_KEY');
    expect(existsSync(marker)).toBe(false);
    expect(projectState(p.dir)).toEqual(before);
  });
});

describe('when the library is asked for a finish the store would refuse', () => {
  it('refuses it by the store\'s own schema before running the command (limits, invariants, depends_on)', async () => {
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key') });
    const base: FinishRequest = { slug: 'fix-tz', agent: 'claude', done: 'd', state: 's', next: 'n', tests: { command: `touch ${marker}`, cwd: p.dir }, views: false };
    const before = projectState(p.dir);
    const bad: Partial<FinishRequest>[] = [
      { invariants: { tests: { ok: true, detail: 'x'.repeat(4097) } } },
      { invariants: { 'bad name': { ok: true, detail: '' } } },
      { depends_on: [{ logical_operation_id: 'op', outcome: 'done' as never }] },
      { outcome: 'finished' as never },
      { note: 'x'.repeat(5000) },
      { evidence: { src: { digest: 'sha256:nope', source: 'file:x' } } },
      { supersedes: ['not-an-id'] },
      { invariants: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`i${i}`, { ok: true, detail: '' }])) },
    ];
    for (const extra of bad) {
      const e = await ledger.finish({ ...base, ...extra }).then(() => null, (x: unknown) => x);
      expect(e, JSON.stringify(extra).slice(0, 80)).toBeInstanceOf(LedgerError);
      expect((e as LedgerError).exitCode, (e as Error).message).toBe(2);
    }
    expect(existsSync(marker)).toBe(false);
    expect(projectState(p.dir)).toEqual(before);
  });
});
