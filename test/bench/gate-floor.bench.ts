// Issue 26's two targets on 200,000 records:
//   - `ledger gate OP` with no --floor, after one earlier gate by the same user (who then keeps a
//     floor in their state directory, src/store/user-floor.ts): at most 1.5x `node -e ''`, timed
//     alternately in the same run, both in the bare environment (bareEnv);
//   - `ledger append --batch` of 200,000 payloads on stdin: at least 20,000 records/s, wall time
//     of the whole command (read, check, sign, write, publish), the median of three runs.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { seedFrom, signerFor, streamLedger } from '../helpers/gen-ledger.js';
import { LEDGER_BIN, alternate, atLeast, atMost, bareEnv, median, nowMs, timeCommand, type BenchResult } from './bench-kit.js';

const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));
const COUNT = Number(process.env.GATE_FLOOR_BENCH_RECORDS ?? 200_000);
const BATCH = Number(process.env.BATCH_BENCH_PAYLOADS ?? 200_000);
const RUNS = Number(process.env.GATE_FLOOR_BENCH_RUNS ?? 15);

function keyFile(work: string): string {
  const path = join(work, 'harness.key');
  if (!existsSync(path)) writeFileSync(path, JSON.stringify({ v: 1, alg: 'ed25519', name: 'harness', secret_key: Buffer.from(seedFrom('harness')).toString('base64url') }) + '\n', { mode: 0o600 });
  return path;
}

async function gateWithoutFloor(): Promise<BenchResult> {
  const work = join(BASE, `bench-gate-floor-${COUNT}`);
  const dir = join(work, '.ledger');
  const trust = join(work, 'trust.json');
  const marker = join(work, 'generated');
  if (!existsSync(marker)) {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    streamLedger(dir, { count: COUNT, start: '2020-01-01T00:00:00.000Z' });
    copyFileSync(join(dir, 'trust.json'), trust);
    rmSync(join(dir, 'trust.json'));
    copyFileSync(join(dir, 'records.jsonl'), join(work, 'records.base'));
    copyFileSync(join(dir, 'HEAD'), join(work, 'HEAD.base'));
    writeFileSync(marker, '');
  } else {
    copyFileSync(join(work, 'records.base'), join(dir, 'records.jsonl'));
    copyFileSync(join(work, 'HEAD.base'), join(dir, 'HEAD'));
  }
  rmSync(join(dir, 'index'), { recursive: true, force: true });
  const state = mkdtempSync(join(BASE, 'bench-gate-floor-state-'));
  try {
    const ledger = Ledger.open({ dir, key: signerFor('harness'), stateDir: state });
    ledger.append([{ kind: 'handoff', agent: 'bench', logical_operation_id: 'bench_deploy', execution_id: 'execution_001', outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '212 passed' } }, depends_on: [] } as Draft]);
    const env = bareEnv({ ...process.env, LEDGER_DIR: dir, LEDGER_TRUST: trust, LEDGER_STATE_DIR: state });
    const gateArgs = [LEDGER_BIN, 'gate', 'bench_deploy', '--require-invariant', 'tests'];
    // The earlier gate: a full audit, after which this user keeps a floor.
    const t0 = nowMs();
    const first = spawnSync(process.execPath, gateArgs, { cwd: work, env, encoding: 'utf8' });
    const firstMs = nowMs() - t0;
    if (first.status !== 0 || !first.stdout.includes('this user now keeps a floor')) throw new Error(`the first gate did not pass or keep a floor: ${first.stdout}${first.stderr}`);
    const again = spawnSync(process.execPath, [...gateArgs, '--json'], { cwd: work, env, encoding: 'utf8' });
    const chain = (JSON.parse(again.stdout) as { chain: { floor_seq: number | null } }).chain;
    if (chain.floor_seq === null) throw new Error(`the second gate did not start from this user's floor: ${again.stdout}`);
    const [tGate, tNode] = alternate(RUNS, () => timeCommand(process.execPath, gateArgs, { cwd: work, env }), () => timeCommand(process.execPath, ['-e', ''], { env }));
    return atMost(`gate with no --floor after an earlier gate, ${COUNT.toLocaleString('en')} records / node -e ''`, tGate / tNode, 1.5,
      `gate ${tGate.toFixed(1)} ms, node ${tNode.toFixed(1)} ms (medians of ${RUNS}, bare environment); the first gate (full audit) ${(firstMs / 1000).toFixed(1)} s`);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

function appendBatch(): BenchResult {
  const work = mkdtempSync(join(BASE, 'bench-batch-'));
  try {
    const key = keyFile(work);
    const lines: string[] = [];
    for (let i = 0; i < BATCH; i++) {
      lines.push(JSON.stringify({ kind: 'handoff', logical_operation_id: `op_${i % 1000}`, execution_id: `exec_${i}`, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '14 passed' } }, depends_on: [] }));
    }
    const input = lines.join('\n') + '\n';
    const times: number[] = [];
    for (let run = 0; run < 3; run++) {
      const dir = join(work, `l${run}`);
      const state = join(work, `state${run}`);
      Ledger.init({ dir, key: signerFor('harness'), agent: 'bench', stateDir: state });
      const env = { ...process.env, LEDGER_DIR: dir, LEDGER_STATE_DIR: state, LEDGER_AGENT: 'bench' };
      const t0 = nowMs();
      const r = spawnSync(process.execPath, [LEDGER_BIN, 'append', '--batch', '--key', key], { cwd: work, env, input, encoding: 'utf8', maxBuffer: 1 << 20 });
      times.push(nowMs() - t0);
      if (r.status !== 0 || !r.stdout.startsWith(`appended ${BATCH} records`)) throw new Error(`the batch failed: ${r.stdout.slice(0, 400)}${r.stderr}`);
    }
    const t = median(times);
    const perSecond = BATCH / (t / 1000);
    return atLeast(`append --batch of ${BATCH.toLocaleString('en')} payloads, records/s / 20,000`, perSecond / 20_000, 1,
      `${Math.round(perSecond).toLocaleString('en')} records/s (${(t / 1000).toFixed(1)} s, median of 3: ${times.map((x) => (x / 1000).toFixed(1)).join(', ')} s)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export default async function gateFloorBench(): Promise<BenchResult[]> {
  mkdirSync(BASE, { recursive: true });
  return [await gateWithoutFloor(), appendBatch()];
}
