// Two real processes race to `start` the same slug: exactly one wins. Ownership is decided
// inside the store's transact (through the workflow), under the cross-process writer lock, on the HEAD as it is then, so the
// loser sees the winner's start and is refused. Needs the built CLI (`npx tsc -p .`; `npm test`
// builds it first).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { BIN, spawnLedger } from '../helpers/cli.js';
import { ok, project, records, workLog, type Project } from './helpers.js';
import { renderViews } from '../../src/handoff/views.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

let p: Project;
beforeEach(async () => {
  p = await project();
});
afterEach(() => p.cleanup());

function start(agent: string, slug: string): Promise<{ agent: string; code: number; stderr: string }> {
  const child = spawnLedger(['start', slug, '--agent', agent, '--summary', `${agent} wants it`], { cwd: p.dir });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ agent, code: code ?? -1, stderr })));
}

describe('two processes racing to start the same slug', () => {
  it('exactly one wins; the other is refused naming the winner, and the ledger holds one start', async () => {
    expect(existsSync(BIN), `build the CLI first: npx tsc -p . (${BIN})`).toBe(true);
    // Three rounds on three slugs: each round is the same race, so more chances to interleave.
    for (const slug of ['race-1', 'race-2', 'race-3']) {
      const results = await Promise.all([start('claude', slug), start('codex', slug)]);
      const winners = results.filter((r) => r.code === 0);
      const losers = results.filter((r) => r.code !== 0);
      expect(winners, JSON.stringify(results)).toHaveLength(1);
      expect(losers).toHaveLength(1);
      expect(losers[0].code).toBe(2);
      expect(losers[0].stderr).toContain(`slug ${slug} is owned by ${winners[0].agent} until`);
      const starts = records(p).filter((r) => r.kind === 'start' && r.logical_operation_id === slug);
      expect(starts.map((r) => r.agent)).toEqual([winners[0].agent]);
      expect(workLog(p).items.get(slug)?.owner).toBe(winners[0].agent);
    }
    // and the views, written by whichever process finished last, show the final ledger
    const expected = renderViews(workLog(p));
    expect(readFileSync(join(p.dir, 'HANDOFF.md'), 'utf8')).toBe(expected['HANDOFF.md']);
    expect(readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8')).toBe(expected['HANDOFF.yml']);
  });
});

describe('two processes racing to start the same released item', () => {
  it('exactly one takes it (neither needs --takeover); the other is refused naming the winner', async () => {
    expect(existsSync(BIN), `build the CLI first: npm run build (${BIN})`).toBe(true);
    for (const slug of ['released-1', 'released-2', 'released-3']) {
      await ok(p, 'start', slug, '--agent', 'gemini', '--summary', 'first session');
      await ok(p, 'release', slug, '--agent', 'gemini', '--note', 'over to whoever comes next');
      const results = await Promise.all([start('claude', slug), start('codex', slug)]);
      const winners = results.filter((r) => r.code === 0);
      const losers = results.filter((r) => r.code !== 0);
      expect(winners, JSON.stringify(results)).toHaveLength(1);
      expect(losers[0].code).toBe(2);
      expect(losers[0].stderr).toContain(`slug ${slug} is owned by ${winners[0].agent} until`);
      const after = records(p).filter((r) => r.kind === 'start' && r.logical_operation_id === slug).map((r) => r.agent);
      expect(after).toEqual(['gemini', winners[0].agent]);
      const item = workLog(p).items.get(slug)!;
      expect([item.owner, item.released, item.taken_over]).toEqual([winners[0].agent, null, null]);
    }
  });
});
