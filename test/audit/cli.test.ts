// `ledger audit` as scripts see it (in-process through runCli): env defaults, the --json object
// of SPEC 8, the text verdict line, and exit 2 for usage and configuration errors.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLedger } from '../helpers/cli.js';
import { buildLedger, serializeLedger } from '../helpers/gen-ledger.js';
import { freshDir } from './harness.js';

// Real clock in the CLI: these records are from 2026-01-01, long before any test run.
const led = buildLedger({ count: 6, start: '2026-01-01T00:00:00.000Z' });
const files = serializeLedger(led);

/** A project folder: .ledger/ and keys/trust.json, the defaults of SPEC 10. */
function project(): string {
  const dir = freshDir();
  mkdirSync(join(dir, '.ledger'));
  mkdirSync(join(dir, 'keys'));
  writeFileSync(join(dir, '.ledger', 'records.jsonl'), files.records);
  writeFileSync(join(dir, '.ledger', 'HEAD'), files.head);
  writeFileSync(join(dir, 'keys', 'trust.json'), files.trust);
  return dir;
}

describe('ledger audit: defaults and environment', () => {
  it('audits .ledger with keys/trust.json when nothing is given', async () => {
    const r = await runLedger(['audit'], { cwd: project() });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('takes LEDGER_DIR and LEDGER_TRUST, and treats an empty one as unset', async () => {
    const dir = project();
    const env = { LEDGER_DIR: join(dir, '.ledger'), LEDGER_TRUST: join(dir, 'keys', 'trust.json') };
    expect((await runLedger(['audit'], { cwd: freshDir(), env })).code).toBe(0);
    expect((await runLedger(['audit'], { cwd: dir, env: { LEDGER_DIR: '', LEDGER_TRUST: '' } })).code).toBe(0);
  });

  it('lets --dir and --trust win over the environment', async () => {
    const dir = project();
    const r = await runLedger(['audit', '--dir', '.ledger', '--trust', 'keys/trust.json'], { cwd: dir, env: { LEDGER_DIR: '/nonexistent', LEDGER_TRUST: '/nonexistent' } });
    expect(r.code).toBe(0);
  });
});

describe('ledger audit: output', () => {
  it('prints the SPEC 8 object with --json, and nothing on stderr', async () => {
    const r = await runLedger(['audit', '--json'], { cwd: project() });
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, failed_layer: null, failure: null, checked: 6, warnings: [] });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toBe('');
  });

  it('ends the text with one verdict line a person can act on', async () => {
    const dir = project();
    const lines = [...led.lines];
    lines.splice(2, 1);
    writeFileSync(join(dir, '.ledger', 'records.jsonl'), lines.join(''));
    const r = await runLedger(['audit'], { cwd: dir });
    expect(r.code).toBe(11);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^linkage fails at seq 2: expected seq 2 after seq 1, got seq 3/);
    const ok = await runLedger(['audit'], { cwd: project() });
    expect(ok.stdout.trimEnd().split('\n').at(-1)).toMatch(/^pass: 6 records verified, HEAD seq 5 sha256:[0-9a-f]{12}… written 2026-01-01T00:00:05.000Z$/);
  });

  it('puts failure {layer, seq, id, reason} and the findings in --json', async () => {
    const dir = project();
    const r = await runLedger(['audit', '--json', '--max-age', '1d'], { cwd: dir });
    const out = JSON.parse(r.stdout);
    expect(r.code).toBe(14);
    expect(out.failure).toEqual({ layer: 'freshness', seq: null, id: led.ids[5], reason: expect.stringContaining('--max-age') });
    expect(out.findings[0]).toMatchObject({ layer: 'freshness', code: 'FRESH_STALE', seq: null });
  });
});

describe('ledger audit: usage and configuration errors exit 2', () => {
  it.each([
    ['no trust file', ['audit', '--trust', 'missing.json']],
    ['a bad --max-age', ['audit', '--max-age', '10 days']],
    ['a bad --skew', ['audit', '--skew', '-5m']],
    ['--advance without --floor', ['audit', '--advance']],
    ['an unknown flag', ['audit', '--fast']],
    ['no ledger there', ['audit', '--dir', 'nowhere']],
  ])('%s', async (_what, args) => {
    const r = await runLedger(args, { cwd: project() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ledger: .+\n$/);
  });

  it('a trust file that is not a trust file', async () => {
    const dir = project();
    writeFileSync(join(dir, 'keys', 'trust.json'), JSON.stringify({ v: 1, keys: [], extra: 1 }));
    const r = await runLedger(['audit', '--json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'INPUT_TRUST' } });
  });

  it('a floor file that is not a floor', async () => {
    const dir = project();
    writeFileSync(join(dir, 'floor.json'), '{"v":1}');
    expect((await runLedger(['audit', '--floor', 'floor.json'], { cwd: dir })).code).toBe(2);
  });
});
