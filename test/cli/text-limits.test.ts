// The CLI's own flag-length checks count text as the schema does: characters (code points, SPEC 4
// and 6), not UTF-16 units. 🦀 is one character, two units: a flag of `max` of them passes, one
// more is refused with exit 2, one line, and nothing changed (ledger and views, byte for byte).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initProject, runLedger, scratch, snapshot } from '../helpers/cli.js';

const A = '🦀';
let p: Awaited<ReturnType<typeof initProject>>;
const run = (args: string[]) => runLedger(args, { cwd: p.dir, env: { LEDGER_AGENT: 'claude' } });

beforeAll(async () => {
  p = await initProject('limits');
  for (const args of [
    ['start', 'item', '--summary', 'the item'],
    ['append', 'handoff', '--op', 'deploy', '--exec', 'e1', '--outcome', 'success'],
    ['gate', 'deploy', '--consume-as', 'c1'],
    ['append', 'handoff', '--op', 'to-revoke', '--exec', 'e1', '--outcome', 'success'], // seq 4
  ]) {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  }
});
afterAll(() => p.cleanup());

function everything(): Record<string, string | null> {
  const view = (name: string) => (existsSync(join(p.dir, name)) ? readFileSync(join(p.dir, name), 'utf8') : null);
  return { ...snapshot(p.ledger), md: view('HANDOFF.md'), yml: view('HANDOFF.yml') };
}

/** A verb with one text flag of `t`, its limit, and the flag the refusal names. */
const ROWS: [string, (t: string) => string[], number, string][] = [
  ['append handoff --note', (t) => ['append', 'handoff', '--op', 'op', '--exec', 'e1', '--outcome', 'success', '--note', t], 4096, '--note'],
  ['append handoff --invariant detail', (t) => ['append', 'handoff', '--op', 'op', '--exec', 'e2', '--outcome', 'success', '--invariant', `tests=ok:${t}`], 4096, '--invariant tests: detail'],
  ['append intent --action', (t) => ['append', 'intent', '--op', 'op', '--exec', 'e3', '--action', t], 1024, '--action'],
  ['append intent --note', (t) => ['append', 'intent', '--op', 'op', '--exec', 'e4', '--action', 'a', '--note', t], 4096, '--note'],
  ['revoke --reason', (t) => ['revoke', '4', '--reason', t], 4096, '--reason'],
  ['consume-failed --reason', (t) => ['consume-failed', 'deploy', '--consumer', 'c1', '--reason', t], 4096, '--reason'],
  ['checkpoint --done', (t) => ['checkpoint', 'item', '--done', t, '--state', 's', '--next', 'n'], 4096, '--done'],
  ['checkpoint --state', (t) => ['checkpoint', 'item', '--done', 'd', '--state', t, '--next', 'n'], 4096, '--state'],
  ['checkpoint --next', (t) => ['checkpoint', 'item', '--done', 'd', '--state', 's', '--next', t], 4096, '--next'],
  ['checkpoint --verified', (t) => ['checkpoint', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--verified', t], 1024, '--verified'],
  ['checkpoint --blocker', (t) => ['checkpoint', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--blocker', t], 1024, '--blocker'],
  ['note --text', (t) => ['note', 'item', '--agent', 'reviewer', '--text', t], 4096, '--text'],
  ['start --summary', (t) => ['start', `item-${t.length}`, '--summary', t], 4096, '--summary'],
];

describe('when a flag holds astral characters (two UTF-16 units each)', () => {
  for (const [name, args, max, flag] of ROWS) {
    it(`${name}: ${max} characters pass, ${max + 1} are refused (exit 2, one line, nothing changed)`, async () => {
      const before = everything();
      const over = await run([...args(A.repeat(max + 1)), '--json']);
      expect(over.code, over.stderr).toBe(2);
      expect(JSON.parse(over.stdout).error.code).toBe('USAGE');
      expect(over.stderr.trim().split('\n')).toHaveLength(1);
      expect(over.stderr).toContain(flag);
      expect(over.stderr).toMatch(new RegExp(`${max + 1} characters|over ${max} characters`));
      expect(everything()).toEqual(before);
      const at = await run(args(A.repeat(max)));
      expect(at.code, at.stderr).toBe(0);
    });
  }

  it(`release --note: 4096 characters pass, 4097 are refused`, async () => {
    await run(['start', 'rel', '--summary', 's']);
    const before = everything();
    const over = await run(['release', 'rel', '--note', A.repeat(4097)]);
    expect([over.code, over.stderr.trim()]).toEqual([2, 'ledger: --note is 4097 characters; at most 4096; see `ledger release --help`']);
    expect(everything()).toEqual(before);
    expect((await run(['release', 'rel', '--note', A.repeat(4096)])).code).toBe(0);
  });

  it('an evidence source is counted in characters too (the refusal says 1025, not 2050)', async () => {
    const before = everything();
    const r = await run(['append', 'handoff', '--op', 'op', '--exec', 'e9', '--outcome', 'success', '--evidence', `x=file:${A.repeat(1020)}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('evidence source must be 1-1024 characters, got 1025');
    expect(everything()).toEqual(before);
  });

  it('init --name: 128 characters pass, 129 are refused and nothing is created', async () => {
    const s = scratch();
    try {
      const over = await runLedger(['init', '--name', A.repeat(129)], { cwd: s.dir });
      expect([over.code, over.stderr.trim()]).toEqual([2, 'ledger: --name is 129 characters; at most 128; see `ledger init --help`']);
      expect(existsSync(join(s.dir, '.ledger'))).toBe(false);
      expect(existsSync(join(s.dir, 'keys'))).toBe(false);
      expect((await runLedger(['init', '--name', A.repeat(128)], { cwd: s.dir })).code).toBe(0);
    } finally {
      s.cleanup();
    }
  });
});

describe('the one count', () => {
  it('no text limit in src/ is compared against a UTF-16 length (.length against 128, 1024, 4096, 8192 or 16384)', async () => {
    const { readdirSync } = await import('node:fs');
    const src = join(__dirname, '../../src');
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const found = files.flatMap((f) => readFileSync(join(src, f), 'utf8').split('\n')
      .map((line, i) => ({ at: `src/${f}:${i + 1}`, line }))
      .filter(({ line }) => /\.length\s*[<>]=?\s*(?:128|1024|4096|8192|16384)\b/.test(line)));
    expect(found).toEqual([]);
  });
});
