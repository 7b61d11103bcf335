// SPEC 13 in a joined ledger, the edges: a witness that is down delays no write but is named (the
// write's stderr, `status`, `doctor`); a witness that answers junk counts for nothing; a policy
// that is malformed or missing refuses the consumer's verb (exit 2) before anything is written.
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectState } from '../helpers/project-state.js';
import { git, REF, world, type World } from '../remote/kit.js';
import { serveWitness } from './helpers/serve.js';
import { call, startServer } from '../agents/kit.js';

let w: World;
let witness: ChildProcess | null = null;
let fake: Server | null = null;
afterEach(() => {
  witness?.kill('SIGTERM');
  witness = null;
  fake?.close();
  fake = null;
  w?.cleanup();
});

const refOf = () => git(['--git-dir', w.bare, 'rev-parse', REF]).trim();

/** ann joined (genesis published), a witness of the ledger's keys served, the policy beside every trust file. */
async function joinedWithWitness(names = ['ann', 'ben']) {
  w = world(names);
  const [ann] = w.machines;
  expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
  const vkeys = (await ann.run(['head', '--vkeys'])).stdout.trim().split('\n');
  expect(vkeys).toHaveLength(names.length);
  const state = join(w.root, 'witness');
  const init = ann.spawnSync(['witness', 'init', '--state', state, '--name', 'witness.test/w1', ...vkeys.flatMap((v) => ['--log', v])]);
  expect(init.code, init.stderr).toBe(0);
  const served = serveWitness(state);
  witness = served.child;
  const url = await served.url;
  const policy = (u: string) => `witness w1 ${init.stdout.trim()} ${u}\nquorum w1\n`;
  for (const m of w.machines) writeFileSync(join(m.dir, 'keys', 'tlog-policy'), policy(url));
  return { ann, policy, url };
}

describe('when a writer\'s witness is down', () => {
  it('the write is published (exit 0) and says so; status and doctor name the witness; its next publication is cosigned again', async () => {
    const { ann, policy } = await joinedWithWitness(['ann']);
    const ok = await ann.run(['start', 'item', '--summary', 's']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain('witness');
    witness!.kill('SIGTERM');
    await new Promise((r) => witness!.once('exit', r));
    witness = null;
    const before = refOf();
    const down = await ann.run(['note', 'item', '--text', 'while the witness is down']);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toMatch(/^ledger: warning: witness w1 did not answer within 5s \(absent\)/m);
    expect(refOf()).not.toBe(before);
    const status = await ann.run(['status']);
    expect(status.stdout).toMatch(/witness w1 \(absent\) did not cosign the publication of seq \d+/);
    const doctor = await ann.run(['doctor', '--json']);
    const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string; detail: string }[];
    expect(checks.find((c) => c.name === 'witnesses')).toMatchObject({ status: 'warn' });
    // Back up (on another port: the policy says where): the next publication is cosigned, and
    // brings the witness up from the size it last saw with a consistency proof.
    const again = serveWitness(join(w.root, 'witness'));
    witness = again.child;
    writeFileSync(join(ann.dir, 'keys', 'tlog-policy'), policy(await again.url));
    const back = await ann.run(['note', 'item', '--text', 'the witness is back']);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toContain('witness');
    expect((await ann.run(['status'])).stdout).not.toContain('did not cosign');
    expect(git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:checkpoint`])).toMatch(/^— witness\.test\/w1 /m);
  });
});

describe('when a witness answers something that is not a cosignature', () => {
  it('counts for nothing: the writer warns (exit 0), a fresh join is refused (14) with nothing written', async () => {
    const { ann, policy } = await joinedWithWitness(['ann', 'ben']);
    const ben = w.machines[1];
    // A server on loopback that answers every add-checkpoint 200 with junk.
    fake = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('— not a cosignature\n'));
    });
    await new Promise<void>((r) => fake!.listen(0, '127.0.0.1', () => r()));
    const junkUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
    for (const m of w.machines) writeFileSync(join(m.dir, 'keys', 'tlog-policy'), policy(junkUrl));
    const r = await ann.run(['start', 'item', '--summary', 's']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^ledger: warning: witness w1 refused: /m);
    const before = projectState(ben.dir);
    const join_ = await ben.run(['init', '--remote', w.url]);
    expect(join_.code, join_.stderr).toBe(14);
    expect(join_.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(ben.ledger)).toBe(false);
    expect(projectState(ben.dir)).toEqual(before);
  });
});

describe('when the policy itself is bad', () => {
  it('a malformed or missing policy refuses init --remote, sync and gate (exit 2) and nothing is written', async () => {
    const { ann } = await joinedWithWitness(['ann', 'ben']);
    const ben = w.machines[1];
    writeFileSync(join(ben.dir, 'keys', 'tlog-policy'), 'witness w1 not-a-vkey\nquorum w1\n');
    const before = projectState(ben.dir);
    const bad = await ben.run(['init', '--remote', w.url, '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.code).toBe('INPUT_POLICY');
    expect(existsSync(ben.ledger)).toBe(false);
    expect(projectState(ben.dir)).toEqual(before);
    const annBefore = projectState(ann.dir);
    const ref = refOf();
    for (const args of [['sync', '--policy', 'nowhere.policy'], ['gate', 'op', '--policy', 'nowhere.policy']]) {
      const r = await ann.run([...args, '--json']);
      expect(r.code, `${args[0]}: ${r.stdout}`).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe('INPUT_NOT_FOUND');
    }
    expect(projectState(ann.dir)).toEqual(annBefore);
    expect(refOf()).toBe(ref);
  });
});

describe('when an agent writes through the MCP server in a joined ledger under a policy', () => {
  it('the server sends the publication to the witness after answering, and the cosigned checkpoint reaches the remote', async () => {
    const { ann } = await joinedWithWitness(['ann']);
    const s = await startServer(ann.dir, 'claude', ann.env);
    try {
      const r = await call(s, 'start', { slug: 'item', summary: 'through MCP' });
      expect(r.isError, r.text).toBe(false);
      // The collection runs after the answer, in the server: wait for what it publishes, however
      // long a loaded machine takes (the suite's test timeout is the hang guard; no result
      // depends on how long it takes).
      const seq = (JSON.parse(readFileSync(join(ann.dir, '.ledger', 'HEAD'), 'utf8')) as { seq: number }).seq;
      let note = '';
      while (!/^— witness\.test\/w1 /m.test(note)) {
        await new Promise((res) => setTimeout(res, 100));
        const got = spawnSync('git', ['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:checkpoint`], { encoding: 'utf8' });
        note = got.status === 0 ? got.stdout : '';
      }
      expect(note).toMatch(/^— witness\.test\/w1 /m);
      // The cosigned checkpoint is of the tool's own publication (its size: every record up to it).
      expect(note.split('\n')[1]).toBe(String(seq + 1));
      expect(s.stderr()).not.toContain('witness w1');
    } finally {
      await s.close();
    }
  });
});
