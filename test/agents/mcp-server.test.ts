// `ledger mcp` driven by the MCP SDK's own Client over a real stdio pipe, spawning the built
// binary (dist/cli/ledger.cjs): what it lists, a whole work item through tool calls, identity,
// refusals that change nothing, and two servers racing for one item.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, gitProject, ledgerBytes, records, startServer, type GitProject, type Server } from './kit.js';

const TOOLS = ['status', 'resume', 'start', 'checkpoint', 'finish', 'release', 'note', 'gate', 'log'];

let p: GitProject;
let servers: Server[] = [];
const server = async (agent: string | null) => {
  const s = await startServer(p.dir, agent);
  servers.push(s);
  return s;
};

beforeEach(async () => {
  p = await gitProject();
});
afterEach(async () => {
  for (const s of servers) await s.close();
  servers = [];
  p.cleanup();
});

describe('when a client lists the tools', () => {
  it('gets every tool of SPEC 12 with a description, a strict input schema without "agent", and an output schema', async () => {
    const s = await server('claude');
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(60);
      expect(t.inputSchema.type, t.name).toBe('object');
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
      expect(Object.keys(t.inputSchema.properties ?? {}), t.name).not.toContain('agent');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(Object.keys(t.outputSchema?.properties ?? {}), t.name).toEqual(expect.arrayContaining(['ok', 'summary', 'next_action']));
      expect(t.annotations?.readOnlyHint, t.name).toBe(['status', 'resume', 'gate', 'log'].includes(t.name));
    }
    // The command line's flag names in snake_case (SPEC 12).
    const props = (n: string) => Object.keys(tools.find((t) => t.name === n)!.inputSchema.properties ?? {});
    expect(props('checkpoint')).toEqual(expect.arrayContaining(['slug', 'done', 'state', 'next', 'tests_cmd', 'verified', 'attempted', 'blockers', 'evidence']));
    expect(props('finish')).toEqual(expect.arrayContaining(['outcome', 'invariants', 'evidence']));
    expect(props('note')).toEqual(['slug', 'text']);
    expect(props('gate')).toContain('op');
    expect(props('log')).toEqual(expect.arrayContaining(['op', 'limit']));
  });

  it('tells the client the workflow at initialize, and logs on stderr only', async () => {
    const s = await server('claude');
    expect(s.client.getInstructions()).toMatch(/status.*start.*checkpoint.*finish.*release/s);
    await call(s, 'status', {});
    expect(s.stderr()).toMatch(/ledger mcp: serving 9 tools as claude/);
    expect(s.stderr()).toMatch(/ledger mcp: status: ok/);
  });
});

describe('when more items are open than a status answer holds (it goes into an agent\'s context)', () => {
  it('lists at most STATUS_MAX_ROWS, the agent\'s own always, with the totals beside; the summary counts all', async () => {
    const { STATUS_MAX_ROWS } = await import('../../src/handoff/status.js');
    const { Ledger } = await import('../../src/ledger.js');
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys', 'harness.key') });
    const n = STATUS_MAX_ROWS + 5;
    // Speed: started from a folder outside any work tree, so each records no git facts (one git
    // process instead of eight per start); what this test reads is the items, not their code.
    const elsewhere = join(p.dir, 'not-a-folder');
    for (let i = 0; i < n; i++) await ledger.start({ slug: `other-${String(i).padStart(2, '0')}`, agent: 'codex', summary: `item ${i}`, views: false, cwd: elsewhere });
    await ledger.start({ slug: 'zz-mine', agent: 'claude', summary: 'my own item', views: false });
    const s = await server('claude');
    const st = await call(s, 'status', {});
    expect(st.isError).toBe(false);
    const out = st.structured as { items: { slug: string; mine: boolean }[]; items_total?: number; summary: string };
    expect(out.items).toHaveLength(STATUS_MAX_ROWS);
    expect(out.items[0]).toMatchObject({ slug: 'zz-mine', mine: true });
    expect(out.items_total).toBe(n + 1);
    expect(out.summary).toContain(`${n + 1} open work items`);
  });
});

describe('when an agent works one item through tool calls', () => {
  it('start, a checkpoint whose tests_cmd fails, resume, finish, gate: every step as the ledger recorded it', async () => {
    const s = await server('claude');
    writeFileSync(join(p.dir, 'tz.js'), 'export const tz = 1;\n');

    const st = await call(s, 'status', {});
    expect(st.isError).toBe(false);
    expect(st.structured).toMatchObject({ ok: true, agent: 'claude', items: [] });
    expect(st.structured!.next_action).toMatch(/start/);

    const started = await call(s, 'start', { slug: 'fix-tz', summary: 'fix toLocal() for negative offsets' });
    expect(started.isError, started.text).toBe(false);
    expect(started.structured).toMatchObject({ ok: true, slug: 'fix-tz', seq: 1 });
    expect(started.structured!.next_action).toMatch(/checkpoint/);
    // structuredContent and the text block say the same (MCP's advice for text-only clients).
    expect(JSON.parse(started.text)).toEqual(started.structured);

    const cp = await call(s, 'checkpoint', {
      slug: 'fix-tz', done: 'wrote toLocal()', state: 'one test fails', next: 'fix the -05:00 case',
      verified: ['parses +02:00'], attempted: ['the -05:00 case'], blockers: ['DST unknown'],
      tests_cmd: 'echo "FAIL tz.test.js: expected -05:00"; exit 3',
    });
    expect(cp.isError, cp.text).toBe(false);
    expect(cp.structured).toMatchObject({ ok: true, seq: 2, tests: { command: expect.stringContaining('exit 3'), exit_code: 3 } });
    expect((cp.structured!.tests as { excerpt: string }).excerpt).toContain('FAIL tz.test.js');
    expect(cp.structured!.next_action).toMatch(/tests failed \(exit 3\)/);
    // The server ran it: the record carries the exit code it observed, and the agent is the server's.
    const rec = records(p.ledger)[2] as { kind: string; agent: string; tests: { exit_code: number }; attempted: string[] };
    expect(rec).toMatchObject({ kind: 'checkpoint', agent: 'claude', tests: { exit_code: 3 }, attempted: ['the -05:00 case'] });

    const resumed = await call(s, 'resume', {});
    expect(resumed.isError, resumed.text).toBe(false);
    expect(resumed.structured).toMatchObject({ mode: 'resume', slug: 'fix-tz', owner: 'claude', status: 'open' });
    const lines = (resumed.structured!.lines as string[]).join('\n');
    expect(lines).toContain('exit 3');
    expect(lines).toContain('fix the -05:00 case');
    expect((resumed.structured!.lines as string[]).length).toBeLessThanOrEqual(80);
    expect(resumed.structured!.next_action).toMatch(/fix the -05:00 case/);

    const fin = await call(s, 'finish', {
      slug: 'fix-tz', done: 'fixed -05:00', state: 'all tz tests pass', next: 'none: release 1.4',
      tests_cmd: 'echo ok', evidence: { src: 'tz.js' }, invariants: { tests: { ok: true, detail: 'echo ok exited 0' } },
    });
    expect(fin.isError, fin.text).toBe(false);
    expect(fin.structured).toMatchObject({ ok: true, outcome: 'success', tests: { exit_code: 0 } });

    const gate = await call(s, 'gate', { op: 'fix-tz', require_invariant: ['tests'] });
    expect(gate.isError, gate.text).toBe(false);
    expect(gate.structured).toMatchObject({ ok: true, proceed: true, failed_term: null });

    // The evidence changes: the gate holds, naming state_current.
    writeFileSync(join(p.dir, 'tz.js'), 'export const tz = 2;\n');
    const held = await call(s, 'gate', { op: 'fix-tz' });
    expect(held.isError).toBe(false);
    expect(held.structured).toMatchObject({ proceed: false, failed_term: 'state_current' });

    const log = await call(s, 'log', { op: 'fix-tz' });
    expect((log.structured!.records as { kind: string }[]).map((r) => r.kind)).toEqual(['finish', 'checkpoint', 'start']);
    // Views were rewritten by each write.
    expect(readFileSync(join(p.dir, 'HANDOFF.md'), 'utf8')).toContain('fix-tz');
  });
});

describe('when record text holds control and bidi characters', () => {
  it('the text fields a model reads show them as escapes; the record keeps them exactly', async () => {
    const s = await server('claude');
    const evil = 'fix \u202egnirts\u001b[2J now';
    expect((await call(s, 'start', { slug: 'evil', summary: 'x' })).isError).toBe(false);
    expect((await call(s, 'checkpoint', { slug: 'evil', done: 'd', state: 's', next: evil })).isError).toBe(false);
    const r = await call(s, 'resume', { slug: 'evil' });
    const text = [r.structured!.next_action, ...(r.structured!.lines as string[])].join('\n');
    expect(text).toContain('fix \\u202Egnirts\\u001B[2J now');
    expect(text).not.toMatch(/[\u202e\u001b]/);
    expect(records(p.ledger).at(-1)).toMatchObject({ next: evil });
  });
});

describe('when an agent tries to write as another', () => {
  it('an "agent" argument is refused by every writing tool, and the record is always the server\'s agent', async () => {
    const s = await server('claude');
    const before = ledgerBytes(p);
    for (const [tool, args] of [
      ['start', { slug: 'x', summary: 's', agent: 'codex' }],
      ['note', { slug: 'x', text: 't', agent: 'codex' }],
      ['checkpoint', { slug: 'x', done: 'd', state: 's', next: 'n', agent: 'codex' }],
      ['status', { agent: 'codex' }],
    ] as const) {
      const r = await call(s, tool, args);
      expect(r.isError, tool).toBe(true);
      expect(r.text, tool).toMatch(/"agent" is not an argument: this server writes as the agent it was started for/);
      expect(r.text.split('\n')).toHaveLength(1);
    }
    expect(ledgerBytes(p)).toEqual(before);
    const ok = await call(s, 'start', { slug: 'x', summary: 's' });
    expect(ok.isError).toBe(false);
    expect(records(p.ledger)[1]).toMatchObject({ kind: 'start', agent: 'claude' });
  });

  it('a server without --agent or LEDGER_AGENT does not start', async () => {
    await expect(startServer(p.dir, null)).rejects.toThrow();
  });
});

describe('when a call is refused', () => {
  it('is an isError result with one line, and records.jsonl, HEAD and the views stay byte-identical', async () => {
    const s = await server('claude');
    expect((await call(s, 'start', { slug: 'fix-tz', summary: 'fix it' })).isError).toBe(false);
    const other = await server('codex');
    const before = ledgerBytes(p);
    const cases: [Server, string, Record<string, unknown>, RegExp][] = [
      [s, 'start', { slug: 'bad slug!', summary: 's' }, /slug/],
      [s, 'start', { slug: 'y', summary: '   ' }, /--summary is empty/],
      [s, 'checkpoint', { slug: 'fix-tz', done: 'd', state: 's' }, /next/],
      [s, 'checkpoint', { slug: 'fix-tz', done: 'd', state: 's', next: 'n', tests: 'x', tests_cmd: 'true' }, /tests and tests_cmd/],
      [s, 'checkpoint', { slug: 'nope', done: 'd', state: 's', next: 'n' }, /nope/],
      [other, 'checkpoint', { slug: 'fix-tz', done: 'd', state: 's', next: 'n', tests_cmd: 'touch ran-anyway' }, /claude/],
      [other, 'start', { slug: 'fix-tz', summary: 'mine now' }, /lease/],
      [other, 'release', { slug: 'fix-tz' }, /claude/],
      [s, 'finish', { slug: 'fix-tz', done: 'd', state: 's', next: 'n', evidence: { x: '../../etc/passwd' } }, /outside|project/],
      [s, 'gate', { op: 'fix-tz', max_age: 'soon' }, /max_age/],
      [s, 'note', { slug: 'nope', text: 'hello' }, /nope/],
      // Issue 26.4: a typo'd slug is met with "did you mean", never with an offer to start it.
      [s, 'checkpoint', { slug: 'fix-zt', done: 'd', state: 's', next: 'n' }, /^no work item fix-zt in this ledger; did you mean `fix-tz`\? call status for the open items$/],
      [s, 'note', { slug: 'fixtz', text: 'hello' }, /did you mean `fix-tz`\?/],
      [other, 'start', { slug: 'fix-t', summary: 'a typo away' }, /^no work item fix-t in this ledger; did you mean `fix-tz`\?; call resume with slug fix-tz to read it; to start fix-t as a new item anyway, call start with new_item: true$/],
      [s, 'no-such-tool', {}, /no tool named/],
      [s, 'log', { limit: 0 }, /limit/],
    ];
    for (const [srv, tool, args, why] of cases) {
      const r = await call(srv, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe(true);
      expect(r.text, tool).toMatch(why);
      expect(r.text.split('\n'), tool).toHaveLength(1);
      expect(r.structured, tool).toBeUndefined();
      expect(ledgerBytes(p), `${tool} changed the ledger`).toEqual(before);
    }
    // A non-owner's test command never ran (the advisory check comes first).
    expect(() => readFileSync(join(p.dir, 'ran-anyway'))).toThrow();
    // No refusal of a name a typo away offers to start that name.
    for (const [srv, tool, args] of cases.slice(0, -1)) {
      if (!/fix-zt|fixtz|fix-t\b/.test(JSON.stringify(args))) continue;
      expect((await call(srv, tool, args)).text).not.toMatch(/ledger start|call start with slug/);
    }
  });

  it('a start a typo away from an open item is taken with new_item: true; a slug far from all is started as asked', async () => {
    const s = await server('claude');
    expect((await call(s, 'start', { slug: 'fix-tz', summary: 'fix it' })).isError).toBe(false);
    const typo = await call(s, 'start', { slug: 'fix-t', summary: 'really another', new_item: true });
    expect(typo.isError, typo.text).toBe(false);
    expect((await call(s, 'start', { slug: 'docs-install', summary: 'far from fix-tz' })).isError).toBe(false);
    const nope = await call(s, 'checkpoint', { slug: 'zzzzzz', done: 'd', state: 's', next: 'n' });
    expect(nope.text).toBe('no work item zzzzzz in this ledger; call status for the open items; to take zzzzzz as a new item, call start with slug zzzzzz first');
    const gate = await call(s, 'gate', { op: 'fix-tzz' });
    expect((gate.structured as { next_action: string }).next_action).toMatch(/^fix-tzz has no records in this ledger; did you mean `fix-tz` or `fix-t`\? call gate with that op$/);
  });
});

describe('when two servers (two agents) race to start one item', () => {
  it('exactly one wins; the other is refused and the ledger holds one start', async () => {
    const a = await server('claude');
    const b = await server('codex');
    const [ra, rb] = await Promise.all([
      call(a, 'start', { slug: 'migrate-17', summary: 'claude takes it' }),
      call(b, 'start', { slug: 'migrate-17', summary: 'codex takes it' }),
    ]);
    expect([ra.isError, rb.isError].sort()).toEqual([false, true]);
    const loser = ra.isError ? ra : rb;
    expect(loser.text).toMatch(/lease/);
    const starts = records(p.ledger).filter((r) => r.kind === 'start');
    expect(starts).toHaveLength(1);
    expect(starts[0].agent).toBe(ra.isError ? 'codex' : 'claude');
  });
});

describe('when the client hangs up while a call runs', () => {
  it('finishes the call, writes its answer, and records the checkpoint before it exits', async () => {
    const { spawnSync } = await import('node:child_process');
    const { BIN } = await import('../helpers/cli.js');
    const { BASE_ENV } = await import('./kit.js');
    const s = await server('claude');
    expect((await call(s, 'start', { slug: 'slow', summary: 'a slow suite' })).isError).toBe(false);
    await s.close();
    servers = [];
    // Every message at once, then end of input: the call is still to run when stdin ends.
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'checkpoint', arguments: { slug: 'slow', done: 'd', state: 's', next: 'n', tests_cmd: 'sleep 1; echo suite done' } } },
    ].map((m) => JSON.stringify(m)).join('\n') + '\n';
    const r = spawnSync(process.execPath, [BIN, 'mcp'], { cwd: p.dir, input: lines, encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude' } });
    expect(r.status, r.stderr).toBe(0);
    const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { isError?: boolean; structuredContent: { tests: { exit_code: number } } } });
    const answer = answers.find((a) => a.id === 2)!;
    expect(answer.result.isError).toBeUndefined();
    expect(answer.result.structuredContent.tests.exit_code).toBe(0);
    expect(records(p.ledger).at(-1)).toMatchObject({ kind: 'checkpoint', agent: 'claude', tests: { exit_code: 0 } });
  });
});
