// Every fixtures/ledgers/<case>/ through the real CLI binary (`node dist/src/cli/bin.js audit`):
// exit code, failing layer, seq and code as expected.json says. The committed bytes must also be
// exactly what test/helpers/make-fixtures.ts builds, so the script stays their source of truth.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scratch, spawnLedgerSync } from '../helpers/cli.js';
import { FIXTURES_DIR, fixtureCases, fixtureFiles, type FixtureExpectation } from '../helpers/make-fixtures.js';

const names = readdirSync(FIXTURES_DIR).sort();
const tmp = scratch('audit-fixtures-');
afterAll(() => tmp.cleanup());

describe('the committed fixtures', () => {
  it('are exactly what make-fixtures.ts builds (no hand edits, nothing missing)', () => {
    const cases = fixtureCases();
    expect(names).toEqual(cases.map((c) => c.name).sort());
    for (const c of cases) {
      for (const [file, bytes] of Object.entries(fixtureFiles(c))) {
        expect(readFileSync(join(FIXTURES_DIR, c.name, file)).equals(bytes), `${c.name}/${file}`).toBe(true);
      }
    }
  });

  it('cover at least three cases per layer and the passes the issue names', () => {
    for (const layer of ['schema', 'linkage', 'signature', 'key-pin', 'freshness']) {
      expect(names.filter((n) => n.startsWith(layer + '-')).length, layer).toBeGreaterThanOrEqual(3);
    }
    expect(names).toEqual(expect.arrayContaining(['pass-key-rotation', 'pass-floor-advanced', 'pass-garbage-past-head']));
  });
});

describe('ledger audit on each fixture (real binary)', () => {
  it.each(names)('%s', (name) => {
    const src = join(FIXTURES_DIR, name);
    const expected = JSON.parse(readFileSync(join(src, 'expected.json'), 'utf8')) as FixtureExpectation;
    // The consumer's layout: ledger, trust file and floor in separate places.
    const work = join(tmp.dir, name);
    mkdirSync(join(work, 'ledger'), { recursive: true });
    copyFileSync(join(src, 'records.jsonl'), join(work, 'ledger', 'records.jsonl'));
    copyFileSync(join(src, 'HEAD'), join(work, 'ledger', 'HEAD'));
    copyFileSync(join(src, 'trust.json'), join(work, 'trust.json'));
    const args = ['audit', '--dir', 'ledger', '--trust', 'trust.json', '--json', ...(expected.args ?? [])];
    if (existsSync(join(src, 'floor.json'))) {
      copyFileSync(join(src, 'floor.json'), join(work, 'floor.json'));
      args.push('--floor', 'floor.json');
    }
    const run = spawnLedgerSync(args, { cwd: work });
    expect(run.stderr, name).toBe('');
    const report = JSON.parse(run.stdout);
    expect({ exit: run.code, layer: report.failed_layer, seq: report.failure?.seq ?? null, code: report.findings[0]?.code ?? null }, name).toEqual({
      exit: expected.exit,
      layer: expected.layer,
      seq: expected.seq,
      code: expected.code,
    });
    expect(report.ok, name).toBe(expected.exit === 0);
    if (expected.warning) expect(report.warnings.join('\n'), name).toContain(expected.warning);
    if (expected.floor_after) expect(JSON.parse(readFileSync(join(work, 'floor.json'), 'utf8')), name).toEqual(expected.floor_after);
  });
});
