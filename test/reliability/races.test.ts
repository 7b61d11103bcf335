// Issue 6.3: races. Several real processes at once, of every kind that touches the ledger:
// appenders, batchers (three records under one lock), `ledger recover`, `ledger audit` and
// `ledger log`, six running at any moment. Every process must succeed (an audit running beside
// the writers must pass: readers see an older HEAD or a newer one, never a mix), the chain must
// stay linear, every acknowledged append must land exactly once, and every batch contiguously.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initProject } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';
import { acknowledged, assertBuilt, binKind, readChain, startLedger, type Exit } from './helpers/procs.js';

const SCALE = runs(1, 10);
const MIX = { append: 16 * SCALE, batch: 4 * SCALE, recover: 4 * SCALE, audit: 4 * SCALE, log: 4 * SCALE };
const AT_ONCE = 6;

let project: Awaited<ReturnType<typeof initProject>>;
let key: string;
const env = { LEDGER_AGENT: 'racer' };

beforeAll(async () => {
  assertBuilt();
  project = await initProject('races');
  key = JSON.parse(readFileSync(join(project.dir, 'keys/trust.json'), 'utf8')).keys[0].key;
});
afterAll(() => project?.cleanup());

type Kind = keyof typeof MIX;
interface Job { kind: Kind; tag: string; args: string[]; stdin?: string }

function jobs(): Job[] {
  const out: Job[] = [];
  for (const kind of Object.keys(MIX) as Kind[]) {
    for (let i = 0; i < MIX[kind]; i++) {
      const tag = `${kind[0]}${i}`;
      const wait = ['--wait', '10m'];
      switch (kind) {
        case 'append':
          out.push({ kind, tag, args: ['append', 'handoff', '--op', 'race_op', '--exec', tag, '--outcome', 'success', '--json', ...wait] });
          break;
        case 'batch':
          out.push({
            kind,
            tag,
            args: ['append', '--batch', '--json', ...wait],
            stdin: [0, 1, 2].map((j) => JSON.stringify({ kind: 'intent', logical_operation_id: 'race_batch', execution_id: `${tag}-${j}`, action: 'deploy' })).join('\n') + '\n',
          });
          break;
        case 'recover':
          out.push({ kind, tag, args: ['recover', '--json', ...wait] });
          break;
        case 'audit':
          out.push({ kind, tag, args: ['audit', '--json'] });
          break;
        case 'log':
          out.push({ kind, tag, args: ['log', '--json', '--limit', '1000'] });
          break;
      }
    }
  }
  // Interleave the kinds (a fixed shuffle), so every kind runs beside every other.
  return out.map((j, i) => ({ j, k: (i * 7919) % out.length })).sort((a, b) => a.k - b.k).map((x) => x.j);
}

describe('when appenders, batchers, recoverers, auditors and readers run at once', () => {
  it('keeps one linear chain with every acknowledged append exactly once', { timeout: runs(300_000, 1_800_000) }, async () => {
    const queue = jobs();
    const done: { j: Job; exit: Exit }[] = [];
    const worker = async () => {
      for (let j = queue.shift(); j; j = queue.shift()) done.push({ j, exit: await startLedger(j.args, { cwd: project.dir, env, stdin: j.stdin }).done });
    };
    await Promise.all(Array.from({ length: AT_ONCE }, worker));

    for (const { j, exit } of done) expect(exit.code, `${j.kind} ${j.tag}: ${exit.stderr}${exit.stdout}`).toBe(0);
    for (const { j, exit } of done.filter((d) => d.j.kind === 'audit')) expect(JSON.parse(exit.stdout).ok, `audit ${j.tag}`).toBe(true);
    for (const { j, exit } of done.filter((d) => d.j.kind === 'recover')) expect(JSON.parse(exit.stdout).unpublished, `recover ${j.tag} found unpublished bytes`).toBe(0);

    const chain = readChain(project.ledger, key);
    const acked = done.flatMap((d) => acknowledged(d.exit.stdout));
    expect(acked).toHaveLength(MIX.append + 3 * MIX.batch);
    expect(new Set(acked).size).toBe(acked.length);
    for (const id of acked) expect(chain.ids.filter((x) => x === id), `${id} is not there exactly once`).toHaveLength(1);
    // Linear: genesis plus exactly the acknowledged records, nothing else.
    expect(chain.ids).toHaveLength(1 + acked.length);
    for (const { j } of done.filter((d) => d.j.kind === 'batch')) {
      const seqs = chain.records.filter((r) => (r as { execution_id?: string }).execution_id?.startsWith(`${j.tag}-`)).map((r) => r.seq);
      expect(seqs, `batch ${j.tag}`).toEqual([seqs[0], seqs[0] + 1, seqs[0] + 2]);
    }
    // Every reader saw a prefix of the final chain (a published state), never anything else.
    for (const { exit } of done.filter((d) => d.j.kind === 'log')) {
      const seen = (JSON.parse(exit.stdout).records as { id: string; seq: number }[]).reverse();
      expect(seen.map((r) => r.id)).toEqual(chain.ids.slice(0, seen.length));
    }
    expect(chain.records_bytes.length).toBe(chain.head.size);
    const counts = Object.fromEntries((Object.keys(MIX) as Kind[]).map((k) => [k, done.filter((d) => d.j.kind === k).length]));
    console.log(`[reliability] races: ${JSON.stringify({ binary: binKind, processes: done.length, atOnce: AT_ONCE, ...counts, acknowledged: acked.length, landed: chain.ids.length - 1, duplicates: 0 })}`);
  });
});
