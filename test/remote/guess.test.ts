// A write whose local copy is the anchor's state pushes on the anchor's commit without asking
// the remote first (link.ts refresh): the push's lease is the check. When the ref moved, that
// lease is refused, the write fetches and verifies as always and is decided again on the new
// tail; the missed guess costs no attempt, so a writer allowed one attempt still publishes.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { bytes, git, records, REF, world, writeThroughLink, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when a writer that last saw the remote at its anchor writes after another machine did', () => {
  it('the refused guess fetches, verifies, re-decides on the new tail and publishes in its one attempt', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ann.run(['append', 'handoff', '--op', 'first', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);

    const seen: number[] = [];
    const { ctx, res } = writeThroughLink(ben, 'second', { attempts: 1 }, { onDecide: (view) => void seen.push(view.head.seq) });
    // Decided first on ben's copy (seq 0), then again on the remote's tail (ann's seq 1).
    expect(seen).toEqual([0, 1]);
    expect(res.records.map((r) => r.seq)).toEqual([2]);
    expect(git(['--git-dir', w.bare, 'rev-parse', REF]).trim()).toBe((JSON.parse(readFileSync(ctx.rp.anchor, 'utf8')) as { commit: string }).commit);
    expect((await ann.run(['sync'])).code).toBe(0);
    expect(bytes(ann)).toEqual(bytes(ben));
    expect(records(ann).map((r) => r.logical_operation_id ?? null)).toEqual([null, 'first', 'second']);
  });
});

