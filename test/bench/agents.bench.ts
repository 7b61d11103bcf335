// Issue 16's targets. (1) A tool call on a warm `ledger mcp` server (`status`, and `checkpoint`
// without a test command) on a 10,000-record ledger costs at most 1.5x the same operation through
// the library in-process, plus the stdio round trip (measured as MCP `ping`, which touches no
// ledger): ratio = (call - round trip) / library. (2) `ledger hook claude session-start` and
// `stop` (the agent owns a live item and changed a file: the path that asks git) cost at most
// 1.5x `node -e ''`. (3) Issue 22: `ledger mcp` answers `tools/list` at most 2x a bare `node -e ''`
// (bareEnv on both sides), timed from the spawn to the answer's line on stdout, as a client that
// sends initialize, waits, then lists the tools sees it. Each pair is timed alternately in the
// same run.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ledger } from '../../src/ledger.js';
import { writeSecretKey } from '../../src/keys/key-file.js';
import { seedFrom, streamLedger } from '../helpers/gen-ledger.js';
import { alternate, atMost, bareEnv, median, nowMs, timeCommand, LEDGER_BIN, type BenchResult } from './bench-kit.js';

const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
const COUNT = 10_000;
const CALLS = 15;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = nowMs();
  await f();
  return nowMs() - t0;
}

async function alternateAsync(n: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  const ta: number[] = [];
  const tb: number[] = [];
  await a();
  await b();
  for (let i = 0; i < n; i++) {
    ta.push(await timed(a));
    tb.push(await timed(b));
  }
  return [median(ta), median(tb)];
}

/**
 * Milliseconds from spawning `ledger mcp` to its answer to `tools/list` on stdout, the client
 * sending `initialize`, then (on its answer) `notifications/initialized` and `tools/list`, as the
 * SDK's Client does.
 */
function timeToolsList(cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, [LEDGER_BIN, 'mcp'], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const m = JSON.parse(buf.slice(0, nl)) as { id?: number };
        buf = buf.slice(nl + 1);
        if (m.id === 1) {
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
        } else if (m.id === 2) {
          resolve(nowMs() - t0);
          child.stdin.end();
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => code !== 0 && reject(new Error(`ledger mcp exited ${code}`)));
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } });
  });
}

export default async function agentsBench(): Promise<BenchResult[]> {
  const work = join(BASE, 'bench-agents');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const dir = join(work, '.ledger');
  const key = join(work, 'keys', 'harness.key');
  streamLedger(dir, { count: COUNT, start: '2020-01-01T00:00:00.000Z' });
  writeSecretKey(key, 'harness', seedFrom('harness'));
  const env = { PATH: process.env.PATH ?? '', HOME: work, LEDGER_STATE_DIR: join(work, 'state'), LEDGER_AGENT: 'claude' };
  const lib = () => Ledger.open({ dir, key });
  await lib().start({ slug: 'bench-item', agent: 'claude', summary: 'the benchmark item' });
  const checkpoint = { slug: 'bench-item', agent: 'claude', done: 'a step', state: 'steady', next: 'the next step' };

  const transport = new StdioClientTransport({ command: process.execPath, args: [LEDGER_BIN, 'mcp'], cwd: work, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const results: BenchResult[] = [];
  try {
    const roundTrip = median(await Promise.all([0]).then(async () => {
      const ts: number[] = [];
      for (let i = 0; i < CALLS; i++) ts.push(await timed(() => client.ping()));
      return ts;
    }));
    const [mcpStatus, libStatus] = await alternateAsync(CALLS, () => client.callTool({ name: 'status', arguments: {} }), async () => lib().status({ agent: 'claude' }));
    results.push(atMost('mcp status, warm, 10k records', (mcpStatus - roundTrip) / libStatus, 1.5,
      `call ${mcpStatus.toFixed(1)} ms, round trip ${roundTrip.toFixed(1)} ms, library ${libStatus.toFixed(1)} ms`));
    const [mcpCp, libCp] = await alternateAsync(CALLS,
      () => client.callTool({ name: 'checkpoint', arguments: { slug: 'bench-item', done: 'a step', state: 'steady', next: 'the next step' } }),
      () => lib().checkpoint(checkpoint));
    results.push(atMost('mcp checkpoint (no tests_cmd), warm, 10k records', (mcpCp - roundTrip) / libCp, 1.5,
      `call ${mcpCp.toFixed(1)} ms, round trip ${roundTrip.toFixed(1)} ms, library ${libCp.toFixed(1)} ms`));
  } finally {
    await client.close();
  }

  // Start-up to the tools listed, on the 10,000-record ledger, in the bare environment.
  const bare = bareEnv(env);
  const bareNode = () => {
    const t0 = nowMs();
    spawnSync(process.execPath, ['-e', ''], { cwd: work, env: bare });
    return nowMs() - t0;
  };
  const [list, listNode] = await alternateAsync(CALLS, () => timeToolsList(work, bare), async () => bareNode());
  results.push(atMost('mcp tools/list from spawn (bare env)', list / listNode, 2, `${list.toFixed(1)} ms against node -e '' ${listNode.toFixed(1)} ms`));

  // The hooks, on a small git project where the agent owns a live item and changed a file.
  const proj = join(work, 'project');
  mkdirSync(proj);
  const pdir = join(proj, '.ledger');
  const pkey = join(proj, 'keys', 'harness.key');
  writeSecretKey(pkey, 'harness', seedFrom('harness'));
  Ledger.init({ dir: pdir, key: pkey, agent: 'harness' });
  await Ledger.open({ dir: pdir, key: pkey }).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
  for (let i = 0; i < 20; i++) await Ledger.open({ dir: pdir, key: pkey }).checkpoint({ ...checkpoint, slug: 'fix-tz', views: false });
  writeFileSync(join(proj, '.gitignore'), '.ledger/\nkeys/\n');
  execFileSync('git', ['init', '-q'], { cwd: proj, env });
  writeFileSync(join(proj, 'app.js'), 'changed\n');
  // As the other benches time it: node with this process's environment; the hooks with it too.
  const henv = { ...process.env, LEDGER_AGENT: 'claude', LEDGER_STATE_DIR: join(work, 'state') };
  const node = () => timeCommand(process.execPath, ['-e', ''], { cwd: proj });
  // The CLI's own start, for the reader: a hook costs that plus its own work.
  const [v, nv] = alternate(20, () => timeCommand(process.execPath, [LEDGER_BIN, '--version'], { cwd: proj, env: henv }), node);
  console.log(`(reference: ledger --version ${v.toFixed(1)} ms against node -e '' ${nv.toFixed(1)} ms: ${(v / nv).toFixed(2)}x)`);
  for (const [event, payload] of [
    ['session-start', '{"hook_event_name":"SessionStart","source":"startup"}'],
    ['stop', '{"hook_event_name":"Stop","stop_hook_active":false}'],
  ] as const) {
    const hook = () => timeCommand(process.execPath, [LEDGER_BIN, 'hook', 'claude', event], { cwd: proj, env: henv, input: payload });
    const [h, n] = alternate(20, hook, node);
    results.push(atMost(`hook claude ${event}`, h / n, 1.5, `${h.toFixed(1)} ms against node -e '' ${n.toFixed(1)} ms`));
  }
  rmSync(work, { recursive: true, force: true });
  return results;
}
