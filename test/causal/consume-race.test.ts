// Real processes race to consume one handoff with `gate --consume-as`: the gate is evaluated
// again under the writer lock and the consume record appended in the same critical section, so
// each consumer consumes exactly once, however the processes interleave. Needs the built CLI
// (`npx tsc -p .`; `npm test` builds it first).
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, spawnLedger } from '../helpers/cli.js';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

function consume(consumer: string): Promise<{ consumer: string; code: number; out: string; err: string }> {
  const child = spawnLedger(['gate', 'migrate_schema_17', '--consume-as', consumer, '--json', '--wait', '10m'], { cwd: p.dir, env: { LEDGER_AGENT: 'deployer' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ consumer, code: code ?? -1, out, err })));
}

describe('concurrent consumers racing with --consume-as', () => {
  it('exactly one consume record per consumer; every other attempt holds as a duplicate', async () => {
    expect(existsSync(BIN), `build the CLI first: npx tsc -p . (${BIN})`).toBe(true);
    p = await project();
    const h = await p.id(handoff('migrate_schema_17', 'execution_002', 'success'));
    const racers = ['deploy_api_18', 'deploy_api_18', 'deploy_api_18', 'audit_bot', 'audit_bot', 'audit_bot'];
    const results = await Promise.all(racers.map(consume));
    for (const consumer of ['deploy_api_18', 'audit_bot']) {
      const mine = results.filter((r) => r.consumer === consumer);
      expect(mine.filter((r) => r.code === 0), JSON.stringify(mine)).toHaveLength(1);
      const held = mine.filter((r) => r.code !== 0);
      expect(held.map((r) => r.code)).toEqual([20, 20]);
      for (const r of held) expect(JSON.parse(r.out).reason).toContain('duplicate delivery');
      const records = p.records().filter((r) => r.kind === 'consume' && r.consumer === consumer);
      expect(records).toHaveLength(1);
      expect(records[0].handoff).toBe(h);
    }
  });
});

describe('concurrent retries of one handoff (real processes)', () => {
  it('append it once: every process exits 0 with the same id', async () => {
    expect(existsSync(BIN), `build the CLI first: npx tsc -p . (${BIN})`).toBe(true);
    p = await project();
    p.write('db/schema.sql', 'v1\n');
    const args = ['append', 'handoff', '--op', 'migrate_schema_17', '--exec', 'execution_002', '--outcome', 'success', '--evidence', 'schema=db/schema.sql', '--json', '--wait', '10m'];
    const run = () => {
      const child = spawnLedger(args, { cwd: p.dir, env: { LEDGER_AGENT: 'producer' } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
      return new Promise<{ code: number; out: string }>((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out })));
    };
    const results = await Promise.all([run(), run(), run(), run()]);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    const ids = new Set(results.map((r) => JSON.parse(r.out).id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => JSON.parse(r.out).existing === false)).toHaveLength(1);
    expect(p.records().filter((r) => r.kind === 'handoff')).toHaveLength(1);
  });
});
