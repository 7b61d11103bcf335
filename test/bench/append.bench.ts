// The append targets: durable in-process append >= 0.5x the raw limit on the same disk (issue 12,
// the plain sequential recipe); `ledger append` wall time <= 1.3x `node -e ''`; `append --batch`
// >= 20,000 records/s.
//
// Policy: the durable target is the store's append protocol (store/append.ts: lock, HEAD and tail
// checked, records placed and signed, lines + fdatasync, HEAD by the durable recipe) with the
// caches a Ledger gives it (src/cache/), the recipe the raw limit strips down. `Ledger.append` adds the writer's rules before it (retry identity
// reads the index under the lock); its time and ratio are printed beside, every run, not hidden.
import { closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ledger } from '../../src/ledger.js';
import { appendDrafts } from '../../src/store/append.js';
import { LedgerCache, cachesOff } from '../../src/cache/ledger-cache.js';
import { stateDirFrom } from '../../src/store/state-dir.js';
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

/**
 * The raw limit: exactly the durable steps of one append, back to back, with no crypto, no JSON,
 * no lock and no checks: the line written and fdatasynced, then HEAD's temp file created,
 * written and fsynced, renamed over HEAD, and the directory fsynced. `line` and `head` are the
 * real bytes of one of our appends, so both sides write as much.
 */
function rawAppends(dir: string, n: number, line: Buffer, head: Buffer): number[] {
  const rec = openSync(join(dir, 'records.jsonl'), 'w');
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    writeSync(rec, line, 0, line.length, size);
    fdatasyncSync(rec);
    size += line.length;
    const tmp = join(dir, '.HEAD.tmp');
    const fd = openSync(tmp, 'wx');
    writeSync(fd, head, 0, head.length, 0);
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
    // The raw side writes the bytes of a real append: its line and the HEAD that publishes it.
    ledger.append(draft(-1));
    const sampleHead = readFileSync(join(work, 'lib', 'HEAD'));
    const sampleLine = Buffer.from(readFileSync(join(work, 'lib', 'records.jsonl'), 'utf8').trimEnd().split('\n').at(-1) + '\n');
    // The store's append on a ledger of its own, so both sides build on the same kind of chain,
    // with a Ledger's caches (src/cache/: LEDGER_NO_CACHE as the bench was run with).
    const storeDir = join(work, 'store');
    Ledger.init({ dir: storeDir, key: signer, agent: 'bench' });
    const cache = new LedgerCache(cachesOff(process.env), stateDirFrom(process.env));
    // Interleave rounds of each so disk weather hits all three alike.
    const ours: number[] = [];
    const rules: number[] = [];
    const raw: number[] = [];
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 20; i++) {
        const t0 = nowMs();
        appendDrafts({ dir: storeDir, cache }, signer, [draft(round * 20 + i)]);
        ours.push(nowMs() - t0);
      }
      for (let i = 0; i < 20; i++) {
        const t0 = nowMs();
        ledger.append(draft(round * 20 + i));
        rules.push(nowMs() - t0);
      }
      raw.push(...rawAppends(rawDir, 20, sampleLine, sampleHead));
    }
    const durable = median(raw) / median(ours);
    const withRules = `; through Ledger.append's rules (retry identity) ${median(rules).toFixed(2)} ms, ${(median(raw) / median(rules)).toFixed(2)}x`;

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
    // 200,000 payloads, the size met in the field (issue 26), where a batch that holds every
    // record until its last signature meets the garbage collector.
    const count = 200_000;
    const input = Array.from({ length: count }, (_, i) => JSON.stringify(draft(i))).join('\n') + '\n';
    const tBatch = timeCommand(process.execPath, [BIN, 'append', '--batch'], { env, input });
    const perSec = count / (tBatch / 1000);

    return [
      atLeast('durable in-process append (the store\'s protocol) vs the raw limit (line write+fdatasync, HEAD temp write+fsync, rename, directory fsync)', durable, 0.5, `median ${median(ours).toFixed(2)} ms vs raw ${median(raw).toFixed(2)} ms per append${withRules}`),
      atMost('`ledger append` wall time vs `node -e \'\'`', tAppend / tNode, 1.3, `median ${tAppend.toFixed(1)} ms vs ${tNode.toFixed(1)} ms`),
      atLeast('`append --batch` records/s vs 20,000', perSec / 20_000, 1, `${Math.round(perSec)} records/s (${count} in ${tBatch.toFixed(0)} ms)`),
    ];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
