// `ledger setup claude|codex` in a project that already has the user's own settings, hooks,
// MCP servers, TOML (with comments) and CLAUDE.md/AGENTS.md, as the real binary: merged (the
// user's parts kept), run twice gives the same bytes, --check (0, then 31 after a manual edit),
// --remove restores the user's files byte for byte, a file setup cannot read changes nothing,
// and the commands written really run the hook from that project.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, initProject, runLedger, scratch, spawnLedgerSync } from '../helpers/cli.js';
import { LAUNCH_SCRIPT } from '../../src/agents/setup/common.js';
import { BASE_ENV } from './kit.js';

/** The launcher every written command uses (no path of this machine: SPEC 12). */
const LAUNCH = { command: 'sh', args: ['-c', LAUNCH_SCRIPT, 'ledger'] };
const hookCmd = (rest: string) => `sh -c '${LAUNCH_SCRIPT}' ledger ${rest}`;
/** The project's installed package, as `npm install` would leave it: node_modules/.bin/ledger. */
const install = (dir: string) => {
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  writeFileSync(join(dir, 'node_modules/.bin/ledger'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
};

let p: { dir: string; ledger: string; cleanup: () => void };
beforeEach(async () => {
  p = await initProject('setup');
});
afterEach(() => p.cleanup());

// Speed: `ledger setup` runs in-process (runCli: the code the binary runs, its exit code and
// output); the launcher and hooks it writes are run as real processes below.
const ledger = (...args: string[]) => runLedger(args, { cwd: p.dir, env: BASE_ENV });
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

  it('merges: the user\'s hooks, env, permissions and servers stay; ours are added', async () => {
    const r = (await ledger('setup', 'claude', '--json'));
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, kind: 'claude', agent: 'claude', files: [{ file: '.mcp.json', action: 'updated' }, { file: '.claude/settings.json', action: 'updated' }, { file: 'CLAUDE.md', action: 'updated' }] });

    const mcp = JSON.parse(read('.mcp.json')!);
    expect(mcp.mcpServers.github).toEqual({ command: 'gh-mcp', args: [] });
    // SPEC 12: the launcher, never a path of this machine.
    expect(mcp.mcpServers['handoff-ledger']).toEqual({ ...LAUNCH, args: [...LAUNCH.args, 'mcp'], env: { LEDGER_AGENT: 'claude' } });
    expect(read('.mcp.json')).not.toContain(p.dir);
    expect(read('.mcp.json')).toMatch(/^\{\n {4}"mcpServers"/); // the user's indentation

    const s = JSON.parse(read('.claude/settings.json')!);
    // The user's rule kept, the ledger's tools allowed (claude -p refuses them otherwise).
    expect(s.permissions).toEqual({ allow: ['Bash(npm test)', 'mcp__handoff-ledger'] });
    expect(s.env).toEqual({ FOO: 'bar', LEDGER_AGENT: 'claude' });
    expect(s.hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }]);
    expect(s.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: 'echo user-stop', timeout: 5 }] });
    expect(s.hooks.Stop[1]).toEqual({ hooks: [{ type: 'command', command: hookCmd('hook claude stop'), timeout: 10 }] });
    expect(s.hooks.SessionStart).toEqual([{ matcher: 'startup|resume|clear|compact', hooks: [{ type: 'command', command: hookCmd('hook claude session-start'), timeout: 10 }] }]);
    expect(s.hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: hookCmd('hook claude session-end'), timeout: 10 }] }]);
    expect(s.hooks.StopFailure).toEqual([{ hooks: [{ type: 'command', command: hookCmd('hook claude stop-failure'), timeout: 10 }] }]);
    expect(read('.claude/settings.json')).not.toContain(p.dir);
    expect(statSync(join(p.dir, '.claude/settings.json')).mode & 0o777).toBe(0o600);

    const md = read('CLAUDE.md')!;
    expect(md.startsWith(USER_CLAUDE_MD + '\n<!-- handoff-ledger:begin')).toBe(true);
    expect(md).toMatch(/`status`.*`start`.*`checkpoint`.*30 minutes.*`tests_cmd`.*`finish`.*`release`.*Never edit HANDOFF\.md/s);
    expect(md.trimEnd().endsWith('<!-- handoff-ledger:end -->')).toBe(true);
  });

  it('is idempotent: a second run writes the same bytes and says so; --check passes', async () => {
    expect((await ledger('setup', 'claude')).code).toBe(0);
    const once = snapshotOf(FILES);
    const again = (await ledger('setup', 'claude', '--json'));
    expect(JSON.parse(again.stdout).files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(snapshotOf(FILES)).toEqual(once);
    const check = (await ledger('setup', 'claude', '--check'));
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toMatch(/^ok +\.mcp\.json$/m);
  });

  it('--check exits 31 before setup, and after a manual edit to any of the files, naming it', async () => {
    const before = (await ledger('setup', 'claude', '--check', '--json'));
    expect(before.code).toBe(31);
    expect(JSON.parse(before.stdout)).toMatchObject({ ok: false, exit_code: 31 });
    expect((await ledger('setup', 'claude')).code).toBe(0);
    const s = JSON.parse(read('.claude/settings.json')!);
    s.hooks.Stop[1].hooks[0].command = 'ledger hook claude stop --verbose';
    write('.claude/settings.json', JSON.stringify(s, null, 2) + '\n');
    const r = (await ledger('setup', 'claude', '--check'));
    expect(r.code).toBe(31);
    expect(r.stdout).toMatch(/^stale +\.claude\/settings\.json$/m);
    expect(r.stdout).toMatch(/^ok +CLAUDE\.md$/m);
    expect(r.stdout).toMatch(/run `ledger setup claude` to write them/);
    // A line of setup's block deleted: stale (a line the user adds inside it is refused: below).
    write('CLAUDE.md', read('CLAUDE.md')!.split('\n').filter((l) => !l.includes('at least every 30 minutes')).join('\n'));
    expect((await ledger('setup', 'claude', '--check')).stdout).toMatch(/^stale +CLAUDE\.md$/m);
    // Setup repairs both; the user's edit elsewhere in the file stays.
    expect((await ledger('setup', 'claude')).code).toBe(0);
    expect((await ledger('setup', 'claude', '--check')).code).toBe(0);
  });

  it('--remove takes out only what it wrote: the user\'s files come back byte for byte', async () => {
    const user = snapshotOf(FILES);
    expect((await ledger('setup', 'claude')).code).toBe(0);
    const r = (await ledger('setup', 'claude', '--remove', '--json'));
    expect(r.code, r.stderr).toBe(0);
    expect(snapshotOf(FILES)).toEqual(user);
    expect(statSync(join(p.dir, '.claude/settings.json')).mode & 0o777).toBe(0o600);
    // And again: nothing left to remove, nothing changes.
    expect(JSON.parse((await ledger('setup', 'claude', '--remove', '--json')).stdout).files.map((f: { action: string }) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('refuses a file that is not JSON, naming it, and changes no file', async () => {
    write('.mcp.json', '{ "mcpServers": { oops');
    const before = snapshotOf(FILES);
    const r = (await ledger('setup', 'claude', '--json'));
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/\.mcp\.json is not valid JSON.*setup changed nothing/);
    expect(snapshotOf(FILES)).toEqual(before);
  });
});

describe('when setup claude runs in a project with none of the files', () => {
  it('creates them, and --remove deletes them and the .claude folder it made', async () => {
    expect((await ledger('setup', 'claude', '--agent', 'claude-2')).code).toBe(0);
    expect(JSON.parse(read('.claude/settings.json')!).env).toEqual({ LEDGER_AGENT: 'claude-2' });
    expect(read('CLAUDE.md')).toMatch(/in Claude Code, they write as `claude-2`/);
    // A new CLAUDE.md keeps the project's AGENTS.md in Claude Code's context (its import).
    expect(read('CLAUDE.md')).toMatch(/^@AGENTS\.md$/m);
    expect((await ledger('setup', 'claude', '--agent', 'claude-2', '--remove')).code).toBe(0);
    for (const f of ['.mcp.json', '.claude/settings.json', 'CLAUDE.md', '.claude']) expect(existsSync(join(p.dir, f)), f).toBe(false);
  });

  it('writes the same files whether or not the package is installed here, and says when none is found', async () => {
    const without = (await ledger('setup', 'claude'));
    expect(without.stdout).toMatch(/warning: no ledger is installed in this project/);
    const files = snapshotOf(['.mcp.json', '.claude/settings.json', 'CLAUDE.md']);
    install(p.dir);
    const withIt = (await ledger('setup', 'claude'));
    expect(withIt.stdout).not.toMatch(/warning/);
    expect(snapshotOf(['.mcp.json', '.claude/settings.json', 'CLAUDE.md'])).toEqual(files);
  });

  it('writes hook commands that run from the project: the session-start hook answers', async () => {
    install(p.dir);
    expect((await ledger('setup', 'claude')).code).toBe(0);
    const command = JSON.parse(read('.claude/settings.json')!).hooks.SessionStart[0].hooks[0].command as string;
    const sub = join(p.dir, 'src');
    mkdirSync(sub);
    const run = spawnSync('/bin/sh', ['-c', command], { cwd: sub, input: '{"hook_event_name":"SessionStart","source":"startup"}', encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude' } });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).hookSpecificOutput.additionalContext).toMatch(/you write as "claude"/);
  });

  it('refuses outside a ledger, an unknown agent kind, and --check with --remove (exit 2, nothing written)', async () => {
    expect((await ledger('setup', 'gemini')).code).toBe(2);
    expect((await ledger('setup', 'claude', '--check', '--remove')).code).toBe(2);
    expect((await ledger('setup', 'claude', '--agent', 'bad name')).code).toBe(2);
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

  it('merges: [mcp_servers.handoff-ledger] appended as a block (the user\'s TOML and comments untouched), the hooks beside the user\'s', async () => {
    const r = (await ledger('setup', 'codex'));
    expect(r.code, r.stderr).toBe(0);
    const toml = read('.codex/config.toml')!;
    // The block at the top, as dotted keys; the user's TOML after it, untouched.
    expect(toml.endsWith(`\n${USER_TOML}`)).toBe(true);
    expect(toml.startsWith('# handoff-ledger:begin')).toBe(true);
    const doc = parse(toml) as { model: string; mcp_servers: Record<string, unknown> };
    expect(doc.model).toBe('gpt-5.1-codex');
    expect(doc.mcp_servers.docs).toEqual({ command: 'docs-mcp', args: ['--port', '0'] });
    expect(doc.mcp_servers['handoff-ledger']).toEqual({ ...LAUNCH, args: [...LAUNCH.args, 'mcp'], env: { LEDGER_AGENT: 'codex' } });

    const hooks = JSON.parse(read('.codex/hooks.json')!).hooks;
    expect(hooks.Stop).toEqual([
      { hooks: [{ type: 'command', command: 'notify-send done' }] },
      { hooks: [{ type: 'command', command: hookCmd('hook codex stop --agent codex'), timeout: 10 }] },
    ]);
    expect(hooks.SessionStart).toEqual([{ matcher: 'startup|resume|clear', hooks: [{ type: 'command', command: hookCmd('hook codex session-start --agent codex'), timeout: 10 }] }]);
    // A file without a final newline gets one before the blank line and the block.
    expect(read('AGENTS.md')!.startsWith(USER_AGENTS_MD + '\n\n<!-- handoff-ledger:begin')).toBe(true);
  });

  it('is idempotent, checks, and --remove restores the user\'s files (the final newline AGENTS.md lacked aside)', async () => {
    const user = snapshotOf(FILES);
    expect((await ledger('setup', 'codex')).code).toBe(0);
    const once = snapshotOf(FILES);
    expect((await ledger('setup', 'codex')).code).toBe(0);
    expect(snapshotOf(FILES)).toEqual(once);
    expect((await ledger('setup', 'codex', '--check')).code).toBe(0);
    write('.codex/config.toml', read('.codex/config.toml')!.replace('LEDGER_AGENT = "codex"', 'LEDGER_AGENT = "claude"'));
    const stale = (await ledger('setup', 'codex', '--check'));
    expect(stale.code).toBe(31);
    expect(stale.stdout).toMatch(/^stale +\.codex\/config\.toml$/m);
    expect((await ledger('setup', 'codex', '--remove')).code).toBe(0);
    expect(read('.codex/config.toml')).toBe(user['.codex/config.toml']);
    expect(read('.codex/hooks.json')).toBe(user['.codex/hooks.json']);
    // Policy (src/agents/README.md): a file that did not end with a newline keeps the one setup added.
    expect(read('AGENTS.md')).toBe(USER_AGENTS_MD + '\n');
  });

  it('refuses a config.toml that already names handoff-ledger outside the block, or is not TOML, changing nothing', async () => {
    write('.codex/config.toml', USER_TOML + '\n[mcp_servers.handoff-ledger]\ncommand = "mine"\n');
    let before = snapshotOf(FILES);
    let r = (await ledger('setup', 'codex'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/defines \[mcp_servers\.handoff-ledger\] outside the block setup writes/);
    expect(snapshotOf(FILES)).toEqual(before);
    write('.codex/config.toml', 'mcp_servers = { docs = { command = "x" } }\n');
    before = snapshotOf(FILES);
    r = (await ledger('setup', 'codex'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.toml is not valid TOML|defines \[mcp_servers\]/);
    expect(snapshotOf(FILES)).toEqual(before);
  });

  it('places its table so that a root key the user adds later stays at the root (issue 23.9)', async () => {
    expect((await ledger('setup', 'codex')).code).toBe(0);
    // The user appends a root key at the end of the root section, and another at the very end of the block's neighbour: the top.
    write('.codex/config.toml', read('.codex/config.toml')!.replace('model = "gpt-5.1-codex"', 'model = "gpt-5.1-codex"\napproval_policy = "never"'));
    const doc = parse(read('.codex/config.toml')!) as Record<string, unknown>;
    expect(doc.approval_policy).toBe('never');
    expect(Object.keys((doc.mcp_servers as Record<string, Record<string, unknown>>)['handoff-ledger'])).toEqual(['command', 'args', 'env']);
    expect((await ledger('setup', 'codex', '--check')).code).toBe(0);
  });
});

describe('setup edits only what it owns (issue 23.9)', () => {
  it('keeps every byte of the user\'s JSON outside its own keys: 1e400, a 20-digit integer, spacing', async () => {
    const odd = '{\n  "big": 12345678901234567890123,\n  "huge": 1e400,\n  "env":   { "KEEP": "x" },\n  "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "echo mine", "timeout": 1.50 } ] } ] }\n}\n';
    write('.claude/settings.json', odd);
    expect((await ledger('setup', 'claude')).code).toBe(0);
    const after = read('.claude/settings.json')!;
    // Every value the user wrote, as written (a container setup adds to is laid out again).
    for (const kept of ['"big": 12345678901234567890123,\n  "huge": 1e400,\n', '"KEEP": "x"', '"command": "echo mine"', '"timeout": 1.50']) expect(after).toContain(kept);
    expect((await ledger('setup', 'claude', '--remove')).code).toBe(0);
    const back = read('.claude/settings.json')!;
    expect(back.startsWith('{\n  "big": 12345678901234567890123,\n  "huge": 1e400,\n')).toBe(true);
    expect(back).toContain('"timeout": 1.50');
    expect(back).not.toContain('handoff-ledger');
  });

  it('never writes through a link: a .claude folder or a file that is a symbolic link is refused, nothing written', async () => {
    const outside = scratch('ledger-setup-link-');
    try {
      symlinkSync(outside.dir, join(p.dir, '.claude'));
      const r = (await ledger('setup', 'claude'));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/\.claude is a symbolic link; setup edits only files inside the project, never through a link/);
      expect(readdirSync(outside.dir)).toEqual([]);
      expect(existsSync(join(p.dir, '.mcp.json'))).toBe(false);
      writeFileSync(join(outside.dir, 'target.md'), 'theirs\n');
      rmSync(join(p.dir, '.claude'));
      symlinkSync(join(outside.dir, 'target.md'), join(p.dir, 'CLAUDE.md'));
      expect((await ledger('setup', 'claude')).code).toBe(2);
      expect(readFileSync(join(outside.dir, 'target.md'), 'utf8')).toBe('theirs\n');
    } finally {
      outside.cleanup();
    }
  });

  it('refuses, naming it, a line the user put inside its marked block, and drops nothing', async () => {
    expect((await ledger('setup', 'claude')).code).toBe(0);
    write('CLAUDE.md', read('CLAUDE.md')!.replace('## Handoff ledger', '## Handoff ledger\nOur own rule: never push on Fridays.'));
    const before = read('CLAUDE.md');
    for (const args of [[], ['--remove']]) {
      const r = (await ledger('setup', 'claude', ...args));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/holds a line setup did not write \("Our own rule: never push on Fridays\."\)/);
      expect(read('CLAUDE.md')).toBe(before);
    }
  });
});

describe('the files setup writes, committed, on another clone (SPEC 12)', () => {
  it('pass --check there, and their hook runs there from a subfolder', async () => {
    install(p.dir);
    expect((await ledger('setup', 'claude')).code).toBe(0);
    expect((await ledger('setup', 'codex')).code).toBe(0);
    const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...BASE_ENV, GIT_CONFIG_NOSYSTEM: '1' } });
    git(p.dir, 'init', '-q');
    git(p.dir, 'add', '.mcp.json', '.claude/settings.json', 'CLAUDE.md', '.codex', 'AGENTS.md');
    git(p.dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'setup');
    const other = scratch('ledger-setup-clone-');
    try {
      const clone = join(other.dir, 'clone');
      expect(git(other.dir, 'clone', '-q', p.dir, clone).status).toBe(0);
      const there = (...args: string[]) => spawnLedgerSync(args, { cwd: clone, env: BASE_ENV });
      expect(there('init').code).toBe(0);
      install(clone);
      for (const kind of ['claude', 'codex']) {
        const c = there('setup', kind, '--check');
        expect(c.code, c.stdout).toBe(0);
      }
      const command = JSON.parse(readFileSync(join(clone, '.claude/settings.json'), 'utf8')).hooks.SessionStart[0].hooks[0].command as string;
      mkdirSync(join(clone, 'src'));
      const run = spawnSync('/bin/sh', ['-c', command], { cwd: join(clone, 'src'), input: '{"hook_event_name":"SessionStart","source":"startup"}', encoding: 'utf8', env: { ...BASE_ENV, LEDGER_AGENT: 'claude' } });
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout).hookSpecificOutput.additionalContext).toMatch(/you write as "claude"/);
    } finally {
      other.cleanup();
    }
  });
});
