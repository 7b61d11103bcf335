// SPEC 7, issue 25 item 1-2 on one machine: a writer never signs what its own trust would reject,
// and `ledger trust` takes bad input as every verb does (one line, its exit code, nothing written).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSecretKey } from '../../src/keys/key-file.js';
import { createSigner } from '../../src/sign.js';
import { initProject, runLedger, snapshot } from '../helpers/cli.js';

let p: { dir: string; ledger: string; cleanup: () => void };
beforeEach(async () => {
  p = await initProject('keys');
});
afterEach(() => p.cleanup());

const run = (args: string[]) => runLedger(args, { cwd: p.dir, env: { LEDGER_AGENT: 'claude' } });
const pubOf = (file: string) => createSigner(readSecretKey(join(p.dir, file)).seed).publicKey;

/** Runs `args`, expects `code`, one line on stderr, and the ledger and trust file byte-identical. */
async function refused(args: string[], code: number): Promise<string> {
  const before = { ...snapshot(p.ledger), trust: readFileSync(join(p.dir, 'keys/trust.json'), 'utf8') };
  const r = await run(args);
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect({ ...snapshot(p.ledger), trust: readFileSync(join(p.dir, 'keys/trust.json'), 'utf8') }).toEqual(before);
  return r.stderr;
}

describe('when a writer holds a key its trust file neither pins nor authorizes', () => {
  it('refuses before anything is written (exit 13), saying to restore the key and how an admin authorizes a new one', async () => {
    expect((await run(['keygen', '--out', 'keys/new.key'])).code).toBe(0);
    const err = await refused(['start', 'item', '--summary', 's', '--key', 'keys/new.key'], 13);
    expect(err).toMatch(/refusing to sign seq 1 as agent "claude"/);
    expect(err).toMatch(/restore it first/);
    expect(err).toContain(`ledger trust add ${pubOf('keys/new.key')} --name machine-`);
  });

  it('writes once the admin authorized the key, only for its agents, and not after its revocation', async () => {
    expect((await run(['keygen', '--out', 'keys/new.key'])).code).toBe(0);
    const add = await run(['trust', 'add', pubOf('keys/new.key'), '--name', 'sandbox', '--agents', 'codex', '--reason', 'a sandbox', '--json']);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ ok: true, seq: 1, accepted_from_seq: 2 });
    expect((await run(['start', 'item', '--summary', 's', '--key', 'keys/new.key', '--agent', 'codex'])).code).toBe(0);
    await refused(['note', 'item', '--text', 't', '--key', 'keys/new.key', '--agent', 'claude'], 13);
    expect((await run(['trust', 'revoke', 'sandbox', '--reason', 'gone'])).code).toBe(0);
    const err = await refused(['note', 'item', '--text', 't', '--key', 'keys/new.key', '--agent', 'codex'], 13);
    expect(err).toMatch(/revoked at seq 3/);
    expect(err).toMatch(/a revoke is final/);
    const audit = await run(['audit', '--json']);
    expect(audit.code, audit.stdout).toBe(0);
  });
});

// 1 key in 64 begins with "-" in base64url: the option parser once read such a key as a cluster of
// one-letter flags ("-h…" as --help), and `trust add` answered "unknown command add".
describe('when the public key to authorize begins with "-"', () => {
  it('is taken as the key, never as flags: the admin authorizes it and it writes', async () => {
    let seed = new Uint8Array(32);
    for (let i = 0; !createSigner(seed).publicKey.startsWith('-'); i++) seed = new Uint8Array(32).fill(i % 256).map((b, j) => (j === 0 ? i >> 8 : b));
    const key = createSigner(seed).publicKey;
    writeFileSync(join(p.dir, 'keys/dash.key'), JSON.stringify({ v: 1, alg: 'ed25519', name: 'dash', secret_key: Buffer.from(seed).toString('base64url') }) + '\n', { mode: 0o600 });
    const add = await run(['trust', 'add', key, '--name', 'dash', '--agents', 'codex', '--reason', 'a key that begins with a dash', '--json']);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ ok: true, seq: 1 });
    expect(readFileSync(join(p.ledger, 'records.jsonl'), 'utf8')).toContain(`"key":"${key}"`);
    const start = await run(['start', 'item', '--summary', 's', '--key', 'keys/dash.key', '--agent', 'codex']);
    expect(start.code, start.stderr).toBe(0);
  });
});

describe('when the handoff a gate relies on is signed by a key an admin authorized', () => {
  it('the gate proceeds, from genesis and from a floor that carries the key', async () => {
    expect((await run(['keygen', '--out', 'keys/new.key'])).code).toBe(0);
    expect((await run(['trust', 'add', pubOf('keys/new.key'), '--name', 'sandbox', '--agents', 'codex', '--reason', 'a sandbox'])).code).toBe(0);
    const floor = join(p.dir, 'consumer.floor');
    const adv = await run(['audit', '--floor', floor, '--advance', '--json']);
    expect(adv.code, adv.stdout).toBe(0);
    expect(JSON.parse(readFileSync(floor, 'utf8')).keys).toMatchObject([{ name: 'sandbox', agents: ['codex'], added_at_seq: 1 }]);
    const as = ['--key', 'keys/new.key', '--agent', 'codex'];
    expect((await run(['start', 'item', '--summary', 's', ...as])).code).toBe(0);
    const fin = await run(['finish', 'item', '--done', 'd', '--state', 's', '--next', 'n', '--invariant', 'tests=ok', ...as]);
    expect(fin.code, fin.stderr).toBe(0);
    const gate = await run(['gate', 'item', '--json']);
    expect(gate.code, gate.stdout).toBe(0);
    const fromFloor = await run(['gate', 'item', '--floor', floor, '--json']);
    expect(fromFloor.code, fromFloor.stdout).toBe(0);
    expect(JSON.parse(fromFloor.stdout).chain.checked).toBe(2);
  });
});

describe('when `ledger trust` gets bad input', () => {
  it('refuses a malformed public key, "*", an unknown name, a missing flag and a non-admin signer, each changing nothing', async () => {
    expect((await run(['keygen', '--out', 'keys/new.key'])).code).toBe(0);
    const key = pubOf('keys/new.key');
    await refused(['trust', 'add', 'AAAA', '--name', 'x', '--agents', 'codex', '--reason', 'r'], 2);
    await refused(['trust', 'add', key, '--name', 'x', '--agents', '*', '--reason', 'r'], 2);
    await refused(['trust', 'add', key, '--name', 'x', '--reason', 'r'], 2);
    await refused(['trust', 'add', key, '--name', 'bad name', '--agents', 'codex', '--reason', 'r'], 2);
    await refused(['trust', 'revoke', 'nobody', '--reason', 'r'], 2);
    await refused(['trust', 'rotate'], 2);
    // The key of the trust file pins it already: a record about it would change nothing.
    await refused(['trust', 'add', pubOf('keys/harness.key'), '--name', 'x', '--agents', 'codex', '--reason', 'r'], 2);
    // Signed by a key that is not an admin: what its own trust would reject.
    const err = await refused(['trust', 'add', key, '--name', 'x', '--agents', 'codex', '--reason', 'r', '--key', 'keys/new.key'], 13);
    expect(err).toMatch(/refusing to sign seq 1/);
  });
});
