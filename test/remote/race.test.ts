// Racing machines (SPEC 11): the remote's compare-and-swap is the only publication point, so
// writers on separate clones, with separate locks, never both win a seq. Over `git daemon` on
// 127.0.0.1 (a real network transport).
import { afterEach, describe, expect, it } from 'vitest';
import { bytes, finished, records, serve, world, type Machine, type World } from './kit.js';

let w: World;
let stop: (() => void) | null = null;
afterEach(() => {
  stop?.();
  stop = null;
  w?.cleanup();
});

// The joins before the race and the checks after it run in-process (Machine.run): the race itself,
// the appends, is between real processes.
async function joinAll(ms: Machine[]): Promise<void> {
  for (const m of ms) {
    const r = await m.run(['init', '--remote', w.url]);
    expect(r.code, r.stderr).toBe(0);
  }
}

describe('when three clones append at once over git daemon', () => {
  it('every acknowledged append lands exactly once, on one chain, and every clone holds the same bytes after sync', async () => {
    w = world(['m1', 'm2', 'm3']);
    stop = (await serve(w)).stop;
    await joinAll(w.machines);
    const PER = 4;
    const acknowledged: string[] = [];
    await Promise.all(w.machines.map(async (m) => {
      for (let i = 0; i < PER; i++) {
        const op = `${m.name}-op${i}`;
        const r = await finished(m.spawn(['append', 'handoff', '--op', op, '--exec', 'e1', '--outcome', 'success', '--json']));
        // Policy of the test: a writer may give up under contention (exit 3, nothing published);
        // what it acknowledged (exit 0) must be there exactly once.
        if (r.code === 0) acknowledged.push(op);
        else expect(r.code, r.stderr).toBe(3);
      }
    }));
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const m of w.machines) {
      const s = await m.run(['sync']);
      expect(s.code, s.stderr).toBe(0);
    }
    const [first, ...rest] = w.machines;
    for (const m of rest) expect(bytes(m)).toEqual(bytes(first));
    const ops = records(first).filter((r) => r.kind === 'handoff').map((r) => r.logical_operation_id as string);
    for (const op of acknowledged) expect(ops.filter((o) => o === op), op).toHaveLength(1);
    expect(new Set(ops).size).toBe(ops.length);
    const seqs = records(first).map((r) => r.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    for (const m of w.machines) {
      const a = await m.run(['audit', '--json']);
      expect(a.code, a.stdout).toBe(0);
    }
  });
});

describe('when two clones race to start one work item', () => {
  it('exactly one wins; the loser is told who owns it and its copy takes the winner\'s start', async () => {
    w = world(['ann', 'ben']);
    stop = (await serve(w)).stop;
    const [ann, ben] = w.machines;
    await joinAll(w.machines);
    const [ra, rb] = await Promise.all([ann, ben].map((m) => finished(m.spawn(['start', 'deploy', '--summary', `${m.name} deploys`]))));
    const codes = [ra.code, rb.code].sort();
    expect(codes).toEqual([0, 2]);
    const [winner, loser] = ra.code === 0 ? [ann, ben] : [ben, ann];
    const lost = ra.code === 0 ? rb : ra;
    expect(lost.stderr).toContain(`owned by ${winner.name}`);
    // The loser's local copy was brought up to the remote before it decided.
    const starts = records(loser).filter((r) => r.kind === 'start');
    expect(starts.map((r) => r.agent)).toEqual([winner.name]);
    expect(bytes(loser)).toEqual(bytes(winner));
  });
});
