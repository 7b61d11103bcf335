// Unpublished bytes past HEAD go to quarantine/, never deleted; published bytes are never
// touched; a writer never builds on a HEAD it cannot verify.
import { appendFileSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initProject, runLedger, snapshot } from '../helpers/cli.js';

let project: Awaited<ReturnType<typeof initProject>>;
const env = { LEDGER_AGENT: 'tester' };
const append = (exec: string) => runLedger(['append', 'handoff', '--op', 'op', '--exec', exec, '--outcome', 'success', '--json'], { cwd: project.dir, env });

beforeEach(async () => {
  project = await initProject();
  expect((await append('e1')).code).toBe(0);
});
afterEach(() => project.cleanup());

const records = () => readFileSync(join(project.ledger, 'records.jsonl'));
const torn = Buffer.from('{"agent":"torn-writer","depends_on":[],"evi');

describe('when bytes past HEAD were never published', () => {
  it('recover --dry-run reports them and changes nothing', async () => {
    appendFileSync(join(project.ledger, 'records.jsonl'), torn);
    const before = snapshot(project.ledger);
    const r = await runLedger(['recover', '--dry-run', '--json'], { cwd: project.dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ ok: true, dry_run: true, unpublished: torn.length, moved: false });
    expect(snapshot(project.ledger)).toEqual(before);
  });

  it('recover moves them to quarantine/ byte for byte and cuts records.jsonl back to HEAD', async () => {
    const published = records();
    appendFileSync(join(project.ledger, 'records.jsonl'), torn);
    const r = await runLedger(['recover', '--json'], { cwd: project.dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ moved: true, unpublished: torn.length, published: published.length });
    expect(records()).toEqual(published);
    const files = readdirSync(join(project.ledger, 'quarantine'));
    expect(files).toHaveLength(1);
    expect(readFileSync(join(project.ledger, 'quarantine', files[0]))).toEqual(torn);
    const again = await runLedger(['recover'], { cwd: project.dir });
    expect(again.stdout).toMatch(/nothing to recover/);
  });

  it('an append quarantines them first, then appends at HEAD, and says so', async () => {
    appendFileSync(join(project.ledger, 'records.jsonl'), torn);
    const r = await append('e2');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/moved \d+ unpublished bytes/);
    expect(records().includes(torn)).toBe(false);
    expect(readdirSync(join(project.ledger, 'quarantine'))).toHaveLength(1);
    const log = await runLedger(['log', '--json'], { cwd: project.dir });
    expect(JSON.parse(log.stdout).records.map((x: { seq: number }) => x.seq)).toEqual([2, 1, 0]);
  });
});

describe('when published records are missing', () => {
  it('recover refuses loudly with exit 3 and touches nothing', async () => {
    truncateSync(join(project.ledger, 'records.jsonl'), records().length - 10);
    const before = snapshot(project.ledger);
    const r = await runLedger(['recover'], { cwd: project.dir });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refusing to recover.*published records are missing/);
    expect(snapshot(project.ledger)).toEqual(before);
  });
});

describe('when HEAD cannot be verified', () => {
  it('an append refuses to build on a HEAD whose signature fails (exit 3), changing nothing', async () => {
    const headPath = join(project.ledger, 'HEAD');
    const head = JSON.parse(readFileSync(headPath, 'utf8'));
    head.ts = '2030-01-01T00:00:00.000Z';
    writeFileSync(headPath, JSON.stringify(Object.fromEntries(Object.entries(head).sort())) + '\n');
    const before = snapshot(project.ledger);
    const r = await append('e2');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/signature that does not verify/);
    expect(snapshot(project.ledger)).toEqual(before);
  });

  it('an append refuses a HEAD whose tail is not the last line (exit 3)', async () => {
    expect((await append('e2')).code).toBe(0);
    const lines = records().toString('utf8').split('\n');
    // Swap the last two records' bytes: HEAD's size still matches, its tail no longer does.
    const swapped = [...lines.slice(0, -3), lines[lines.length - 2], lines[lines.length - 3], ''].join('\n');
    writeFileSync(join(project.ledger, 'records.jsonl'), swapped);
    const before = snapshot(project.ledger);
    const r = await append('e3');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/run `ledger audit`/);
    expect(snapshot(project.ledger)).toEqual(before);
  });
});
