// Issue 24: the handoff across machines happens by itself. Two clones of one project joined to
// one bare remote (real git), Claude Code's and Codex's hook payloads from fixtures/hooks/ fed to
// the built `ledger hook`, and the SDK's Client over stdio on `ledger mcp`:
//   - the laptop's owner is interrupted (StopFailure: a signed "interrupted" note);
//   - the sandbox, never synced by hand, is told at session start what is open, how current that
//     is, and that the takeover is the next step, as the MCP tool's arguments; its tools answer
//     from a copy fetched for them; the whole test output travelled; the views follow;
//   - checkpoint, commit exactly that, stop: not blocked;
//   - the returning owner, unsynced, is told the item was taken over and finished, and is not
//     blocked; a remote that does not answer: the local answer, labelled, within the budget, and
//     a stop never blocks on it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { keptWorld, remoteState, world, type Machine, type World } from '../remote/kit.js';
import { call, startServer, type Server } from '../agents/kit.js';

let w: World;
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  w?.cleanup();
});

const FIXTURES = join(import.meta.dirname, '../../fixtures/hooks');
const payload = (file: string, cwd: string) => JSON.stringify({ ...JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')), cwd });
function hook(m: Machine, kind: 'claude' | 'codex', event: string, file: string, extra: Record<string, string> = {}) {
  // StopFailure: Claude Code does not wait for the hook, so it hands the payload to a detached
  // copy of itself (agents-run.ts); that copy is what is run here, to the end, with the payload.
  const handed = event === 'stop-failure' ? { LEDGER_HOOK_PAYLOAD: payload(file, m.dir) } : {};
  const r = spawnSync(process.execPath, [BIN, 'hook', kind, event], { cwd: m.dir, env: { ...m.env, ...extra, ...handed }, input: payload(file, m.dir), encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: r.stdout ? (JSON.parse(r.stdout) as Record<string, any>) : null };
}
const gitIn = (m: Machine, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: m.dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: m.dir, GIT_CONFIG_NOSYSTEM: '1' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/**
 * Both clones, each with the project committed and joined to the remote (`init --remote`): built
 * once per file and put back before each test (`keptWorld`: the remote, the clones, their state
 * directories, at the same paths), so each test still starts from clones no other test touched.
 */
const joined = keptWorld(async () => {
  const made = world(['claude', 'codex']);
  for (const m of made.machines) {
    // The project: each machine's work tree, the key and state kept out of it.
    writeFileSync(join(m.dir, '.gitignore'), 'keys/harness.key\n.ledger/\n');
    writeFileSync(join(m.dir, 'time.js'), 'export const offset = (t, o) => t - o;\n');
    gitIn(m, 'add', '-A');
    gitIn(m, 'commit', '-qm', 'project');
    const r = await m.run(['init', '--remote', made.url]);
    expect(r.code, r.stderr).toBe(0);
  }
  return made;
});

async function twoClones(): Promise<[Machine, Machine]> {
  w = await joined();
  const [laptop, sandbox] = w.machines;
  return [laptop, sandbox];
}

describe('two clones of one project, one remote: the essay\'s handoff with the agents\' hooks and tools', () => {
  it('interrupted on the laptop, taken over on the sandbox without a sync, the owner told when it returns', async () => {
    const [laptop, sandbox] = await twoClones();
    // The laptop: Claude takes fix-tz, fixes half, checkpoints with the real failing tests, and its turn dies at its usage limit.
    expect((await laptop.run(['start', 'fix-tz', '--summary', 'fix toLocal() and formatOffset()'])).code).toBe(0);
    writeFileSync(join(laptop.dir, 'time.js'), 'export const offset = (t, o) => t + o;\n');
    const cp = await laptop.run(['checkpoint', 'fix-tz', '--done', 'fixed the sign of the offset', '--state', '5 pass, 2 fail', '--next', 'pad the minutes in formatOffset()', '--tests-cmd', 'echo "# pass 5"; echo "# fail 2"; exit 1']);
    expect(cp.code, cp.stderr).toBe(0);
    // The turn dies on the API's 429. Claude Code kills a StopFailure hook at once when `claude -p`
    // exits; its SessionEnd (waited for) finds the API error on the transcript's last assistant
    // entry, as Claude Code 2.1.328 writes it, and leaves the signed "interrupted" note.
    const transcript = join(w.root, 'session.jsonl');
    writeFileSync(transcript, [
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'fix it' } }),
      JSON.stringify({ type: 'assistant', isApiErrorMessage: true, error: 'rate_limit', apiErrorStatus: 429, message: { role: 'assistant', content: [{ type: 'text', text: 'API Error: Request rejected (429) · You have reached your usage limit. Your limit will reset at 11pm.' }] } }),
      JSON.stringify({ type: 'cost-state', totalCostUSD: 0 }),
    ].join('\n') + '\n');
    const ended = spawnSync(process.execPath, [BIN, 'hook', 'claude', 'session-end'], { cwd: laptop.dir, env: laptop.env, input: JSON.stringify({ ...JSON.parse(readFileSync(join(FIXTURES, 'claude/session-end.json'), 'utf8')), cwd: laptop.dir, transcript_path: transcript }), encoding: 'utf8' });
    expect(ended).toMatchObject({ status: 0, stdout: '' });
    const note = JSON.parse(readFileSync(join(laptop.ledger, 'records.jsonl'), 'utf8').trim().split('\n').at(-1)!);
    expect(note).toMatchObject({ kind: 'note', agent: 'claude', event: 'interrupted', logical_operation_id: 'fix-tz' });
    expect(note.text).toMatch(/interrupted by an API error \(rate_limit: API Error: Request rejected \(429\) · You have reached your usage limit/);
    // The StopFailure hook's own copy (when Claude Code lets it run) adds nothing: notes do not pile up.
    const size = readFileSync(join(laptop.ledger, 'records.jsonl')).length;
    expect(hook(laptop, 'claude', 'stop-failure', 'claude/stop-failure.json')).toMatchObject({ code: 0, stdout: '' });
    hook(laptop, 'claude', 'session-end', 'claude/session-end.json');
    expect(readFileSync(join(laptop.ledger, 'records.jsonl')).length).toBe(size);

    // The sandbox, never synced by hand: its session start names the item, says how current it is, and the takeover.
    const start = hook(sandbox, 'codex', 'session-start', 'codex/session-start.startup.json');
    const ctx: string = start.json!.hookSpecificOutput.additionalContext;
    expect(ctx).toMatch(/Shared through a git remote: remote \S+: current \(fetched just now; the ledger is at seq \d+/);
    expect(ctx).toMatch(/- fix-tz \(claude; lease live, \d+m left\): claude's recorded next step \(seq \d+, \S+ ago\): "pad the minutes in formatOffset\(\)"/);
    expect(ctx).toMatch(/claude's session was interrupted \S+ ago \(its hook's note, seq \d+: "The session was interrupted by an API error.*"\): take it over: call start with \{"slug":"fix-tz","summary":"<what you will do>","takeover":true,"force":true,"reason":"claude's session was interrupted at \S+ \(note seq \d+\); continuing its work"\}/);
    // The views followed the copy the hook brought up to date.
    expect(readFileSync(join(sandbox.dir, 'HANDOFF.md'), 'utf8')).toContain('fix-tz');
    expect((await sandbox.run(['render', '--check'])).code).toBe(0);

    // Its MCP tools answer from a fetched copy, and resume's next action is the takeover, as arguments.
    const s = await startServer(sandbox.dir, 'codex', sandbox.env);
    servers.push(s);
    const resume = await call(s, 'resume', { slug: 'fix-tz' });
    expect(resume.isError, resume.text).toBe(false);
    expect(resume.structured!.currency).toMatchObject({ current: true, reason: null });
    const next = String(resume.structured!.next_action);
    expect(next).toMatch(/take it over: call start with (\{.*\}); then claude's last checkpoint's next step/);
    const args = JSON.parse(/call start with (\{.*?\})(;|$)/.exec(next)![1]);
    expect(args).toMatchObject({ slug: 'fix-tz', takeover: true, force: true });
    // The whole test output travelled with the ledger; where the code is, is said.
    const lines = (resume.structured!.lines as string[]).join('\n');
    expect(lines).toMatch(/whole output: \.ledger\/blobs\/sha256\/[0-9a-f]{64}/);
    expect(lines).toMatch(/code: as of seq \d+ \(claude, \S+\): branch \S+ at [0-9a-f]{12} in \S+, with uncommitted changes\n {2}NOT pushed/);
    // A plain start is refused, and the refusal says the takeover as this tool's arguments.
    const plain = await call(s, 'start', { slug: 'fix-tz', summary: 'finish fix-tz' });
    expect(plain.isError).toBe(true);
    expect(plain.text).toMatch(/slug fix-tz is owned by claude until \S+; .*take it over, recorded: call start with \{"slug":"fix-tz","summary":"<what you will do>","takeover":true,"force":true,"reason":"<why/);
    expect(plain.text).not.toMatch(/--takeover/);
    const took = await call(s, 'start', { ...args, summary: 'finish fix-tz: pad the minutes' });
    expect(took.isError, took.text).toBe(false);
    expect(took.structured!.takeover).toMatchObject({ agent: 'claude' });

    // Checkpoint, commit exactly that, stop: not blocked (content, not HEAD).
    writeFileSync(join(sandbox.dir, 'time.js'), 'export const offset = (t, o) => t + o; // padded\n');
    const cp2 = await call(s, 'checkpoint', { slug: 'fix-tz', done: 'padded the minutes', state: '7 pass', next: 'commit and finish' });
    expect(cp2.isError, cp2.text).toBe(false);
    gitIn(sandbox, 'commit', '-qam', 'formatOffset: pad the minutes');
    expect(hook(sandbox, 'codex', 'stop', 'codex/stop.json')).toMatchObject({ code: 0, stdout: '' });
    writeFileSync(join(sandbox.dir, 'time.js'), 'export const offset = (t, o) => t + o; // more\n');
    expect(hook(sandbox, 'codex', 'stop', 'codex/stop.json').json).toMatchObject({ decision: 'block' });
    gitIn(sandbox, 'checkout', '--', 'time.js');
    const fin = await call(s, 'finish', { slug: 'fix-tz', done: 'all pass', state: '7 pass', next: 'merge', invariants: { tests: { ok: true } } });
    expect(fin.isError, fin.text).toBe(false);

    // Claude back on the laptop, unsynced, its work tree still changed: told, and never blocked.
    const back = hook(laptop, 'claude', 'session-start', 'claude/session-start.startup.json');
    const told: string = back.json!.hookSpecificOutput.additionalContext;
    expect(told).toMatch(/fix-tz was TAKEN OVER from you by codex at \S+ while your lease was live: "claude's session was interrupted .*"; finished \(success\) by codex: nothing left for you on it; do not checkpoint or restart it\./);
    expect(told).toContain('You own no open item.');
    writeFileSync(join(laptop.dir, 'time.js'), 'export const offset = (t, o) => t + o; // late edit\n');
    expect(hook(laptop, 'claude', 'stop', 'claude/stop.json')).toMatchObject({ code: 0, stdout: '' });
    // Its late checkpoint is refused without an offer to reopen another agent's finished work.
    const late = await laptop.run(['checkpoint', 'fix-tz', '--done', 'x', '--state', 'y', '--next', 'z']);
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(/was finished \(success\) by codex.*taken over by codex.*the item is not yours to reopen/);
    expect(late.stderr).not.toMatch(/reopens it/);
    // sync re-renders the views.
    expect((await laptop.run(['sync'])).code).toBe(0);
    expect((await laptop.run(['render', '--check'])).code).toBe(0);
    expect(readFileSync(join(laptop.dir, 'HANDOFF.md'), 'utf8')).toMatch(/finish/);
  });

  it('a remote that does not answer: the local answer, labelled with its age, within the budget; a stop never blocks on it', async () => {
    const [laptop, sandbox] = await twoClones();
    expect((await sandbox.run(['start', 'api', '--summary', 'the api'])).code).toBe(0);
    expect((await laptop.run(['start', 'docs', '--summary', 'the docs'])).code).toBe(0);
    writeFileSync(join(laptop.dir, 'time.js'), 'changed\n');
    // The remote goes silent: a listener that accepts and never answers.
    const conns: Socket[] = [];
    const silent: NetServer = createServer((c) => void conns.push(c));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      const joinFile = join(remoteState(laptop), 'join.json');
      const j = JSON.parse(readFileSync(joinFile, 'utf8'));
      writeFileSync(joinFile, JSON.stringify({ ...j, url: `git://127.0.0.1:${port}/remote.git` }));
      const budget = { LEDGER_FETCH_BUDGET: '300ms' };
      const st = spawnSync(process.execPath, [BIN, 'status', '--json'], { cwd: laptop.dir, env: { ...laptop.env, ...budget }, encoding: 'utf8' });
      expect(st.status, st.stderr).toBe(0);
      const cur = JSON.parse(st.stdout).currency;
      expect(cur).toMatchObject({ current: false, reason: 'the remote did not answer within 0s' });
      expect(cur.fetched_at).toMatch(/Z$/);
      const text = spawnSync(process.execPath, [BIN, 'status'], { cwd: laptop.dir, env: { ...laptop.env, ...budget }, encoding: 'utf8' }).stdout;
      expect(text.split('\n')[0]).toMatch(/^remote git:\/\/127\.0\.0\.1:\d+\/remote\.git: NOT CURRENT: the remote did not answer within 0s; this answer is this machine's copy through seq \d+, last fetched \S+ ago/);
      // The hook: labelled context; a stop with the laptop's own item changed is not blocked on a copy it could not refresh.
      const ctx: string = hook(laptop, 'claude', 'session-start', 'claude/session-start.startup.json', budget).json!.hookSpecificOutput.additionalContext;
      expect(ctx).toMatch(/NOT CURRENT: the remote did not answer.*Call the sync tool before acting on who owns what\./);
      expect(hook(laptop, 'claude', 'stop', 'claude/stop.json', budget)).toMatchObject({ code: 0, stdout: '' });
      expect(existsSync(join(laptop.ledger, 'HEAD'))).toBe(true);
    } finally {
      for (const c of conns) c.destroy();
      silent.close();
    }
  });
});
