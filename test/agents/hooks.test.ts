// `ledger hook claude|codex EVENT` fed the recorded payloads (fixtures/hooks/, with their
// sources) on stdin, as the real binary: the exact shape of each answer, the stop hook's
// block-once rule, the session-end note, and silence outside a ledger and on any bad input (the
// table of malformed payloads in-process, one of each kind as the binary).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import { writeSecretKey } from '../../src/keys/key-file.js';
import { ROOT, runLedger, scratch, spawnLedgerSync } from '../helpers/cli.js';
import { BASE_ENV, ledgerBytes, records } from './kit.js';

const fixture = (name: string) => readFileSync(join(ROOT, 'fixtures/hooks', name), 'utf8');

interface Project { dir: string; ledger: string; key: string; cleanup: () => void; at: (minutesAgo: number) => Ledger }

/**
 * A git repository with a ledger whose clock can be set back: records written "minutes ago" (the
 * hook itself runs on the real clock). Everything is committed before the first work record.
 */
function project(minutesAgo: number): Project {
  const s = scratch('ledger-hooks-');
  const ledger = join(s.dir, '.ledger');
  const key = join(s.dir, 'keys', 'harness.key');
  writeSecretKey(key, 'harness', new Uint8Array(randomBytes(32)));
  const clock = (m: number) => () => new Date(Date.now() - m * 60_000);
  Ledger.init({ dir: ledger, key, agent: 'harness', now: clock(minutesAgo) });
  writeFileSync(join(s.dir, '.gitignore'), '.ledger/\nkeys/\n');
  writeFileSync(join(s.dir, 'app.js'), 'export const v = 1;\n');
  // The commit is as old as the ledger: a commit after a checkpoint counts as a change.
  const date = new Date(Date.now() - (minutesAgo + 1) * 60_000).toISOString();
  const git = (...args: string[]) => execFileSync('git', args, { cwd: s.dir, stdio: 'ignore', env: { ...BASE_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '-m', 'start');
  // HEAD moved then too (the hook reads when HEAD last moved from its reflog's time).
  utimesSync(join(s.dir, '.git', 'logs', 'HEAD'), new Date(date), new Date(date));
  return { dir: s.dir, ledger, key, cleanup: s.cleanup, at: (m) => Ledger.open({ dir: ledger, key, now: clock(m) }) };
}

function hook(cwd: string, agentKind: string, event: string, stdin: string, env: Record<string, string> = {}) {
  return spawnLedgerSync(['hook', agentKind, event], { cwd, stdin, env: { ...BASE_ENV, ...env } });
}

const cp = (slug: string, agent: string, next: string) => ({ slug, agent, done: 'did a part', state: 'half of it works', next });

let p: Project;
afterEach(() => p?.cleanup());

describe('when a session starts (Claude Code startup and compact, Codex startup and resume)', () => {
  beforeEach(async () => {
    p = project(20);
    const l = p.at(20);
    await l.start({ slug: 'fix-tz', agent: 'claude', summary: 'fix toLocal()' });
    await l.checkpoint(cp('fix-tz', 'claude', 'handle DST in toUTC()'));
    await l.start({ slug: 'api-v2', agent: 'codex', summary: 'the v2 routes' });
    await l.start({ slug: 'old-docs', agent: 'codex', summary: 'docs' });
    await l.release({ slug: 'old-docs', agent: 'codex', note: 'no time' });
  });

  for (const [agentKind, file, agent] of [
    ['claude', 'claude/session-start.startup.json', 'claude'],
    ['claude', 'claude/session-start.compact.json', 'claude'],
    ['codex', 'codex/session-start.startup.json', 'codex'],
    ['codex', 'codex/session-start.resume.json', 'codex'],
  ] as const) {
    it(`${file}: the agent's own items with their next action, then what is open for others, as additionalContext`, () => {
      const r = hook(p.dir, agentKind, 'session-start', fixture(file), { LEDGER_AGENT: agent });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout);
      expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
      expect(Object.keys(out.hookSpecificOutput)).toEqual(['hookEventName', 'additionalContext']);
      expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
      const ctx: string = out.hookSpecificOutput.additionalContext;
      expect(ctx).toContain(`you write as "${agent}"`);
      const mine = agent === 'claude' ? 'fix-tz' : 'api-v2';
      const theirs = agent === 'claude' ? 'api-v2' : 'fix-tz';
      expect(ctx.indexOf('Your open items')).toBeLessThan(ctx.indexOf('Open for others'));
      expect(ctx.indexOf(`- ${mine}:`)).toBeLessThan(ctx.indexOf(`- ${theirs} (`));
      if (agent === 'claude') expect(ctx).toContain('the next step you recorded: "handle DST in toUTC()"');
      expect(ctx).toMatch(/old-docs \(nobody; released .* by codex/);
      expect(ctx.split('\n').length).toBeLessThanOrEqual(30);
    });
  }

  it('stays within the budget (30 lines, 3000 characters) however much is open', async () => {
    const l = p.at(10);
    // Speed: started from a folder outside any work tree, so each records no git facts (one git
    // process instead of eight per start); what this test reads is the items, not their code.
    const elsewhere = join(p.dir, 'not-a-folder');
    for (let i = 0; i < 60; i++) await l.start({ slug: `item-${i}`, agent: 'codex', summary: `a long summary ${'x'.repeat(150)} ${i}`, views: false, cwd: elsewhere });
    const r = hook(p.dir, 'claude', 'session-start', fixture('claude/session-start.startup.json'), { LEDGER_AGENT: 'claude' });
    const ctx: string = JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
    expect(ctx.split('\n').length).toBeLessThanOrEqual(30);
    expect(ctx.length).toBeLessThanOrEqual(3000);
    expect(ctx).toContain('- fix-tz:');
    expect(ctx).toMatch(/… \(\d+ more lines: call the status tool\)/);
    expect(ctx.split('\n').at(-1)).toMatch(/^Work rule: start SLUG/);
  });

  it('neutralises record text: no control or bidi characters reach the context', async () => {
    await p.at(5).note({ slug: 'fix-tz', agent: 'codex', text: 'x' });
    await p.at(5).start({ slug: 'evil', agent: 'codex', summary: 'a\u202eb\u001b[31mred\u0007' });
    const r = hook(p.dir, 'claude', 'session-start', fixture('claude/session-start.startup.json'), { LEDGER_AGENT: 'claude' });
    const ctx: string = JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
    expect(ctx).toContain('evil');
    expect(ctx).toContain('a\\u202Eb\\u001B[31mred\\u0007');
    // The printed JSON too: the escapes are JSON escapes, so the parsed values are what they were.
    expect(r.stdout).not.toMatch(/[\u202e]/);
    expect(ctx).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
  });
});

describe('when the agent stops', () => {
  it('blocks once when it owns a live item and changed the work tree since its last checkpoint (Claude Code)', async () => {
    p = project(5);
    await p.at(5).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
    await p.at(5).checkpoint(cp('fix-tz', 'claude', 'the DST case'));
    const quiet = hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude' });
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });

    writeFileSync(join(p.dir, 'app.js'), 'export const v = 2;\n');
    const r = hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude' });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['decision', 'reason']);
    expect(out.decision).toBe('block');
    expect(out.reason).toMatch(/you own fix-tz .*you changed the work tree since/);
    expect(out.reason).toContain('`ledger checkpoint fix-tz --done TEXT --state TEXT --next TEXT --tests-cmd CMD`');

    // Claude continues, tries to stop again with stop_hook_active: never blocked twice in a row.
    expect(hook(p.dir, 'claude', 'stop', fixture('claude/stop.active.json'), { LEDGER_AGENT: 'claude' })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // Another agent's session has nothing of its own to record.
    expect(hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude-2' }).stdout).toBe('');
    // After a checkpoint (on the real clock) the stop goes through.
    await Ledger.open({ dir: p.ledger, key: p.key }).checkpoint(cp('fix-tz', 'claude', 'the DST case'));
    expect(hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude' }).stdout).toBe('');
  });

  it('blocks when there was no checkpoint for 30 minutes, even with a clean tree (Codex, --agent)', async () => {
    p = project(40);
    await p.at(40).start({ slug: 'api-v2', agent: 'codex', summary: 'routes' });
    const r = spawnLedgerSync(['hook', 'codex', 'stop', '--agent', 'codex'], { cwd: p.dir, stdin: fixture('codex/stop.json'), env: BASE_ENV });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    // The start is 40 minutes old and the hook reads the real clock, which a loaded machine may
    // move on by any amount before it runs: at least 40 minutes, never a bound above.
    expect(out).toEqual({ decision: 'block', reason: expect.any(String) });
    const ages = /you own api-v2 \(you started it (\d+)m ago and have not checkpointed; no checkpoint for (\d+)m\)/.exec(out.reason);
    expect(ages, out.reason).not.toBeNull();
    expect(Number(ages![1])).toBeGreaterThanOrEqual(40);
    expect(Number(ages![2])).toBeGreaterThanOrEqual(40);
    expect(spawnLedgerSync(['hook', 'codex', 'stop', '--agent', 'codex'], { cwd: p.dir, stdin: fixture('codex/stop.active.json'), env: BASE_ENV }).stdout).toBe('');
  });

  it('counts a commit made after the last checkpoint as a change, though the tree is clean again', async () => {
    p = project(5);
    await p.at(5).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
    writeFileSync(join(p.dir, 'app.js'), 'export const v = 3;\n');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: p.dir, stdio: 'ignore', env: { ...BASE_ENV, GIT_CONFIG_NOSYSTEM: '1' } });
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '-am', 'v3');
    const out = JSON.parse(hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude' }).stdout);
    expect(out.reason).toMatch(/you own fix-tz .*you changed the work tree since/);
  });

  it('does not block for a lapsed lease, a released item, or a finished one', async () => {
    p = project(120);
    await p.at(120).start({ slug: 'lapsed', agent: 'claude', summary: 's', leaseMs: 60 * 60_000 });
    await p.at(100).start({ slug: 'given-back', agent: 'claude', summary: 's' });
    await p.at(100).release({ slug: 'given-back', agent: 'claude' });
    await p.at(90).start({ slug: 'done', agent: 'claude', summary: 's' });
    await p.at(90).finish({ ...cp('done', 'claude', 'none'), outcome: 'success' });
    writeFileSync(join(p.dir, 'app.js'), 'changed\n');
    expect(hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), { LEDGER_AGENT: 'claude' })).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });
});

describe('when the session ends (Claude Code)', () => {
  it('leaves a note on an item whose work is not recorded, prints nothing, and never blocks', async () => {
    p = project(5);
    await p.at(5).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
    mkdirSync(join(p.dir, 'src'));
    writeFileSync(join(p.dir, 'src', 'new.js'), 'new\n');
    const r = hook(p.dir, 'claude', 'session-end', fixture('claude/session-end.json'), { LEDGER_AGENT: 'claude' });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const note = records(p.ledger).at(-1) as { kind: string; agent: string; text: string };
    expect(note).toMatchObject({ kind: 'note', agent: 'claude' });
    expect(note.text).toMatch(/The session ended \(other\) with work-tree changes after its last checkpoint/);
  });

  it('writes nothing when the work is recorded', async () => {
    p = project(5);
    await p.at(5).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
    const before = ledgerBytes(p);
    expect(hook(p.dir, 'claude', 'session-end', fixture('claude/session-end.json'), { LEDGER_AGENT: 'claude' })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(ledgerBytes(p)).toEqual(before);
  });
});

describe('when a hook cannot answer, it exits 0 and says nothing', () => {
  it('outside a ledger, with malformed stdin, an unknown event or agent, or a damaged ledger', async () => {
    const outside = scratch('ledger-hooks-outside-');
    p = project(5);
    await p.at(5).start({ slug: 'fix-tz', agent: 'claude', summary: 'fix' });
    writeFileSync(join(p.dir, 'app.js'), 'changed\n');
    try {
      const silent = { code: 0, stdout: '', stderr: '' };
      const env = { LEDGER_AGENT: 'claude' };
      // Every event outside a ledger and with each malformed payload: in-process (the same code
      // the binary runs, its exit code and output), 35 runs; then one of each as a real process.
      const inProcess = (cwd: string, agentKind: string, event: string, stdin: string) => runLedger(['hook', agentKind, event], { cwd, stdin, env: { ...BASE_ENV, ...env } });
      for (const [agentKind, event] of [['claude', 'session-start'], ['claude', 'stop'], ['claude', 'session-end'], ['codex', 'session-start'], ['codex', 'stop']]) {
        const payload = fixture(`${agentKind}/${event === 'session-start' ? 'session-start.startup' : event}.json`);
        expect(await inProcess(outside.dir, agentKind, event, payload), `${agentKind} ${event} outside`).toEqual(silent);
        for (const bad of ['', '{not json', '[]', '"text"', 'null', '\u00ff\u00fe']) expect(await inProcess(p.dir, agentKind, event, bad), `${agentKind} ${event} ${JSON.stringify(bad)}`).toEqual(silent);
      }
      expect(hook(outside.dir, 'claude', 'stop', fixture('claude/stop.json'), env), 'outside, a real process').toEqual(silent);
      expect(hook(p.dir, 'codex', 'session-start', '{not json', env), 'malformed, a real process').toEqual(silent);
      expect(hook(p.dir, 'claude', 'pre-tool-use', '{}', env)).toEqual(silent);
      // No argv makes a hook exit non-zero: missing words, unknown or empty flags.
      for (const argv of [['hook'], ['hook', 'claude'], ['hook', 'claude', 'stop', '--agent'], ['hook', 'claude', 'stop', '--agent', 'bad name'], ['hook', 'claude', 'stop', '--dir', join(outside.dir, 'nope')]]) {
        expect(spawnLedgerSync(argv, { cwd: p.dir, stdin: fixture('claude/stop.json'), env: { ...BASE_ENV, ...env } }), argv.join(' ')).toEqual(silent);
      }
      // An unknown flag is ignored: the hook answers as it would without it.
      const extra = spawnLedgerSync(['hook', 'claude', 'stop', '--bogus'], { cwd: p.dir, stdin: fixture('claude/stop.json'), env: { ...BASE_ENV, ...env } });
      expect(extra).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(extra.stdout).decision).toBe('block');
      expect(hook(p.dir, 'gemini', 'stop', fixture('claude/stop.json'), env)).toEqual(silent);
      expect(hook(p.dir, 'codex', 'session-end', fixture('claude/session-end.json'), env)).toEqual(silent);
      // A payload for another event than the one installed is not answered.
      expect(hook(p.dir, 'claude', 'stop', fixture('claude/session-start.startup.json'), env)).toEqual(silent);
      // A damaged HEAD: the hook says nothing rather than an error into the session.
      writeFileSync(join(p.ledger, 'HEAD'), '{"broken":');
      expect(hook(p.dir, 'claude', 'session-start', fixture('claude/session-start.startup.json'), env)).toEqual(silent);
      expect(hook(p.dir, 'claude', 'stop', fixture('claude/stop.json'), env)).toEqual(silent);
    } finally {
      outside.cleanup();
    }
  });
});
