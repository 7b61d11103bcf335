// What no verb can avoid, against `node -e ''` (issues 22 and 26: the read verbs <= 1.6x, the
// write verbs and hooks <= 1.8x, `gate` without `--floor` <= 1.5x). It sets no target of its own
// and returns no result: it prints the floor each of those targets stands on, measured in the
// same run, so a reader can tell a target that a change could meet from one that no change
// inside the spec can.
//
// - the load: `ledger head` on a small ledger (the launcher, the bundle through `head`'s own code
//   cache, one HEAD read and its line of output). Every verb pays at least this; most pay more
//   (their caches are larger: docs/speed.md).
// - a signature: node loading `node:crypto` and making one Ed25519 signature with a fixed key.
//   Every write verb signs a record and its HEAD (SPEC 4, 5).
// - one git process: node loading `node:child_process` and running one `git status` in a small
//   repository. `start`, `checkpoint` and `finish` record where the code is (SPEC 10, 12, issue
//   24: its commit, branch, whether it is dirty and its content), which takes git at least once;
//   the stop hook compares the same. (`append` asks no git: its floor is the load and a signature.)
//
// The work verbs' floor is the load plus what the other two add to `node -e ''`: no fold, no
// lock, no fsync, no view. All four commands are timed round-robin in one loop, in the bare
// environment (bareEnv), medians of FLOORS_BENCH_RUNS.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { LEDGER_BIN, bareEnv, benchGit, median, timeCommand, type BenchResult } from './bench-kit.js';

const RUNS = Number(process.env.FLOORS_BENCH_RUNS ?? 21);

// A fixed Ed25519 key as PKCS#8 DER (RFC 8410: the 16-byte prefix, then the 32-byte seed).
const SIGN = `const c=require('node:crypto');const k=c.createPrivateKey({key:Buffer.from('302e020100300506032b657004220420${'07'.repeat(32)}','hex'),format:'der',type:'pkcs8'});c.sign(null,Buffer.from('handoff-ledger/record/v1 sha256:00'),k)`;
const GIT = `require('node:child_process').spawnSync('git',['status','--porcelain=v2','-z','--branch','--untracked-files=all'],{stdio:['ignore','pipe','ignore']})`;

export default async function floors(): Promise<BenchResult[]> {
  const work = mkdtempSync(join(tmpdir(), 'ledger-bench-floors-'));
  try {
    benchGit(work, 'init', '-q', '-b', 'main');
    for (let i = 0; i < 20; i++) writeFileSync(join(work, `f${i}.txt`), `file ${i}\n`);
    benchGit(work, 'add', '-A');
    benchGit(work, 'commit', '-q', '-m', 'files');
    const dir = join(work, '.ledger');
    const { ledger } = Ledger.init({ dir, key: signerFor('harness'), agent: 'bench' });
    ledger.append([{ kind: 'handoff', agent: 'bench', logical_operation_id: 'op', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft]);
    const env = bareEnv({ ...process.env, LEDGER_DIR: dir });
    const commands: [string, string[]][] = [
      ['node', ['-e', '']],
      ['the load (ledger head)', [LEDGER_BIN, 'head']],
      ['node + one signature', ['-e', SIGN]],
      ['node + one git process', ['-e', GIT]],
    ];
    const times: number[][] = commands.map(() => []);
    const once = (i: number) => timeCommand(process.execPath, commands[i][1], { cwd: work, env });
    commands.forEach((_, i) => once(i)); // the page cache warm for each
    for (let r = 0; r < RUNS; r++) commands.forEach((_, i) => times[i].push(once(i)));
    const medians = times.map(median);
    const [node, load, sign, gitRun] = medians;
    const writer = load + (sign - node) + (gitRun - node);
    const x = (ms: number) => `${(ms / node).toFixed(2)}x`;
    console.log(`floors (medians of ${RUNS}, bare environment, round-robin):`);
    for (const [i, [name]] of commands.entries()) console.log(`  ${name.padEnd(26)} ${medians[i].toFixed(1).padStart(6)} ms  ${x(medians[i])}`);
    console.log(`  a reading verb's floor: the load, ${x(load)} (issue 22: <= 1.6x; issue 26's gate without --floor: <= 1.5x)`);
    console.log(`  start/checkpoint/finish's floor: the load + a signature + one git process, ${writer.toFixed(1)} ms, ${x(writer)} (issue 22: <= 1.8x)`);
    return [];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
