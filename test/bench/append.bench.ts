// Issue 2's targets: durable in-process append >= 0.7x the raw limit on the same disk;
// `ledger append` wall time <= 1.3x `node -e ''`; `append --batch` >= 20,000 records/s.
import { closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ledger } from '../../src/ledger.js';
import { createSigner } from '../../src/sign.js';
import type { Draft } from '../../src/record.js';
import { alternate, atLeast, atMost, median, nowMs, timeCommand, type BenchResult, LEDGER_BIN } from './bench-kit.js';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';

const BIN = LEDGER_BIN; // the shipped binary: what a user's shell runs
// Benchmarks write where the project lives (the same disk CI uses), not tmpfs.
const BASE = fileURLToPath(new URL('../../../test/.scratch/', import.meta.url));

function draft(i: number): Draft {
  return { kind: 'handoff', agent: 'bench', logical_operation_id: `op_${i % 100}`, execution_id: `exec_${i}`, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '14 passed' } }, depends_on: [] } as Draft;
}

/** The raw limit: the same durable steps with no crypto, no JSON, no lock. */
function rawAppends(dir: string, n: number, line: Buffer, head: Buffer): number[] {
  const rec = openSync(join(dir, 'records.jsonl'), 'a');
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    writeSync(rec, line, 0, line.length, size);
    fdatasyncSync(rec);
    size += line.length;
    const tmp = join(dir, '.HEAD.tmp');
    const fd = openSync(tmp, 'w');
    writeSync(fd, head);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, join(dir, 'HEAD'));
    const dfd = openSync(dir, 'r');
    fsyncSync(dfd);
    closeSync(dfd);
    times.push(nowMs() - t0);
  }
  closeSync(rec);
  return times;
}

export default async function appendBench(): Promise<BenchResult[]> {
  spawnSync('mkdir', ['-p', BASE]);
  const work = mkdtempSync(join(BASE, 'bench-append-'));
  try {
    const seed = new Uint8Array(randomBytes(32));
    const signer = createSigner(seed);
    const { ledger } = Ledger.init({ dir: join(work, 'lib'), key: signer, agent: 'bench' });
    const rawDir = mkdtempSync(join(work, 'raw-'));
    // Interleave rounds of ours and raw so disk weather hits both.
    const ours: number[] = [];
    const raw: number[] = [];
    const sampleLine = Buffer.from(JSON.stringify({ ...draft(0), pad: 'x'.repeat(200) }) + '\n');
    const sampleHead = Buffer.from('x'.repeat(330) + '\n');
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 20; i++) {
        const t0 = nowMs();
        ledger.append(draft(round * 20 + i));
        ours.push(nowMs() - t0);
      }
      raw.push(...rawAppends(rawDir, 20, sampleLine, sampleHead));
    }
    const durable = median(raw) / median(ours);

    // Whole-process cost against starting node at all.
    const cli = join(work, 'cli');
    spawnSync(process.execPath, [BIN, 'init', '--dir', join(cli, '.ledger'), '--key', join(cli, 'k.key'), '--trust', join(cli, 't.json')], { stdio: 'ignore' });
    let n = 0;
    const env = { ...process.env, LEDGER_AGENT: 'bench', LEDGER_DIR: join(cli, '.ledger'), LEDGER_KEY: join(cli, 'k.key') };
    const [tAppend, tNode] = alternate(
      25,
      () => timeCommand(process.execPath, [BIN, 'append', 'handoff', '--op', 'op', '--exec', `e${n++}`, '--outcome', 'success'], { env }),
      () => timeCommand(process.execPath, ['-e', '']),
    );

    // Batch throughput through the CLI, process start included.
    const count = 50_000;
    const input = Array.from({ length: count }, (_, i) => JSON.stringify(draft(i))).join('\n') + '\n';
    const tBatch = timeCommand(process.execPath, [BIN, 'append', '--batch'], { env, input });
    const perSec = count / (tBatch / 1000);

    return [
      atLeast('durable in-process append vs raw write+fsync+rename limit', durable, 0.7, `median ${median(ours).toFixed(2)} ms vs raw ${median(raw).toFixed(2)} ms per append`),
      atMost('`ledger append` wall time vs `node -e \'\'`', tAppend / tNode, 1.3, `median ${tAppend.toFixed(1)} ms vs ${tNode.toFixed(1)} ms`),
      atLeast('`append --batch` records/s vs 20,000', perSec / 20_000, 1, `${Math.round(perSec)} records/s (${count} in ${tBatch.toFixed(0)} ms)`),
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
