// `ledger witness init|serve|cosign` (see witness.ts).
import { resolve } from 'node:path';
import { LedgerError, Ledger, initWitness, readPolicy, serveWitnessDir } from '../../index.js';
import { SIG_ED25519, formatVkey, parseVkey, type Vkey } from '../../formats.js';
import { parseDuration } from '../../requests/fields.js';
import type { Flags } from '../flags.js';
import { emit, envValue, ledgerDir, type CliIO, type Global } from './common.js';
import type { WITNESS } from './witness.js';
import { nodeCrypto } from '../../node-crypto.js';

type F = Flags<ReturnType<typeof WITNESS>> & Global;

export async function runWitness(io: CliIO, action: string, f: F): Promise<number> {
  if (action !== 'init' && action !== 'serve' && action !== 'cosign') throw new LedgerError('USAGE', `witness takes init, serve or cosign, got "${action}"`);
  if (action === 'cosign') return cosign(io, f);
  if (f.policy !== undefined || f.timeout !== undefined) throw new LedgerError('USAGE', '--policy and --timeout are for cosign');
  const given = f.state ?? envValue(io, 'LEDGER_WITNESS_DIR');
  if (given === undefined) throw new LedgerError('USAGE', '--state is required (the witness\'s folder), or set LEDGER_WITNESS_DIR');
  const dir = resolve(io.cwd, given);
  const logs = f.log.map((v) => {
    try {
      return parseVkey(v, [SIG_ED25519]);
    } catch (e) {
      throw new LedgerError('USAGE', `--log: ${(e as Error).message}`);
    }
  });
  return action === 'init' ? init(io, dir, logs, f) : serve(io, dir, logs, f);
}

function init(io: CliIO, dir: string, logs: Vkey[], f: F): number {
  if (f.name === undefined) throw new LedgerError('USAGE', '--name is required (the witness\'s name, e.g. witness.example.com/w1)');
  if (f.addr !== undefined) throw new LedgerError('USAGE', '--addr is for serve');
  const vkey = initWitness(dir, f.name, logs, new Uint8Array(nodeCrypto().randomBytes(32)));
  emit(io, f, { ok: true, state: dir, name: f.name, vkey, logs: logs.map(formatVkey) }, [vkey]);
  if (!f.json) io.stderr(`ledger: wrote ${dir}/witness.key (mode 0600) and ${dir}/witness.conf; the line above is the witness's verifier key for policy files\n`);
  return 0;
}

async function serve(io: CliIO, dir: string, extra: Vkey[], f: F): Promise<number> {
  if (f.name !== undefined) throw new LedgerError('USAGE', '--name is for init (serve reads it from witness.conf)');
  const m = f.addr === undefined ? null : /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):([0-9]{1,5})$/.exec(f.addr);
  if (!m || Number(m[2]) > 65535) throw new LedgerError('USAGE', `--addr must be <host>:<port>, got ${JSON.stringify(f.addr ?? '')}`);
  const w = await serveWitnessDir(dir, m[1].replace(/^\[|\]$/g, ''), Number(m[2]), extra, (line) => io.stderr(`ledger witness: ${line.replace(/[^\x20-\x7e]/g, '?')}\n`));
  emit(io, f, { ok: true, url: w.url, vkey: w.vkey, logs: w.logs }, [`${w.url} ${w.vkey}`]);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void w.close().then(done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}

async function cosign(io: CliIO, f: F): Promise<number> {
  if (f.policy === undefined) throw new LedgerError('USAGE', '--policy is required: the tlog-policy whose witnesses to ask');
  const timeoutMs = f.timeout === undefined ? 5000 : parseDuration(f.timeout, 'timeout');
  const policy = readPolicy(resolve(io.cwd, f.policy), f.policy);
  // The ledger is checked first (HEAD, the chain): nothing unverified is sent to a witness.
  const out = await Ledger.open({ dir: ledgerDir(io, f), env: io.env }).cosign(policy, timeoutMs);
  emit(io, f, { ok: true, witnesses: out }, out.map((o) => `${o.outcome.padEnd(8)} ${o.witness}${o.url ? ` ${o.url}` : ''}: ${o.detail}`));
  return 0;
}
