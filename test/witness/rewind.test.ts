// The rewind of issue 27 (SPEC 13), on one machine: a ledger is cosigned by a witness at M
// records, then grows to N and is cosigned again; a copy of it as it was at M (its checkpoint,
// cosigned back then, included) is what a fresh runner would see after someone moved the ref
// back. `ledger audit --policy` refuses it (exit 14): the witness, asked online, has cosigned N.
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initProject, runLedger, spawnLedgerSync } from '../helpers/cli.js';
import { witnessFor } from './helpers/serve.js';

describe('when a fresh runner is shown a ledger rolled back to before what a witness cosigned', () => {
  let p: Awaited<ReturnType<typeof initProject>>;
  let witness: ChildProcess;
  let wvkey: string;
  const env = { LEDGER_AGENT: 'claude' };
  // The runner's own per-user state: it has never seen this ledger (no marks, no memo).
  const runnerState = mkdtempSync(join(tmpdir(), 'runner-state-'));
  const audit = (dir: string, policy: string, extra: string[] = []) =>
    runLedger(['audit', '--dir', join(dir, '.ledger'), '--trust', join(p.dir, 'keys/trust.json'), '--policy', join(p.dir, policy), ...extra], { cwd: p.dir, env: { LEDGER_STATE_DIR: runnerState } });

  beforeAll(async () => {
    p = await initProject('rewind');
    expect((await runLedger(['start', 'item', '--summary', 's'], { cwd: p.dir, env })).code).toBe(0);
    let url: string;
    ({ vkey: wvkey, child: witness, url } = await witnessFor(p.dir, join(p.dir, 'w')));
    writeFileSync(join(p.dir, 'online.policy'), `witness W1 ${wvkey} ${url}\nquorum W1\n`);
    writeFileSync(join(p.dir, 'offline.policy'), `witness W1 ${wvkey}\nquorum W1\n`);
  });
  afterAll(() => {
    witness?.kill('SIGTERM');
    p?.cleanup();
    rmSync(runnerState, { recursive: true, force: true });
  });

  it('refuses the rolled-back copy (14), accepts the current one, and says why', async () => {
    expect((await runLedger(['witness', 'cosign', '--policy', 'online.policy'], { cwd: p.dir })).stdout).toMatch(/^cosigned/m);
    // The state as it was at M records, cosigned: what the ref would be moved back to.
    cpSync(join(p.dir, '.ledger'), join(p.dir, 'rolled-back', '.ledger'), { recursive: true });
    expect((await runLedger(['note', 'item', '--text', 'withdrawn: do not deploy'], { cwd: p.dir, env })).code).toBe(0);
    expect((await runLedger(['witness', 'cosign', '--policy', 'online.policy'], { cwd: p.dir })).stdout).toMatch(/^cosigned/m);

    const now = await audit(p.dir, 'online.policy', ['--max-age', '24h']);
    expect(now.code, now.stdout + now.stderr).toBe(0);
    expect(now.stdout).toContain('confirmed online');

    const rewound = await audit(join(p.dir, 'rolled-back'), 'online.policy', ['--max-age', '24h']);
    expect(rewound.code, rewound.stdout + rewound.stderr).toBe(14);
    expect(rewound.stdout).toMatch(/has cosigned 3 records of this ledger, more than the 2 here/);
    const json = await audit(join(p.dir, 'rolled-back'), 'online.policy', ['--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, exit_code: 14, failed_layer: 'freshness' });

    // A copy with no checkpoint at all is not witnessed either.
    cpSync(join(p.dir, '.ledger'), join(p.dir, 'stripped', '.ledger'), { recursive: true });
    rmSync(join(p.dir, 'stripped', '.ledger', 'checkpoint'));
    expect((await audit(join(p.dir, 'stripped'), 'online.policy')).code).toBe(14);
    // Offline (no URL), the cosignature alone decides: present and, with --max-age, fresh.
    expect((await audit(p.dir, 'offline.policy', ['--max-age', '24h'])).code).toBe(0);
    writeFileSync(join(p.dir, 'two.policy'), `witness W1 ${wvkey}\nwitness W2 ${wvkey.replace(/^witness\.test\/w1\+[0-9a-f]{8}\+/, 'x+00000000+')}\nquorum W1\n`);
    expect((await audit(p.dir, 'two.policy')).code).toBe(2);
  });

  it('counts a witness that is down by its cosignature alone, and still refuses a copy with no checkpoint', async () => {
    witness.kill('SIGTERM');
    await new Promise((r) => witness.once('exit', r));
    const down = await audit(p.dir, 'online.policy', ['--max-age', '24h']);
    expect(down.code, down.stdout).toBe(0);
    expect(down.stdout).toContain('unreachable now');
    // A copy with no checkpoint is refused with the witness down too: nothing stands behind it.
    const stale = await runLedger(['audit', '--dir', join(p.dir, 'stripped', '.ledger'), '--trust', join(p.dir, 'keys/trust.json'), '--policy', join(p.dir, 'online.policy')], { cwd: p.dir, env: { LEDGER_STATE_DIR: runnerState } });
    expect(stale.code).toBe(14);
  });
});
