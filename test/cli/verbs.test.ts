// The verbs are declarations (src/cli/verbs.ts), and every list of verbs is derived from them:
// each one reachable by its name, the names unique, the top-level help listing exactly them, and
// a start building only the named verb's command.
import { describe, expect, it } from 'vitest';
import { cac } from 'cac';
import { VERBS, createCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/commands/common.js';
import { ROOT, runLedger } from '../helpers/cli.js';

const io: CliIO = { stdout: () => {}, stderr: () => {}, env: {}, cwd: ROOT, isTTY: false, readStdin: async () => '' };
const names = VERBS.map((v) => v.name);

describe('when the verbs are declared', () => {
  it('each declaration builds exactly one command, under its own name', () => {
    for (const v of VERBS) {
      const cli = cac('ledger');
      v.declare(cli, io);
      expect(cli.commands.map((c) => c.name), v.name).toEqual([v.name]);
    }
  });

  it('no two verbs share a name', () => {
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThan(0);
  });
});

describe('when a verb is asked for its help', () => {
  it.each(names)('`ledger %s --help` exits 0 and prints that verb\'s usage and options', async (name) => {
    const r = await runLedger([name, '--help'], { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`\\$ ledger ${name}( |\\n)`));
    expect(r.stdout).toContain('--dir <dir>');
    // A verb's help is its own: the top-level help's table (audit layers, gate, render) is not
    // in it, only the verb's own codes (help.test.ts).
    expect(r.stdout).not.toContain('audit: schema');
  });
});

describe('when the top-level help is printed', () => {
  /** The words of one of the help's two verb sections (porcelain, then plumbing), in order. */
  const listed = (help: string, title: string) => {
    const section = help.split(`\n${title}`)[1]?.split('\n\n')[0] ?? '';
    return section.split('\n').slice(1).map((line) => line.trim().split(/\s+/)[0]);
  };
  const porcelain = VERBS.filter((v) => v.plane === 'porcelain').map((v) => v.name);
  const plumbing = VERBS.filter((v) => v.plane === 'plumbing').map((v) => v.name);

  it.each([[['--help']], [[]]])('`ledger %j` lists exactly the declared verbs, the porcelain first, then the plumbing, each in its order', async (argv) => {
    const r = await runLedger(argv, { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(listed(r.stdout, 'Commands (what people and agents type):')).toEqual(porcelain);
    expect(listed(r.stdout, 'Plumbing (')).toEqual(plumbing);
    expect([...porcelain, ...plumbing]).toEqual(names);
    expect(r.stdout.indexOf('Commands (')).toBeLessThan(r.stdout.indexOf('Plumbing ('));
    expect(r.stdout).toContain('Exit codes');
  });

  it('splits the verbs as git splits its commands (verbs.ts Policy): what people and agents type, what scripts and machines call', () => {
    expect(porcelain).toEqual(expect.arrayContaining(['init', 'status', 'start', 'checkpoint', 'finish', 'release', 'note', 'resume', 'log', 'show', 'gate', 'audit', 'sync', 'setup', 'doctor']));
    expect(plumbing).toEqual(expect.arrayContaining(['append', 'head', 'pending', 'consume-failed', 'recover', 'keygen', 'mcp', 'hook']));
  });
});

describe('when a command line names a verb', () => {
  it('builds only that verb\'s command', () => {
    for (const name of names) expect(createCli(io, name).commands.map((c) => c.name)).toEqual([name]);
  });

  it('builds every verb when none is named, or the word is not a verb (for the usual error)', async () => {
    expect(createCli(io).commands.map((c) => c.name)).toEqual(names);
    expect(createCli(io, 'no-such-verb').commands.map((c) => c.name)).toEqual(names);
    const r = await runLedger(['no-such-verb'], { cwd: ROOT });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "no-such-verb"');
  });

  it('builds none for `ledger --version` (or -v) alone, and prints the version as before', async () => {
    expect(createCli(io, undefined, true).commands).toEqual([]);
    for (const flag of ['--version', '-v']) {
      const r = await runLedger([flag], { cwd: ROOT });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^ledger\/\d+\.\d+\.\d+ \S+ node-v\d+/);
      expect(r.stderr).toBe('');
    }
    // With any other word the usual rules apply: a misspelt flag is still refused.
    const bad = await runLedger(['--version', '--bogus'], { cwd: ROOT });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--bogus');
  });

  it('still finds the verb after a global option that comes first', async () => {
    const r = await runLedger(['--json', 'head', '--help'], { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\$ ledger head\n/);
  });
});
