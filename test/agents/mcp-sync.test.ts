// `ledger mcp` on a ledger joined to a git remote (SPEC 11, 12): the `sync` tool is listed (and
// only there), publishes what an --offline write queued, reports in-sync, drops a queued start
// that lost its item, and refuses (isError, nothing changed) when the remote is unreachable or
// was rolled back. Real git: a bare repository as the remote, one folder per machine, the built
// binary driven by the SDK's own Client over a real stdio pipe.
import { renameSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { bytes, git, keptWorld, records, REF, world, type Machine, type World } from '../remote/kit.js';
import { call, startServer, type Server } from './kit.js';

let w: World;
let servers: Server[] = [];
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
  w?.cleanup();
});

const serverOn = async (m: Machine) => {
  const s = await startServer(m.dir, m.name, m.env);
  servers.push(s);
  return s;
};
/** How many records the remote's ref holds (its tree: HEAD plus one blob per record). */
// The records on the ref (its tree holds them, HEAD and, SPEC 13, the checkpoint).
const onRemote = () => git(['--git-dir', w.bare, 'ls-tree', '-r', '--name-only', REF]).trim().split('\n').filter((p) => p.startsWith('records/')).length;
const tip = () => git(['--git-dir', w.bare, 'rev-parse', REF]).trim();

/** Every machine of `names` joined to the remote: each world built once per file, put back per test. */
const joinedWorld = (names: string[]) => keptWorld(async () => {
  const built = world(names);
  for (const m of built.machines) {
    const r = await m.run(['init', '--remote', built.url]);
    expect(r.code, r.stderr).toBe(0);
  }
  return built;
});
const kept = new Map<string, () => Promise<World>>([['ann', joinedWorld(['ann'])], ['ann,ben', joinedWorld(['ann', 'ben'])]]);

async function joined(names: string[]): Promise<Machine[]> {
  w = await kept.get(names.join(','))!();
  return w.machines;
}

describe('when a server starts on a clone joined to a remote', () => {
  it('lists sync after the other tools, with a strict empty input schema and an output schema', async () => {
    const [ann] = await joined(['ann']);
    const s = await serverOn(ann);
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['status', 'resume', 'start', 'checkpoint', 'finish', 'release', 'note', 'gate', 'log', 'sync']);
    const sync = tools.find((t) => t.name === 'sync')!;
    expect(sync.description).toMatch(/remote/);
    expect(sync.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys(sync.inputSchema.properties ?? {})).toEqual([]);
    expect(Object.keys(sync.outputSchema?.properties ?? {})).toEqual(expect.arrayContaining(['ok', 'summary', 'next_action', 'state', 'adopted', 'published', 'dropped', 'waiting', 'head', 'remote']));
    expect(s.stderr()).toMatch(/serving 10 tools as ann/);
  });

  it('does not list sync on a machine where that ledger is not joined (its own state directory)', async () => {
    const [ann] = await joined(['ann']);
    const s = await startServer(ann.dir, 'ann', { ...ann.env, LEDGER_STATE_DIR: `${ann.env.LEDGER_STATE_DIR}-elsewhere` });
    servers.push(s);
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain('sync');
    const r = await call(s, 'sync', {});
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/no tool named "sync"/);
  });
});

describe('when a write was queued with --offline while the remote was away', () => {
  it('a sync call publishes it (the remote holds the same bytes), then a second one reports in-sync', async () => {
    const [ann] = await joined(['ann']);
    const away = `${w.bare}.away`;
    renameSync(w.bare, away);
    const q = await ann.run(['append', 'handoff', '--op', 'report', '--exec', 'e1', '--outcome', 'success', '--offline']);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stderr).toContain('NOT published');
    renameSync(away, w.bare);
    expect(onRemote()).toBe(1);

    const s = await serverOn(ann);
    const first = await call(s, 'sync', {});
    expect(first.isError, first.text).toBe(false);
    expect(first.structured).toMatchObject({ ok: true, state: 'published', adopted: 0, dropped: [], waiting: 0, head: { seq: 1 }, remote: { url: w.url, ref: REF } });
    expect(first.structured!.published).toEqual([{ seqs: [1], kinds: ['handoff'] }]);
    expect(first.structured!.summary).toMatch(/published queued handoff as seq 1/);
    expect(first.structured!.commit).toBe(tip());
    expect(JSON.parse(first.text)).toEqual(first.structured);
    // Published: the remote's tree holds it, byte for byte as the local copy.
    expect(onRemote()).toBe(2);
    const blob = git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:records/000000/000000000001`]);
    expect(records(ann)[1]).toMatchObject({ kind: 'handoff', agent: 'ann', logical_operation_id: 'report' });
    expect(JSON.parse(blob)).toEqual(records(ann)[1]);
    expect(git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:HEAD`])).toBe(bytes(ann).head);

    const second = await call(s, 'sync', {});
    expect(second.isError, second.text).toBe(false);
    expect(second.structured).toMatchObject({ ok: true, state: 'in-sync', adopted: 0, published: [], dropped: [], waiting: 0, head: { seq: 1 } });
    expect(second.structured!.summary).toMatch(/already up to date/);
    expect(onRemote()).toBe(2);
    expect((await ann.run(['audit'])).code).toBe(0);
  });

  it('takes what another machine published, and drops (reports, never publishes) a queued start whose item that machine took', async () => {
    const [ann, ben] = await joined(['ann', 'ben']);
    const away = `${w.bare}.away`;
    renameSync(w.bare, away);
    expect((await ann.run(['start', 'deploy', '--summary', 'ann deploys', '--offline'])).code).toBe(0);
    renameSync(away, w.bare);
    expect((await ben.run(['start', 'deploy', '--summary', 'ben deploys'])).code).toBe(0);

    const s = await serverOn(ann);
    const r = await call(s, 'sync', {});
    expect(r.isError, r.text).toBe(false);
    expect(r.structured).toMatchObject({ ok: true, state: 'dropped', adopted: 1, published: [], waiting: 0 });
    expect(r.structured!.dropped).toEqual([{ kinds: ['start'], slug: 'deploy', reason: expect.stringContaining('ben') }]);
    expect(r.structured!.next_action).toMatch(/deploy/);
    expect(records(ann).filter((x) => x.kind === 'start').map((x) => x.agent)).toEqual(['ben']);
    expect(onRemote()).toBe(records(ann).length);
  });
});

describe('when the sync cannot be done', () => {
  it('an unreachable remote is an isError result; the local copy and the queue stay as they were', async () => {
    const [ann] = await joined(['ann']);
    renameSync(w.bare, `${w.bare}.away`);
    expect((await ann.run(['append', 'handoff', '--op', 'report', '--exec', 'e1', '--outcome', 'success', '--offline'])).code).toBe(0);
    const before = snapshot(ann.ledger);
    const s = await serverOn(ann);
    const r = await call(s, 'sync', {});
    expect(r.isError).toBe(true);
    expect(r.structured).toBeUndefined();
    expect(r.text.split('\n')).toHaveLength(1);
    expect(r.text).toMatch(/reach|unreachable/i);
    expect(snapshot(ann.ledger)).toEqual(before);
    const status = await ann.run(['status', '--json']);
    expect(JSON.parse(status.stdout).remote).toMatchObject({ state: 'ahead', outbox: 1 });
  });

  it('a remote rolled back below what this machine verified is an isError that sends the agent to a person; nothing changes', async () => {
    const [ann, ben] = await joined(['ann', 'ben']);
    const c0 = tip();
    expect((await ann.run(['append', 'handoff', '--op', 'a', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    expect((await ben.run(['sync'])).code).toBe(0);
    const before = snapshot(ben.ledger);
    git(['--git-dir', w.bare, 'update-ref', REF, c0]);

    const s = await serverOn(ben);
    for (let i = 0; i < 2; i++) {
      // The first call finds the rollback and sets the hold; the second meets the hold.
      const r = await call(s, 'sync', {});
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toMatch(/rollback/);
      expect(r.text).toMatch(/tell a person/);
      expect(r.text).toContain('--accept-remote');
      expect(snapshot(ben.ledger)).toEqual(before);
    }
    // Writes through the server are held too.
    const wr = await call(s, 'start', { slug: 'x', summary: 's' });
    expect(wr.isError).toBe(true);
    expect(wr.text).toMatch(/rollback/);
    expect(snapshot(ben.ledger)).toEqual(before);
  });
});
