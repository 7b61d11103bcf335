// `ledger mcp`'s front (src/agents/mcp-front.ts, issue 22): `initialize` and `tools/list` are
// answered from the listing the build computed, before the MCP SDK or zod is loaded; the SDK then
// reads the whole session from the start and answers the same two again, and those answers must
// be the ones sent. Observed on the shipped binary, with a preload that records, in order, every
// write to stdout and every module loaded from the SDK or zod.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { mcpListing } from '../../src/agents/mcp-listing.js';
import { BIN, ROOT, scratch } from '../helpers/cli.js';
import { BASE_ENV, gitProject, type GitProject } from './kit.js';

let p: GitProject;
let s: ReturnType<typeof scratch>;
beforeAll(async () => {
  p = await gitProject();
  s = scratch('ledger-front-');
  writeFileSync(join(s.dir, 'preload.cjs'), `
const Module = require('module');
const fs = require('fs');
const events = [];
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const r = load.apply(this, arguments);
  try {
    const f = Module._resolveFilename(request, parent, isMain);
    if (/\\/node_modules\\/(@modelcontextprotocol\\/sdk|zod)\\//.test(f) && !events.includes('load')) events.push('load');
  } catch {}
  return r;
};
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = function (chunk, ...rest) {
  for (const line of String(chunk).split('\\n').filter(Boolean)) {
    try { events.push('answer ' + JSON.parse(line).id); } catch { events.push('other'); }
  }
  return write(chunk, ...rest);
};
process.on('exit', () => fs.writeFileSync(process.env.EVENTS_OUT, JSON.stringify(events)));
`);
});
afterAll(() => {
  p.cleanup();
  s.cleanup();
});

const rpc = (id: number | null, method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, ...(params === undefined ? {} : { params }) });
const init = (protocolVersion: string, clientInfo: unknown = { name: 't', version: '1' }) => rpc(1, 'initialize', { protocolVersion, capabilities: {}, clientInfo });

interface Session { events: string[]; answers: Map<number, { result?: Record<string, unknown>; error?: { message: string } }>; stderr: string }

/** One session of the shipped `ledger mcp`: these lines on stdin, then end of input. */
function session(lines: string[]): Session {
  const out = join(s.dir, 'events.json');
  const r = spawnSync(process.execPath, ['--require', join(s.dir, 'preload.cjs'), BIN, 'mcp'], {
    cwd: p.dir, input: lines.map((l) => `${l}\n`).join(''), encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude', EVENTS_OUT: out },
  });
  expect(r.status, r.stderr).toBe(0);
  const answers = new Map(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number }).map((a) => [a.id, a]));
  return { events: JSON.parse(readFileSync(out, 'utf8')) as string[], answers: answers as Session['answers'], stderr: r.stderr };
}

describe('when a client starts a session', () => {
  it('gets initialize and tools/list answered before the SDK or zod is loaded, and the SDK, given the session, agrees with both', () => {
    const r = session([init('2025-06-18'), rpc(null, 'notifications/initialized'), rpc(2, 'tools/list'), rpc(3, 'tools/call', { name: 'status', arguments: {} })]);
    expect(r.events.indexOf('answer 2')).toBeGreaterThanOrEqual(0);
    expect(r.events.indexOf('answer 2')).toBeLessThan(r.events.indexOf('load'));
    expect(r.events.filter((e) => e.startsWith('answer'))).toEqual(['answer 1', 'answer 2', 'answer 3']);
    // The SDK answered 1 and 2 again, and its answers were the ones sent (else a line says so).
    expect(r.stderr).not.toMatch(/differs/);
    expect(r.answers.get(1)!.result).toMatchObject({ protocolVersion: '2025-06-18', serverInfo: { name: 'handoff-ledger' }, capabilities: { tools: {} } });
    expect(r.answers.get(2)!.result).toEqual({ tools: mcpListing().tools });
    expect(r.answers.get(3)!.result).toMatchObject({ structuredContent: { ok: true } });
  });

  it('agrees to a protocol version the SDK does not know by the SDK\'s latest, as the SDK would', () => {
    const r = session([init('1999-01-01'), rpc(2, 'ping')]);
    expect(r.answers.get(1)!.result).toMatchObject({ protocolVersion: LATEST_PROTOCOL_VERSION });
    expect(r.answers.get(2)!.result).toEqual({});
    expect(r.stderr).not.toMatch(/differs/);
  });

  it('leaves a malformed initialize, and everything after it, to the SDK, which refuses it as before', () => {
    const r = session([init('2025-06-18', { name: 't' }), rpc(2, 'tools/list')]);
    expect(r.events.indexOf('load')).toBeLessThan(r.events.indexOf('answer 1'));
    expect(r.answers.get(1)!.error).toBeDefined();
    expect(r.answers.get(2)!.result).toEqual({ tools: mcpListing().tools });
  });

  it('a client that hangs up after the listing is answered, and nothing is left running', () => {
    const r = session([init('2025-06-18'), rpc(2, 'tools/list')]);
    expect([...r.answers.keys()]).toEqual([1, 2]);
    expect(r.stderr).toMatch(/stdin closed; stopped/);
  });
});

describe('when the build wrote the listing', () => {
  it('is exactly what the tools declare, beside the bundle and beside the compiled front', () => {
    const want = JSON.parse(JSON.stringify(mcpListing()));
    for (const f of ['dist/cli/mcp-listing.json', 'dist/src/agents/mcp-listing.json']) expect(JSON.parse(readFileSync(join(ROOT, f), 'utf8')), f).toEqual(want);
  });
});
