// End to end (SPEC 13, issue 27): a ledger's checkpoint cosigned by a real witness on 127.0.0.1,
// a record's proof written by `ledger prove`, and that proof checked by `ledger verify-proof` in a
// folder holding only the proof, the trust file and the policy.
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTrust, parseTrust, trustEntry } from '../../src/keys/trust.js';
import { createSigner } from '../../src/sign.js';
import { parseProof, formatProof } from '../../src/tlog/proof.js';
import { parsePolicy } from '../../src/tlog/policy.js';
import { verifyRecordProof } from '../../src/tlog/record-proof.js';
import { formatVkey } from '../../src/tlog/note.js';
import { createCosigner } from '../../src/tlog/cosignature.js';
import { initProject, runLedger, spawnLedgerSync } from '../helpers/cli.js';
import { witnessFor } from './helpers/serve.js';

describe('when a record\'s proof is cosigned by a witness and checked with nothing but the proof, trust and policy', () => {
  let p: Awaited<ReturnType<typeof initProject>>;
  let witness: ChildProcess;
  let url: string;
  let wvkey: string;
  const env = { LEDGER_AGENT: 'claude' };

  beforeAll(async () => {
    p = await initProject('proofs');
    expect((await runLedger(['start', 'item', '--summary', 's'], { cwd: p.dir, env })).code).toBe(0);
    for (let i = 0; i < 4; i++) expect((await runLedger(['note', 'item', '--text', `n${i}`], { cwd: p.dir, env })).code).toBe(0);
    let logVkey: string;
    ({ vkey: wvkey, logVkey, child: witness, url } = await witnessFor(p.dir, join(p.dir, 'w')));
    writeFileSync(join(p.dir, 'one.policy'), `log ${logVkey}\nwitness W1 ${wvkey} ${url}\nquorum W1\n`);
  });
  afterAll(() => {
    witness?.kill('SIGTERM');
    p?.cleanup();
  });

  it('cosigns, proves, and verifies offline; a changed proof, another trust or a larger quorum fail with their layer', async () => {
    const c = await runLedger(['witness', 'cosign', '--policy', 'one.policy'], { cwd: p.dir });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/^cosigned W1 /m);
    // A second append, cosigned from the size the witness already holds (a consistency proof).
    expect((await runLedger(['note', 'item', '--text', 'later'], { cwd: p.dir, env })).code).toBe(0);
    expect((await runLedger(['witness', 'cosign', '--policy', 'one.policy'], { cwd: p.dir })).stdout).toMatch(/^cosigned W1 /m);
    const proof = await runLedger(['prove', '3'], { cwd: p.dir });
    expect(proof.code, proof.stderr).toBe(0);

    const away = join(p.dir, 'away');
    mkdirSync(away);
    writeFileSync(join(away, 'r.proof'), proof.stdout);
    copyFileSync(join(p.dir, 'keys/trust.json'), join(away, 'trust.json'));
    copyFileSync(join(p.dir, 'one.policy'), join(away, 'one.policy'));
    const verify = (file: string, policy = 'one.policy', trust = 'trust.json') => runLedger(['verify-proof', file, '--trust', trust, '--policy', policy], { cwd: away, env: { LEDGER_DIR: join(away, 'no-ledger-here') } });
    const ok = await verify('r.proof');
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('cosigned by W1');

    const two = `${readFileSync(join(away, 'one.policy'), 'utf8').replace('quorum W1\n', '')}witness W2 ${formatVkey(createCosigner('witness.test/w2', new Uint8Array(32).fill(5), Date.now))}\ngroup both all W1 W2\nquorum both\n`;
    writeFileSync(join(away, 'two.policy'), two);
    expect((await verify('r.proof', 'two.policy')).code).toBe(14);

    const lines = proof.stdout.split('\n');
    const flipped = lines.map((l, i) => (i === 3 ? (l.startsWith('A') ? 'B' : 'A') + l.slice(1) : l)).join('\n');
    writeFileSync(join(away, 'flipped.proof'), flipped);
    expect((await verify('flipped.proof')).code).toBe(11);

    writeFileSync(join(away, 'other-trust.json'), formatTrust({ v: 1, keys: [trustEntry('other', createSigner(new Uint8Array(32).fill(8)).publicKey)] }));
    // The policy still names the log's key: the checkpoint holds, the record's key is not pinned.
    expect((await verify('r.proof', 'one.policy', 'other-trust.json')).code).toBe(13);
    // Without it, nothing known signed the checkpoint.
    writeFileSync(join(away, 'nolog.policy'), readFileSync(join(away, 'one.policy'), 'utf8').replace(/^log .*\n/m, ''));
    expect((await verify('r.proof', 'nolog.policy', 'other-trust.json')).code).toBe(12);
    expect((await verify('r.proof', 'nolog.policy')).code).toBe(0);

    for (const bad of ['not a proof\n', proof.stdout.replace('index 3', 'index x')]) {
      writeFileSync(join(away, 'bad.proof'), bad);
      const b = await verify('bad.proof');
      expect(b.code).toBe(2);
      expect(b.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    }
    writeFileSync(join(away, 'bad.policy'), 'quorum nobody\n');
    expect((await verify('r.proof', 'bad.policy')).code).toBe(2);

    // Freshness against the clock, decided with an injected time (never a sleep): a day later,
    // with --max-age 1h, the cosignature is too old.
    const parsed = parseProof(proof.stdout);
    const trust = parseTrust(readFileSync(join(away, 'trust.json'), 'utf8'));
    const policy = parsePolicy(readFileSync(join(away, 'one.policy'), 'utf8'));
    expect(verifyRecordProof(parsed, trust, policy, Date.now(), null).ok).toBe(true);
    expect(verifyRecordProof(parsed, trust, policy, Date.now() + 86_400_000, 3_600_000).failed).toBe('freshness');
    // Another record's line in `extra` under this proof: bound by the proof, so it fails.
    const other = parseProof((await runLedger(['prove', '2'], { cwd: p.dir })).stdout);
    expect(verifyRecordProof({ ...parsed, extra: other.extra }, trust, policy, Date.now(), null).failed).toMatch(/schema|linkage/);
    expect(formatProof(parsed)).toBe(proof.stdout);
  });

  it('reports a witness that is down as absent and delays nothing', async () => {
    writeFileSync(join(p.dir, 'down.policy'), `witness W1 ${wvkey} http://127.0.0.1:9\nquorum W1\n`);
    const c = await runLedger(['witness', 'cosign', '--policy', 'down.policy'], { cwd: p.dir });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/^absent\s+W1 /m);
  });
});
