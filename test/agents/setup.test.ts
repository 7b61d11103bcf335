// `ledger setup claude|codex` in a project that already has the user's own settings, hooks,
// MCP servers, TOML (with comments) and CLAUDE.md/AGENTS.md, as the real binary: merged (the
// user's parts kept), run twice gives the same bytes, --check (0, then 31 after a manual edit),
// --remove restores the user's files byte for byte, a file setup cannot read changes nothing,
// and the commands written really run the hook from that project.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, initProject, scratch, spawnLedgerSync } from '../helpers/cli.js';
import { BASE_ENV } from './kit.js';

let p: { dir: string; ledger: string; cleanup: () => void };
beforeEach(async () => {
  p = await initProject('setup');
});
afterEach(() => p.cleanup());

const ledger = (...args: string[]) => spawnLedgerSync(args, { cwd: p.dir, env: BASE_ENV });
const read = (f: string) => (existsSync(join(p.dir, f)) ? readFileSync(join(p.dir, f), 'utf8') : null);
const write = (f: string, text: string) => {
  mkdirSync(join(p.dir, f, '..'), { recursive: true });
  writeFileSync(join(p.dir, f), text);
};
const snapshotOf = (files: readonly string[]) => Object.fromEntries(files.map((f) => [f, read(f)]));

const USER_SETTINGS = JSON.stringify({
  permissions: { allow: ['Bash(npm test)'] },
  env: { FOO: 'bar' },
  hooks: {
    Stop: [{ hooks: [{ type: 'command', command: 'echo user-stop', timeout: 5 }] }],
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }],
  },
}, null, 2) + '\n';
const USER_MCP = JSON.stringify({ mcpServers: { github: { command: 'gh-mcp', args: [] } } }, null, 4) + '\n';
const USER_CLAUDE_MD = '# Project rules\n\nUse tabs.\n';

describe('when setup claude runs in a project with the user\'s own files', () => {
  const FILES = ['.mcp.json', '.claude/settings.json', 'CLAUDE.md'] as const;
  beforeEach(() => {
    write('.claude/settings.json', USER_SETTINGS);
    chmodSync(join(p.dir, '.claude/settings.json'), 0o600);
    write('.mcp.json', USER_MCP);
    write('CLAUDE.md', USER_CLAUDE_MD);
  });

  it('merges: the user\'s hooks, env, permissions and servers stay; ours are added', () => {
    const r = ledger('setup', 'claude', '--json');
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, kind: 'claude', agent: 'claude', files: [{ file: '.mcp.json', action: 'updated' }, { file: '.claude/settings.json', action: 'updated' }, { file: 'CLAUDE.md', action: 'updated' }] });

    const mcp = JSON.parse(read('.mcp.json')!);
    expect(mcp.mcpServers.github).toEqual({ command: 'gh-mcp', args: [] });
    // Not installed in node_modules: the absolute path of node and of the binary that ran setup.
    expect(mcp.mcpServers['handoff-ledger']).toEqual({ command: process.execPath, args: [BIN, 'mcp'], env: { LEDGER_AGENT: 'claude' } });
    expect(read('.mcp.json')).toMatch(/^\{\n {4}"mcpServers"/); // the user's indentation

    const s = JSON.parse(read('.claude/settings.json')!);
    expect(s.permissions).toEqual({ allow: ['Bash(npm test)'] });
    expect(s.env).toEqual({ FOO: 'bar', LEDGER_AGENT: 'claude' });
    expect(s.hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }]);
    expect(s.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: 'echo user-stop', timeout: 5 }] });
    const cmd = `${process.execPath} ${BIN}`;
    expect(s.hooks.Stop[1]).toEqual({ hooks: [{ type: 'command', command: `${cmd} hook claude stop`, timeout: 10 }] });
    expect(s.hooks.SessionStart).toEqual([{ matcher: 'startup|resume|clear|compact', hooks: [{ type: 'command', command: `${cmd} hook claude session-start`, timeout: 10 }] }]);
    expect(s.hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: `${cmd} hook claude session-end`, timeout: 10 }] }]);
    expect(statSync(join(p.dir, '.claude/settings.json')).mode & 0o777).toBe(0o600);

    const md = read('CLAUDE.md')!;
    expect(md.startsWith(USER_CLAUDE_MD + '\n<!-- handoff-ledger:begin')).toBe(true);
    expect(md).toMatch(/`status`.*`start`.*`checkpoint`.*30 minutes.*`tests_cmd`.*`finish`.*`release`.*Never edit HANDOFF\.md/s);
    expect(md.trimEnd().endsWith('<!-- handoff-ledger:end -->')).toBe(true);
  });

  it('is idempotent: a second run writes the same bytes and says so; --check passes', () => {
    expect(ledger('setup', 'claude').code).toBe(0);
    const once = snapshotOf(FILES);
    const again = ledger('setup', 'claude', '--json');
    expect(JSON.parse(again.stdout).files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(snapshotOf(FILES)).toEqual(once);
    const check = ledger('setup', 'claude', '--check');
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toMatch(/^ok +\.mcp\.json$/m);
  });

  it('--check exits 31 before setup, and after a manual edit to any of the files, naming it', () => {
    const before = ledger('setup', 'claude', '--check', '--json');
    expect(before.code).toBe(31);
    expect(JSON.parse(before.stdout)).toMatchObject({ ok: false, exit_code: 31 });
    expect(ledger('setup', 'claude').code).toBe(0);
    const s = JSON.parse(read('.claude/settings.json')!);
    s.hooks.Stop[1].hooks[0].command = 'ledger hook claude stop --verbose';
    write('.claude/settings.json', JSON.stringify(s, null, 2) + '\n');
    const r = ledger('setup', 'claude', '--check');
    expect(r.code).toBe(31);
    expect(r.stdout).toMatch(/^stale +\.claude\/settings\.json$/m);
    expect(r.stdout).toMatch(/^ok +CLAUDE\.md$/m);
    expect(r.stdout).toMatch(/run `ledger setup claude` to write them/);
    write('CLAUDE.md', read('CLAUDE.md')!.replace('30 minutes', '3 hours'));
    expect(ledger('setup', 'claude', '--check').stdout).toMatch(/^stale +CLAUDE\.md$/m);
    // Setup repairs both; the user's edit elsewhere in the file stays.
    expect(ledger('setup', 'claude').code).toBe(0);
    expect(ledger('setup', 'claude', '--check').code).toBe(0);
  });

  it('--remove takes out only what it wrote: the user\'s files come back byte for byte', () => {
    const user = snapshotOf(FILES);
    expect(ledger('setup', 'claude').code).toBe(0);
    const r = ledger('setup', 'claude', '--remove', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(snapshotOf(FILES)).toEqual(user);
    expect(statSync(join(p.dir, '.claude/settings.json')).mode & 0o777).toBe(0o600);
    // And again: nothing left to remove, nothing changes.
    expect(JSON.parse(ledger('setup', 'claude', '--remove', '--json').stdout).files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('refuses a file that is not JSON, naming it, and changes no file', () => {
    write('.mcp.json', '{ "mcpServers": { oops');
    const before = snapshotOf(FILES);
    const r = ledger('setup', 'claude', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/\.mcp\.json is not valid JSON.*setup changed nothing/);
    expect(snapshotOf(FILES)).toEqual(before);
  });
});

describe('when setup claude runs in a project with none of the files', () => {
  it('creates them, and --remove deletes them and the .claude folder it made', () => {
    expect(ledger('setup', 'claude', '--agent', 'claude-2').code).toBe(0);
    expect(JSON.parse(read('.claude/settings.json')!).env).toEqual({ LEDGER_AGENT: 'claude-2' });
    expect(read('CLAUDE.md')).toMatch(/you write as `claude-2`/);
    expect(ledger('setup', 'claude', '--agent', 'claude-2', '--remove').code).toBe(0);
    for (const f of ['.mcp.json', '.claude/settings.json', 'CLAUDE.md', '.claude']) expect(existsSync(join(p.dir, f)), f).toBe(false);
  });

  it('uses the project\'s installed package when node_modules/.bin/ledger is there', () => {
    mkdirSync(join(p.dir, 'node_modules/.bin'), { recursive: true });
    writeFileSync(join(p.dir, 'node_modules/.bin/ledger'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    expect(ledger('setup', 'claude').code).toBe(0);
    const bin = join(p.dir, 'node_modules/.bin/ledger');
    expect(JSON.parse(read('.mcp.json')!).mcpServers['handoff-ledger']).toEqual({ command: bin, args: ['mcp'], env: { LEDGER_AGENT: 'claude' } });
    expect(JSON.parse(read('.claude/settings.json')!).hooks.Stop[0].hooks[0].command).toBe(`${bin} hook claude stop`);
  });

  it('writes hook commands that run from the project: the session-start hook answers', () => {
    expect(ledger('setup', 'claude').code).toBe(0);
    const command = JSON.parse(read('.claude/settings.json')!).hooks.SessionStart[0].hooks[0].command as string;
    const sub = join(p.dir, 'src');
    mkdirSync(sub);
    const run = spawnSync('/bin/sh', ['-c', command], { cwd: sub, input: '{"hook_event_name":"SessionStart","source":"startup"}', encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude' } });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).hookSpecificOutput.additionalContext).toMatch(/you write as "claude"/);
  });

  it('refuses outside a ledger, an unknown agent kind, and --check with --remove (exit 2, nothing written)', () => {
    expect(ledger('setup', 'gemini').code).toBe(2);
    expect(ledger('setup', 'claude', '--check', '--remove').code).toBe(2);
    expect(ledger('setup', 'claude', '--agent', 'bad name').code).toBe(2);
    expect(existsSync(join(p.dir, '.mcp.json'))).toBe(false);
    const outside = scratch('ledger-setup-outside-');
    try {
      const r = spawnLedgerSync(['setup', 'claude'], { cwd: outside.dir, env: BASE_ENV });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no ledger here or above.*run `ledger init` first/);
      expect(existsSync(join(outside.dir, '.mcp.json'))).toBe(false);
    } finally {
      outside.cleanup();
    }
  });
});

const USER_TOML = '# my codex settings\nmodel = "gpt-5.1-codex"   # keep this\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--port", "0"]\n';
const USER_HOOKS = JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } }, null, 2) + '\n';
const USER_AGENTS_MD = '# Agents\n\nRun npm test before committing.';

describe('when setup codex runs in a project with the user\'s own files', () => {
  const FILES = ['.codex/config.toml', '.codex/hooks.json', 'AGENTS.md'] as const;
  beforeEach(() => {
    write('.codex/config.toml', USER_TOML);
    write('.codex/hooks.json', USER_HOOKS);
    write('AGENTS.md', USER_AGENTS_MD);
  });

  it('merges: [mcp_servers.handoff-ledger] appended as a block (the user\'s TOML and comments untouched), the hooks beside the user\'s', () => {
    const r = ledger('setup', 'codex');
    expect(r.code, r.stderr).toBe(0);
    const toml = read('.codex/config.toml')!;
    expect(toml.startsWith(USER_TOML)).toBe(true);
    const doc = parse(toml) as { model: string; mcp_servers: Record<string, unknown> };
    expect(doc.model).toBe('gpt-5.1-codex');
    expect(doc.mcp_servers.docs).toEqual({ command: 'docs-mcp', args: ['--port', '0'] });
    expect(doc.mcp_servers['handoff-ledger']).toEqual({ command: process.execPath, args: [BIN, 'mcp'], env: { LEDGER_AGENT: 'codex' } });

    const hooks = JSON.parse(read('.codex/hooks.json')!).hooks;
    const cmd = `${process.execPath} ${BIN}`;
    expect(hooks.Stop).toEqual([
      { hooks: [{ type: 'command', command: 'notify-send done' }] },
      { hooks: [{ type: 'command', command: `${cmd} hook codex stop --agent codex`, timeout: 10 }] },
    ]);
    expect(hooks.SessionStart).toEqual([{ matcher: 'startup|resume|clear', hooks: [{ type: 'command', command: `${cmd} hook codex session-start --agent codex`, timeout: 10 }] }]);
    // A file without a final newline gets one before the blank line and the block.
    expect(read('AGENTS.md')!.startsWith(USER_AGENTS_MD + '\n\n<!-- handoff-ledger:begin')).toBe(true);
  });

  it('is idempotent, checks, and --remove restores the user\'s files (the final newline AGENTS.md lacked aside)', () => {
    const user = snapshotOf(FILES);
    expect(ledger('setup', 'codex').code).toBe(0);
    const once = snapshotOf(FILES);
    expect(ledger('setup', 'codex').code).toBe(0);
    expect(snapshotOf(FILES)).toEqual(once);
    expect(ledger('setup', 'codex', '--check').code).toBe(0);
    write('.codex/config.toml', read('.codex/config.toml')!.replace('LEDGER_AGENT = "codex"', 'LEDGER_AGENT = "claude"'));
    const stale = ledger('setup', 'codex', '--check');
    expect(stale.code).toBe(31);
    expect(stale.stdout).toMatch(/^stale +\.codex\/config\.toml$/m);
    expect(ledger('setup', 'codex', '--remove').code).toBe(0);
    expect(read('.codex/config.toml')).toBe(user['.codex/config.toml']);
    expect(read('.codex/hooks.json')).toBe(user['.codex/hooks.json']);
    // Policy (src/agents/README.md): a file that did not end with a newline keeps the one setup added.
    expect(read('AGENTS.md')).toBe(USER_AGENTS_MD + '\n');
  });

  it('refuses a config.toml that already names handoff-ledger outside the block, or is not TOML, changing nothing', () => {
    write('.codex/config.toml', USER_TOML + '\n[mcp_servers.handoff-ledger]\ncommand = "mine"\n');
    let before = snapshotOf(FILES);
    let r = ledger('setup', 'codex');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/defines \[mcp_servers\.handoff-ledger\] outside the block setup writes/);
    expect(snapshotOf(FILES)).toEqual(before);
    write('.codex/config.toml', 'mcp_servers = { docs = { command = "x" } }\n');
    before = snapshotOf(FILES);
    r = ledger('setup', 'codex');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.toml is not valid TOML/);
    expect(snapshotOf(FILES)).toEqual(before);
  });
});
