// Issue 13 finding 17: `dir:.` digested the ledger's views (and, through them, every later
// write), so the evidence was stale the moment the next verb ran. A dir: digest skips the ledger
// directory and HANDOFF.md / HANDOFF.yml beside it; evidence naming those files is refused.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { handoff, project, type Project } from '../causal/kit.js';
import { legacyDirV1 } from '../causal/evidence/tree.js';
import { expectRefusedEvidence } from './evidence-kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const ok = async (...args: string[]) => {
  const r = await p.run(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
};

describe('when dir:. (the whole project) is the evidence and the ledger keeps writing', () => {
  it('stays current across start, checkpoint and finish, which rewrite the ledger and both views', async () => {
    p = await project();
    p.write('src/app.js', 'export const v = 1;\n');
    await p.id(handoff('whole', 'e1', 'success', '--evidence', 'all=dir:.'));
    const v1Before = legacyDirV1(p.dir, [p.ledger]);
    await ok('start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
    await ok('checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'ran it', '--state', 'ok', '--next', 'finish');
    await ok('finish', 'fix-tz', '--agent', 'claude', '--done', 'done', '--state', 'ok', '--next', 'none');
    // The old format counted the views: the same evidence would be stale now.
    expect(legacyDirV1(p.dir, [p.ledger])).not.toBe(v1Before);
    const g = await p.gate('whole');
    expect(g.code, JSON.stringify(g.r.reasons)).toBe(0);
    expect(g.r.evidence[0]).toMatchObject({ source: 'dir/v2:.', current: true });
    // Anything else in the project still counts.
    p.write('src/app.js', 'export const v = 2;\n');
    expect((await p.gate('whole')).r.failed_term).toBe('state_current');
  });

  it('refuses evidence that names the ledger directory, a file in it, or a view (exit 2, nothing changed)', async () => {
    p = await project();
    await ok('start', 'item', '--agent', 'alice', '--summary', 'write the views');
    for (const source of ['dir:.ledger', 'file:.ledger/HEAD', '.ledger/records.jsonl', 'file:HANDOFF.md', 'HANDOFF.yml', `file:${join(p.dir, 'HANDOFF.md')}`]) {
      await expectRefusedEvidence(p, source, /the ledger's own files/);
    }
  });
});
