// What people need around a joined ledger (issue 15, item 5): `status` and `resume` say whether
// the local copy is in sync, ahead (queued writes) or held; `doctor` checks the remote.
import { renameSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when a machine is joined, then loses the remote and queues a write', () => {
  it('status says in sync, then ahead; doctor passes, then fails reachability and warns of the outbox', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    const s1 = await ann.run(['status', '--json']);
    expect(JSON.parse(s1.stdout).remote).toMatchObject({ state: 'in-sync', outbox: 0, url: w.url });
    expect((await ann.run(['status'])).stdout).toContain(': current (fetched ');
    const d1 = await ann.run(['doctor', '--json']);
    const c1 = JSON.parse(d1.stdout).checks as { name: string; status: string }[];
    expect(c1.find((c) => c.name === 'remote ref')?.status).toBe('ok');
    expect(c1.find((c) => c.name === 'remote sync')?.status).toBe('ok');

    renameSync(w.bare, `${w.bare}.away`);
    expect((await ann.run(['start', 'x', '--summary', 's', '--offline'])).code).toBe(0);
    const s2 = await ann.run(['status']);
    expect(s2.stdout).toContain('1 queued write NOT published');
    const d2 = await ann.run(['doctor', '--json']);
    expect(d2.code).toBe(3);
    const c2 = JSON.parse(d2.stdout).checks as { name: string; status: string }[];
    expect(c2.find((c) => c.name === 'remote reachable')?.status).toBe('fail');
    expect(c2.find((c) => c.name === 'outbox')?.status).toBe('warn');
  });
});

describe('when sync is run on a ledger that is not joined to a remote', () => {
  it('exits 2, says how to join, and changes nothing', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    expect((await ann.run(['init'])).code).toBe(0);
    const before = snapshot(ann.ledger);
    const r = await ann.run(['sync', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.hint).toContain('init --remote');
    expect(snapshot(ann.ledger)).toEqual(before);
  });
});
