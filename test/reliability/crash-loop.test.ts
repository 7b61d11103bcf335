// Real crashes of library writers: Node processes that append in a loop through the library API,
// two at a time (racing for the lock), SIGKILLed at random moments. Unlike a one-shot `ledger
// append`, such a process flushes records.jsonl on its helper thread while HEAD is staged
// (store/sync-thread.ts), so these kills land inside the overlapped flushes too. After every
// round: every append a process acknowledged (printed after append() returned) is there exactly
// once, the published bytes check clean and the read API shows nothing past HEAD; nobody cleans
// up between rounds. At the end `ledger audit` passes.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import { ROOT, initProject } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';
import { prng } from './helpers/sim-disk.js';
import { assertBuilt, readChain, startLedger, type Exit } from './helpers/procs.js';

const KILLS = runs(12, 200);
const AT_ONCE = 2;
const SEED = process.env.SOAK === '1' ? Date.now() % 2 ** 31 : 20261130;

// The looping writer. It prints each id only after append() returned, with a synchronous write,
// and says once that its flush helper is up (so the test knows the overlapped path ran).
const LOOPER = `
import { closeSync, writeSync, openSync } from 'node:fs';
const { Ledger } = await import(process.env.LIB + '/ledger.js');
const { fdatasyncOnHelper } = await import(process.env.LIB + '/store/sync-thread.js');
const ledger = Ledger.open({ dir: process.env.DIR, key: process.env.KEY, waitMs: 60000 });
let helperSaid = false;
for (let i = 0; ; i++) {
  const r = ledger.append({ kind: 'handoff', agent: 'looper', logical_operation_id: 'loop', execution_id: process.env.TAG + '-' + i, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] });
  writeSync(1, r.records[0].id + '\\n');
  if (!helperSaid && i % 10 === 9) {
    const fd = openSync(process.env.DIR + '/records.jsonl', 'r');
    if (fdatasyncOnHelper(fd, () => {})) { writeSync(1, 'helper-up\\n'); helperSaid = true; }
    closeSync(fd);
  }
}
`;

let project: Awaited<ReturnType<typeof initProject>>;
let key: string;

beforeAll(async () => {
  assertBuilt();
  project = await initProject('crash-loop');
  key = JSON.parse(readFileSync(join(project.dir, 'keys/trust.json'), 'utf8')).keys[0].key;
});
afterAll(() => project?.cleanup());

function startLooper(tag: string): { kill: () => void; done: Promise<Exit> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', LOOPER], {
    cwd: project.dir,
    env: { PATH: process.env.PATH ?? '', LIB: join(ROOT, 'dist/src'), DIR: project.ledger, KEY: join(project.dir, 'keys/harness.key'), TAG: tag },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<Exit>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { kill: () => child.kill('SIGKILL'), done };
}

/** The ids a looper acknowledged: whole lines only (a kill can cut the last one). */
const acknowledgedIds = (out: string) => out.split('\n').slice(0, -1).filter((l) => l.startsWith('sha256:'));

describe('when library processes appending in a loop are SIGKILLed at random moments', () => {
  it(`loses no acknowledged append over ${KILLS} kills, with the records flush on the helper thread`, { timeout: runs(120_000, 3_600_000) }, async () => {
    const rand = prng(SEED);
    const acked = new Set<string>();
    let helperUp = 0;
    let killed = 0;
    let n = 0;
    while (killed < KILLS) {
      const round = Array.from({ length: AT_ONCE }, () => startLooper(`t${n++}`));
      // Long enough for the helper to start (tens of ms) and for many appends after it.
      const timers = round.map((p) => setTimeout(p.kill, 150 + rand() * 450));
      const exits = await Promise.all(round.map((p) => p.done));
      timers.forEach(clearTimeout);
      for (const exit of exits) {
        expect(exit.signal, exit.stderr).toBe('SIGKILL');
        killed++;
        acknowledgedIds(exit.stdout).forEach((id) => acked.add(id));
        if (exit.stdout.includes('helper-up\n')) helperUp++;
      }
      const chain = readChain(project.ledger, key);
      for (const id of acked) expect(chain.ids.filter((x) => x === id), `acknowledged ${id} is not there exactly once`).toHaveLength(1);
      const execs = chain.records.map((r) => (r as { execution_id?: string }).execution_id).filter((e) => e !== undefined);
      expect(new Set(execs).size, 'an execution landed twice').toBe(execs.length);
      const ledger = Ledger.open({ dir: project.ledger });
      expect([...ledger.records()].map((r) => r.id)).toEqual(chain.ids);
    }
    expect(helperUp, 'no looper reached the overlapped flush path').toBeGreaterThan(KILLS / 2);
    const audit = await startLedger(['audit', '--json'], { cwd: project.dir, env: {} }).done;
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    console.log(`[reliability] looping writers killed: ${JSON.stringify({ killed, helperUp, acknowledged: acked.size, published: readChain(project.ledger, key).ids.length })}`);
  });
});
