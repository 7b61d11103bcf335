// Issue 23 findings 3 and 4, for real as two users: root holds the key and runs `ledger` for the
// agent (nobody) through sudo. The agent's repository is the agent's code: a clean filter and an
// fsmonitor in its .git/config, a `url.*.insteadOf` that turns a remote's URL into an option.
// git once ran them as root (`init`, `doctor`), or as the MCP server's user (`resume`, the stop
// hook), and the agent got the key; `init --remote origin` passed `--upload-pack=CMD` to git.
// Now every git in the caller's work tree runs as the caller (src/project/git.ts callerGit), and
// a remote's URL is checked before git sees it (src/remote/git.ts checkRemoteUrl).
import { beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, keep, withSuiteEnv } from '../helpers/cli.js';
import { AGENT, agentProjectRoot, asAgent, asKeyOwner, everything, isRoot, keyState, oneLine, SKIP, SUDO_ENV } from '../helpers/two-users.js';

let project: { dir: string };
let spy: string; // a folder both users may write: where the agent's programs say who ran them
let key: string;
let stateEnv: Record<string, string>;

const AGENT_GIT = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.invalid', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };
const agentGit = (...args: string[]) => agentGitIn(project.dir, ...args);
const agentGitIn = (dir: string, ...args: string[]) => {
  const r = asAgent('git', args, dir, AGENT_GIT);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};
/** `ledger` as the key owner, with this test's own state directory (put back with the project). */
const owner = (args: string[], cwd: string, env: Record<string, string> = {}, input = '') => asKeyOwner(args, cwd, { ...stateEnv, ...env }, input);

/** Who ran the agent's programs: one uid per line. */
const ranAs = () => (existsSync(join(spy, 'uids')) ? readFileSync(join(spy, 'uids'), 'utf8').split('\n').filter(Boolean) : []);
const leaked = () => (existsSync(join(spy, 'leak')) ? readFileSync(join(spy, 'leak')) : Buffer.alloc(0));

/**
 * The agent's repository, made by the agent: one tracked file, and its programs in .git/config;
 * the spy folder; the key owner's state directory. Built once per file, put back byte for byte
 * (owners and modes too) before each test (helpers/cli.ts `keep`).
 */
const fixture = keep(() => {
  const { root, dir, env } = agentProjectRoot('ledger-keyowner-git-');
  const spyDir = join(root, 'spy');
  mkdirSync(spyDir);
  chmodSync(spyDir, 0o777);
  const keyPath = join(dir, 'keys', 'harness.key');
  agentGitIn(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'tz.js'), 'export const toLocal = (t) => t;\n');
  writeFileSync(join(dir, '.gitattributes'), '* filter=leak\n');
  const program = `sh -c 'id -u >> ${spyDir}/uids; cat ${keyPath} >> ${spyDir}/leak 2>/dev/null; cat'`;
  writeFileSync(join(dir, 'monitor.sh'), `#!/bin/sh\nid -u >> ${spyDir}/uids\ncat ${keyPath} >> ${spyDir}/leak 2>/dev/null\nexit 1\n`);
  chmodSync(join(dir, 'monitor.sh'), 0o755);
  for (const f of ['tz.js', '.gitattributes', 'monitor.sh']) chownSync(join(dir, f), AGENT, AGENT);
  agentGitIn(dir, 'config', 'filter.leak.clean', program);
  agentGitIn(dir, 'config', 'filter.leak.smudge', program);
  agentGitIn(dir, 'config', 'core.fsmonitor', join(dir, 'monitor.sh'));
  agentGitIn(dir, 'add', '-A');
  agentGitIn(dir, 'commit', '-q', '-m', 'tz');
  rmSync(join(spyDir, 'uids'), { force: true });
  rmSync(join(spyDir, 'leak'), { force: true });
  return { root, dir, spyDir, keyPath, env };
});

beforeEach(async () => {
  if (!isRoot) return;
  const f = await fixture();
  project = { dir: f.dir };
  spy = f.spyDir;
  key = f.keyPath;
  stateEnv = f.env;
});

/** The tracked file's time moves, so the next `git status` must run the clean filter to compare it. */
const touch = () => utimesSync(join(project.dir, 'tz.js'), new Date(), new Date(Date.now() + 5_000));

describe.skipIf(!isRoot)(`the agent's git programs, when root runs ledger for it (${isRoot ? 'root and nobody' : SKIP})`, () => {
  it('init, doctor, resume, a checkpoint\'s workdir and the stop hook run them as the agent only: the key never leaks', () => {
    const init = owner(['init', '--name', 'git'], project.dir);
    expect(init.code, init.stderr).toBe(0);
    expect(keyState(key).startsWith('600 0 ')).toBe(true);
    owner(['doctor'], project.dir);
    expect(owner(['start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()'], project.dir).code).toBe(0);
    touch();
    const resume = owner(['resume', 'fix-tz'], project.dir);
    expect(resume.code, resume.stderr).toBe(0);
    touch();
    const cp = owner(['checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n', '--tests-cmd', 'true'], project.dir);
    expect(cp.code, cp.stderr).toBe(0);
    touch();
    const hook = owner(['hook', 'claude', 'stop'], project.dir, { LEDGER_AGENT: 'claude' }, JSON.stringify({ session_id: 's', hook_event_name: 'Stop', stop_hook_active: false, cwd: project.dir }));
    expect(hook.code).toBe(0);
    // The filter did run (the test is not vacuous), and only ever as the agent, who cannot read the key.
    expect(ranAs().length).toBeGreaterThan(0);
    expect(new Set(ranAs())).toEqual(new Set([String(AGENT)]));
    expect(leaked().length).toBe(0);
  });

  it('the MCP server\'s resume tool runs them as the agent too', async () => {
    expect(owner(['init', '--name', 'git'], project.dir).code).toBe(0);
    expect(owner(['start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()'], project.dir).code).toBe(0);
    touch();
    const env = { PATH: process.env.PATH ?? '', ...withSuiteEnv({ ...SUDO_ENV, ...stateEnv, LEDGER_AGENT: 'claude' }) };
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: project.dir, env, stderr: 'pipe' });
    const client = new Client({ name: 'keyowner-git', version: '0.0.0' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'resume', arguments: { slug: 'fix-tz' } });
      expect(r.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(ranAs().length).toBeGreaterThan(0);
    expect(new Set(ranAs())).toEqual(new Set([String(AGENT)]));
    expect(leaked().length).toBe(0);
  });
});

describe.skipIf(!isRoot)(`a remote whose URL git would read as an option (${isRoot ? 'root and nobody' : SKIP})`, () => {
  const mark = () => join(spy, 'ran');

  it('init --remote origin, where url.*.insteadOf makes the URL --upload-pack=CMD: exit 2, CMD never runs, nothing is made', () => {
    agentGit('config', `url.--upload-pack=touch ${mark()};.insteadOf`, 'evil:');
    agentGit('remote', 'add', 'origin', 'evil:x');
    const was = everything(project.dir);
    const r = owner(['init', '--remote', 'origin', '--json'], project.dir);
    expect(r.code, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('USAGE');
    expect(oneLine(r)).toMatch(/the URL of remote origin "--upload-pack=touch .*" is refused: git would read it as an option/);
    expect(existsSync(mark())).toBe(false);
    expect(everything(project.dir)).toEqual(was);
  });

  it('a remote helper (ext::) or a transport off the list, named directly or through the config: exit 2, nothing runs', () => {
    agentGit('remote', 'add', 'helper', `ext::sh -c touch% ${mark()}`);
    const was = everything(project.dir);
    for (const remote of [`ext::sh -c touch% ${mark()}`, 'helper', `fd::3`, 'ftp://example.invalid/x', 'ssh://-oProxyCommand=touch/x']) {
      const r = owner(['init', '--remote', remote, '--json'], project.dir);
      expect(r.code, `${remote}: ${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe('USAGE');
      oneLine(r);
    }
    expect(existsSync(mark())).toBe(false);
    expect(everything(project.dir)).toEqual(was);
  });
});
