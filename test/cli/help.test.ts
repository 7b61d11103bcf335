// The command line a user expects (issue 14.9): every verb's --help opens with what it does and
// ends with its exit codes, which are data on its declaration (verbs.ts), so none can be left
// out; `ledger help VERB` is `ledger VERB --help`; a misspelt verb or flag gets "did you mean",
// with the distance from a library loaded only on that error path.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../../src/cli/cli.js';
import { EXIT, EXIT_MEANINGS } from '../../src/errors.js';
import { ROOT, initProject, runLedger, snapshot } from '../helpers/cli.js';

/** The lines of a help's "Exit codes:" section, as [code, meaning]. */
function exitSection(help: string): [number, string][] {
  const at = help.lastIndexOf('\nExit codes:\n');
  if (at < 0) return [];
  return help.slice(at + '\nExit codes:\n'.length).trimEnd().split('\n').map((l) => {
    const m = /^ {2}(\d+) +(.+)$/.exec(l);
    if (!m) throw new Error(`not an exit-code line: ${JSON.stringify(l)}`);
    return [Number(m[1]), m[2]];
  });
}

describe('when each verb declares its exit codes', () => {
  it.each(VERBS.map((v) => [v.name, v] as const))('%s lists 0, 1, 2 and 3, each once, in order, every one from the one table', (_name, v) => {
    const codes = v.exits.map((e) => e.code);
    for (const c of [EXIT.ok, EXIT.internal, EXIT.usage, EXIT.operational]) expect(codes).toContain(c);
    expect([...codes].sort((a, b) => a - b)).toEqual(codes);
    expect(new Set(codes).size).toBe(codes.length);
    const known = EXIT_MEANINGS.map((e) => e.code);
    for (const c of codes) expect(known).toContain(c);
    for (const e of v.exits) expect(e.meaning.length).toBeGreaterThan(3);
  });
});

describe('when a verb is asked for its help', () => {
  it.each(VERBS.map((v) => [v.name, v] as const))('`ledger %s --help` opens with what it does and ends with its exit codes', async (name, v) => {
    const r = await runLedger([name, '--help'], { cwd: ROOT });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^ledger\/\d+\.\d+\.\d+$/);
    expect(lines[2]).toBe(v.description);
    expect(exitSection(r.stdout)).toEqual(v.exits.map((e) => [e.code, e.meaning]));
    // The exit codes are the last thing it prints.
    expect(r.stdout.trimEnd().endsWith(`${String(v.exits[v.exits.length - 1].code).padEnd(3)} ${v.exits[v.exits.length - 1].meaning}`)).toBe(true);
  });

  it('says for gate that 0 is proceed and 20 is hold, for audit what 10-14 are, for render --check what 30 is', async () => {
    const gate = new Map(exitSection((await runLedger(['gate', '--help'], { cwd: ROOT })).stdout));
    expect(gate.get(0)).toMatch(/^proceed/);
    expect(gate.get(20)).toMatch(/^hold/);
    expect(gate.get(2)).toMatch(/bad input/);
    expect(gate.get(3)).toMatch(/operational/);
    const audit = new Map(exitSection((await runLedger(['audit', '--help'], { cwd: ROOT })).stdout));
    expect([...audit.keys()]).toEqual([0, 1, 2, 3, 10, 11, 12, 13, 14]);
    expect(audit.get(11)).toMatch(/linkage/);
    const render = new Map(exitSection((await runLedger(['render', '--help'], { cwd: ROOT })).stdout));
    expect(render.get(30)).toMatch(/--check/);
  });

  it.each(VERBS.map((v) => v.name))('`ledger help %s` prints exactly what `ledger %s --help` prints', async (name) => {
    const a = await runLedger(['help', name], { cwd: ROOT });
    const b = await runLedger([name, '--help'], { cwd: ROOT });
    expect(a).toEqual(b);
    expect(a.code).toBe(0);
  });

  it('`ledger help` is `ledger --help`, which says how to get a verb\'s help', async () => {
    const a = await runLedger(['help'], { cwd: ROOT });
    expect(a).toEqual(await runLedger(['--help'], { cwd: ROOT }));
    expect(a.stdout).toContain('ledger help VERB');
  });
});

describe('when a verb or a flag is misspelt', () => {
  let project: Awaited<ReturnType<typeof initProject>>;
  beforeAll(async () => {
    project = await initProject();
  });
  afterAll(() => project.cleanup());

  const rows: { typed: string[]; says: RegExp }[] = [
    { typed: ['gat', 'op'], says: /unknown command "gat"; did you mean `ledger gate`\?/ },
    { typed: ['chekpoint', 'x'], says: /did you mean `ledger checkpoint`\?/ },
    { typed: ['checkp', 'x'], says: /did you mean `ledger checkpoint`\?/ },
    { typed: ['rendr'], says: /did you mean `ledger render`\?/ },
    { typed: ['help', 'gaet'], says: /unknown command "gaet"; did you mean `ledger gate`\?/ },
    { typed: ['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcom', 'success'], says: /Unknown option `--outcom`; did you mean `--outcome`\? see `ledger append --help`/ },
    { typed: ['recover', '--dry-rn'], says: /Unknown option `--dry-rn`; did you mean `--dry-run`\?/ },
    { typed: ['gate', 'op', '--requre-invariant', 'tests'], says: /did you mean `--require-invariant`\?/ },
    { typed: ['log', '--jsno'], says: /did you mean `--json`\?/ },
    { typed: ['--verison'], says: /Unknown option `--verison`; did you mean `--version`\? see `ledger --help`/ },
    { typed: ['--hepl'], says: /did you mean `--help`\?/ },
  ];
  it.each(rows)('`ledger $typed` exits 2 on one line, suggesting the nearest, and changes nothing', async ({ typed, says }) => {
    const before = snapshot(project.ledger);
    const r = await runLedger(typed, { cwd: project.dir, env: { LEDGER_AGENT: 'tester' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(says);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(snapshot(project.ledger)).toEqual(before);
  });

  it('suggests nothing for a word that is close to no verb or flag', async () => {
    const verb = await runLedger(['frobnicate'], { cwd: project.dir });
    expect(verb.code).toBe(2);
    expect(verb.stderr).toBe('ledger: unknown command "frobnicate"; run `ledger --help` for the list\n');
    const flag = await runLedger(['log', '--wholly-unrelated'], { cwd: project.dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe('ledger: Unknown option `--wholly-unrelated`; see `ledger log --help`\n');
  });

  it('with --json, the suggestion is the error\'s hint', async () => {
    const r = await runLedger(['gat', 'op', '--json'], { cwd: project.dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, error: { code: 'USAGE', message: 'unknown command "gat"', hint: 'did you mean `ledger gate`? run `ledger --help` for the list' } });
  });

  it('loads the distance library only on that error path, never for a command typed right', () => {
    // The unbundled CLI, in a fresh node: fastest-levenshtein is CommonJS, so once imported it
    // is in require's cache.
    const script = `
      import { createRequire } from 'node:module';
      const { runCli } = await import(${JSON.stringify(join(ROOT, 'dist/src/cli/cli.js'))});
      const io = { stdout() {}, stderr() {}, env: {}, cwd: ${JSON.stringify(project.dir)}, isTTY: false, readStdin: async () => '' };
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('fastest-levenshtein'));
      const ok = await runCli(['head'], io);
      const before = loaded();
      const bad = await runCli(['haed'], io);
      console.log(JSON.stringify({ ok, before, bad, after: loaded() }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: 0, before: false, bad: 2, after: true });
  });
});
