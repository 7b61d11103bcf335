// Issue 23 finding 10 and deliverable 8: every input is bounded, and what the per-user state
// directory says is believed only from a folder no one else can write. Once: `ledger hook` read
// /dev/zero to 640 MB and waited 20 s for a stdin that never closed (5 s documented); an MCP
// request over 10 MB ended the server; a 700 MB batch was refused as "not valid UTF-8"; the state
// directory was trusted without an owner or mode check; queued drafts carried any agent name.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, initProject, snapshot, withSuiteEnv } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';
import { AGENT, isRoot, oneLine, SKIP } from '../helpers/two-users.js';
import { BATCH_MAX_BYTES } from '../../src/cli/commands/write-run.js';
import { MAX_MESSAGE_BYTES } from '../../src/agents/mcp-front.js';
import { world, remoteState, type World } from '../remote/kit.js';

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

async function project() {
  const p = await initProject('inputs');
  cleanup = p.cleanup;
  return p;
}

const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', ...withSuiteEnv(extra) });

describe('ledger hook reads a bounded stdin', () => {
  it('/dev/zero: it stops past 1 MiB, answers nothing and exits 0 (no 640 MB read)', async () => {
    const p = await project();
    const zero = openSync('/dev/zero', 'r');
    try {
      // A hang guard only (no timing assertion): a hook that read on forever is killed.
      const r = spawnSync(process.execPath, [BIN, 'hook', 'claude', 'session-start'], { cwd: p.dir, env: env({ LEDGER_AGENT: 'claude' }), stdio: [zero, 'pipe', 'pipe'], encoding: 'utf8', timeout: 120_000 });
      expect(r.signal).toBeNull();
      expect(r.status).toBe(0);
      expect(r.stdout).toBe('');
    } finally {
      closeSync(zero);
    }
  });

  it('a stdin that never closes: it answers nothing at its 5 s deadline and exits 0', async () => {
    const p = await project();
    const child = spawn(process.execPath, [BIN, 'hook', 'claude', 'session-start'], { cwd: p.dir, env: env({ LEDGER_AGENT: 'claude' }), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.write('{"hook_event_name":"SessionStart",'); // and never the rest, never an end
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(guard);
    child.stdin.destroy();
    expect(code).toBe(0);
    expect(out).toBe('');
  });
});

describe('ledger mcp refuses a message over 10 MiB and goes on', () => {
  it('answers it with a JSON-RPC error (id null), then answers the next request', async () => {
    const p = await project();
    const child = spawn(process.execPath, [BIN, 'mcp'], { cwd: p.dir, env: env({ LEDGER_AGENT: 'claude' }), stdio: ['pipe', 'pipe', 'pipe'] });
    const answers: Record<string, unknown>[] = [];
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        answers.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    });
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // One request of MAX_MESSAGE_BYTES + 2 bytes, written in pieces as a pipe delivers it.
    const big = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"note","arguments":{"slug":"x","text":"${'y'.repeat(MAX_MESSAGE_BYTES)}"}}}`;
    for (let at = 0; at < big.length; at += 1 << 20) child.stdin.write(big.slice(at, at + (1 << 20)));
    child.stdin.write('\n');
    send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (answers.some((a) => a.id === 3)) {
          clearInterval(check);
          resolve();
        }
      }, 20);
      child.on('exit', () => {
        clearInterval(check);
        resolve();
      });
    });
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (c) => resolve(c))));
    clearTimeout(guard);
    expect(answers.find((a) => a.id === null)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('is refused') } });
    expect(answers.find((a) => a.id === 3)).toMatchObject({ result: { tools: expect.any(Array) } });
    expect(answers.some((a) => a.id === 2)).toBe(false);
    expect(code).toBe(0);
  });
});

describe('append --batch of more than 256 MiB', () => {
  it('is refused as too large (exit 2, INPUT_TOO_LARGE), not as "not valid UTF-8", and nothing changes', async () => {
    const p = await project();
    const before = snapshot(p.ledger);
    const r = spawnSync('/bin/sh', ['-c', `head -c ${BATCH_MAX_BYTES + 4096} /dev/zero | "$0" "$1" append --batch --agent ci --json`, process.execPath, BIN], { cwd: p.dir, env: env(), encoding: 'utf8', timeout: 300_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_TOO_LARGE');
    expect(oneLine({ code: r.status!, stdout: r.stdout, stderr: r.stderr })).toMatch(/`append --batch` input is over 256 MiB/);
    expect(snapshot(p.ledger)).toEqual(before);
  });
});

describe.skipIf(!isRoot)(`a per-user state directory someone else could write (${isRoot ? 'root and nobody' : SKIP})`, () => {
  for (const [what, spoil] of [
    ['owned by the agent', (d: string) => chownSync(d, AGENT, AGENT)],
    ['writable by anyone', (d: string) => chmodSync(d, 0o777)],
  ] as const) {
    it(`${what}: a writer refuses before it reads a mark (exit 3, OP_INSECURE_PATH), and nothing changes`, async () => {
      const p = await project();
      const state = join(p.dir, 'state');
      mkdirSync(state, { mode: 0o700 });
      const ok = spawnSync(process.execPath, [BIN, 'start', 'a', '--agent', 'claude', '--summary', 's'], { cwd: p.dir, env: env({ LEDGER_STATE_DIR: state }), encoding: 'utf8' });
      expect(ok.status, ok.stderr).toBe(0);
      spoil(state);
      const before = projectState(p.dir);
      const r = spawnSync(process.execPath, [BIN, 'start', 'b', '--agent', 'claude', '--summary', 's', '--json'], { cwd: p.dir, env: env({ LEDGER_STATE_DIR: state }), encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(3);
      expect(JSON.parse(r.stdout).error.code).toBe('OP_INSECURE_PATH');
      expect(oneLine({ code: r.status!, stdout: r.stdout, stderr: r.stderr })).toContain(state);
      expect(projectState(p.dir)).toEqual(before);
    });
  }
});

describe('a queued draft naming an agent the key may not sign for', () => {
  let w: World;
  afterEach(() => w?.cleanup());

  it('is dropped and reported by sync, never signed or published', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    // ann's key is pinned for ann alone.
    const trust = JSON.parse(readFileSync(join(ann.dir, 'keys', 'trust.json'), 'utf8'));
    trust.keys[0].agents = ['ann'];
    writeFileSync(join(ann.dir, 'keys', 'trust.json'), `${JSON.stringify(trust)}\n`);
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    const hidden = `${w.bare}.away`;
    spawnSync('mv', [w.bare, hidden]);
    const queued = await ann.run(['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'success', '--offline']);
    expect(queued.code, queued.stderr).toBe(0);
    spawnSync('mv', [hidden, w.bare]);
    // The queue is this user's (StrictModes keeps others out); a draft in it naming another agent:
    const outbox = join(remoteState(ann), 'outbox.json');
    const q = JSON.parse(readFileSync(outbox, 'utf8'));
    q.entries[0].drafts[0].agent = 'mallory';
    writeFileSync(outbox, JSON.stringify(q));
    const before = snapshot(ann.ledger);
    const s = await ann.run(['sync', '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).dropped[0].reason).toMatch(/may not sign it as mallory/);
    expect(snapshot(ann.ledger)).toEqual(before);
  });
});
