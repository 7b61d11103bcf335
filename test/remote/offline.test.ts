// An unreachable remote (SPEC 11): refused by default with nothing changed (exit 3); --offline
// queues the write, not published and said so; `sync` publishes what still holds and drops,
// and reports, a queued start whose item another machine took meanwhile.
import { renameSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { git, records, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when the remote cannot be reached', () => {
  it('a writer exits 3 and changes nothing; --offline queues; sync publishes, and drops a start that lost its item', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    const away = `${w.bare}.away`;
    renameSync(w.bare, away);

    const before = snapshot(ann.ledger);
    const refused = await ann.run(['start', 'deploy', '--summary', 'ann deploys', '--json']);
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).error.code).toBe('OP_REMOTE_UNREACHABLE');
    expect(snapshot(ann.ledger)).toEqual(before);

    const queued = await ann.run(['start', 'deploy', '--summary', 'ann deploys', '--offline']);
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stderr).toContain('NOT published');
    const note = await ann.run(['append', 'handoff', '--op', 'report', '--exec', 'e1', '--outcome', 'success', '--offline', '--json']);
    expect(note.code, note.stderr).toBe(0);
    expect(JSON.parse(note.stdout)).toMatchObject({ ok: true, queued: true, published: false });
    expect(snapshot(ann.ledger)).toEqual(before);

    renameSync(away, w.bare);
    expect((await ben.run(['start', 'deploy', '--summary', 'ben deploys'])).code).toBe(0);

    const sync = await ann.run(['sync', '--json']);
    expect(sync.code, sync.stderr).toBe(0);
    const report = JSON.parse(sync.stdout);
    expect(report.dropped).toHaveLength(1);
    expect(report.dropped[0]).toMatchObject({ kinds: ['start'], slug: 'deploy' });
    expect(report.dropped[0].reason).toContain('ben');
    expect(report.published).toHaveLength(1);
    expect(report.published[0].kinds).toEqual(['handoff']);
    expect(sync.stderr).toContain('dropped');

    const onRemote = git(['--git-dir', w.bare, 'ls-tree', '-r', '--name-only', REF]).trim().split('\n').filter((p) => p.startsWith('records/')).length;
    const mine = records(ann);
    expect(mine).toHaveLength(onRemote);
    expect(mine.filter((r) => r.kind === 'start').map((r) => r.agent)).toEqual(['ben']);
    expect(mine.filter((r) => r.kind === 'handoff').map((r) => r.agent)).toEqual(['ann']);
    // Nothing waits any more: a second sync publishes nothing.
    const again = JSON.parse((await ann.run(['sync', '--json'])).stdout);
    expect(again).toMatchObject({ ok: true, published: [], dropped: [], waiting: 0 });
    expect((await ann.run(['audit'])).code).toBe(0);
  });
});
