// Start-up stays light (issue 16): the MCP SDK, zod and smol-toml are external to the CLI bundle
// and loaded only by the verbs that need them: `ledger mcp` (SDK, zod) and `ledger setup codex`
// (smol-toml). Every other verb, the hooks included, loads none of them. Observed on the shipped
// binary with a preload that records every package Node loads.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, initProject, scratch } from '../helpers/cli.js';
import { BASE_ENV } from './kit.js';

const HEAVY = ['@modelcontextprotocol/sdk', 'zod', 'smol-toml'];

let p: Awaited<ReturnType<typeof initProject>>;
let s: ReturnType<typeof scratch>;
beforeEach(async () => {
  p = await initProject('startup');
  s = scratch('ledger-preload-');
  // Records the request of every module loaded from node_modules, at exit.
  writeFileSync(join(s.dir, 'preload.cjs'), `
const Module = require('module');
const fs = require('fs');
const seen = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const r = load.apply(this, arguments);
  try { const f = Module._resolveFilename(request, parent, isMain); if (f.includes('/node_modules/')) seen.add(f.split('/node_modules/').pop()); } catch {}
  return r;
};
process.on('exit', () => fs.writeFileSync(process.env.LOADED_OUT, [...seen].join('\\n')));
`);
});
afterEach(() => {
  p.cleanup();
  s.cleanup();
});

function loaded(args: string[], input = ''): string[] {
  const out = join(s.dir, 'loaded.txt');
  const r = spawnSync(process.execPath, ['--require', join(s.dir, 'preload.cjs'), BIN, ...args], {
    cwd: p.dir, input, encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude', LOADED_OUT: out },
  });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(out, 'utf8').split('\n').filter(Boolean);
}

const heavy = (files: string[]) => files.filter((f) => HEAVY.some((h) => f.startsWith(h + '/')));

describe('when a verb other than mcp runs', () => {
  it('loads neither the MCP SDK nor zod nor smol-toml (status, start, the hooks, setup claude)', () => {
    expect(heavy(loaded(['status']))).toEqual([]);
    expect(heavy(loaded(['start', 'x', '--summary', 's']))).toEqual([]);
    expect(heavy(loaded(['hook', 'claude', 'session-start'], '{"hook_event_name":"SessionStart","source":"startup"}'))).toEqual([]);
    expect(heavy(loaded(['hook', 'claude', 'stop'], '{"hook_event_name":"Stop","stop_hook_active":false}'))).toEqual([]);
    expect(heavy(loaded(['setup', 'claude']))).toEqual([]);
  });

  it('setup codex loads smol-toml, and only that', () => {
    const files = heavy(loaded(['setup', 'codex']));
    expect(files.some((f) => f.startsWith('smol-toml/'))).toBe(true);
    expect(files.filter((f) => !f.startsWith('smol-toml/'))).toEqual([]);
  });
});

describe('when ledger mcp runs from the shipped bundle', () => {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

  // Before the first request the front does not answer, it loads neither (test/agents/mcp-front.test.ts).
  it('loads the SDK and zod from node_modules for the first request the front does not answer', () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    const files = heavy(loaded(['mcp'], `${init}\n${ping}\n`));
    expect(files.some((f) => f.startsWith('@modelcontextprotocol/sdk/'))).toBe(true);
    expect(files.some((f) => f.startsWith('zod/'))).toBe(true);
  });
});
