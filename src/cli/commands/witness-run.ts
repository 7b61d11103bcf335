// `ledger witness init|serve` (see witness.ts).
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { createFileDurable, mkdirDurable } from '../../fs/durable.js';
import { readRegularFileUpTo, realFileOps } from '../../fs/ops.js';
import { readSecretKey, writeSecretKey } from '../../keys/key-file.js';
import { createCosigner } from '../../tlog/cosignature.js';
import { SIG_ED25519, formatVkey, parseVkey, type Vkey } from '../../tlog/note.js';
import { formatWitnessConfig, parseWitnessConfig, type WitnessConfig } from '../../witness/config.js';
import { startWitness } from '../../witness/server.js';
import { CONFIG_FILE, KEY_FILE } from '../../witness/state.js';
import type { Flags } from '../flags.js';
import { emit, envValue, ledgerDir, type CliIO, type Global } from './common.js';
import { Ledger } from '../../ledger.js';
import { parseDuration } from '../../requests/fields.js';
import { ledgerPaths } from '../../store/paths.js';
import { parsePolicy } from '../../tlog/policy.js';
import { collectCosignatures } from '../../witness/collect.js';
import type { WITNESS } from './witness.js';

type F = Flags<typeof WITNESS> & Global;

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
  const config: WitnessConfig = { name: f.name, logs };
  // Checked before anything is written: a bad name leaves no folder behind.
  const text = formatWitnessConfig(config);
  const seed = new Uint8Array(randomBytes(32));
  const cosigner = createCosigner(f.name, seed, Date.now);
  mkdirDurable(realFileOps, dir, 0o700);
  // The key first, never over an existing one (writeSecretKey refuses: INPUT_EXISTS), then the
  // configuration, also never overwritten.
  writeSecretKey(join(dir, KEY_FILE), 'witness', seed);
  createFileDurable(realFileOps, dir, CONFIG_FILE, Buffer.from(text), 0o644);
  const vkey = formatVkey(cosigner);
  emit(io, f, { ok: true, state: dir, name: f.name, vkey, logs: logs.map(formatVkey) }, [vkey]);
  if (!f.json) io.stderr(`ledger: wrote ${join(dir, KEY_FILE)} (mode 0600) and ${join(dir, CONFIG_FILE)}; the line above is the witness's verifier key for policy files\n`);
  return 0;
}

async function serve(io: CliIO, dir: string, extra: Vkey[], f: F): Promise<number> {
  if (f.name !== undefined) throw new LedgerError('USAGE', '--name is for init (serve reads it from witness.conf)');
  const m = f.addr === undefined ? null : /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):([0-9]{1,5})$/.exec(f.addr);
  if (!m || Number(m[2]) > 65535) throw new LedgerError('USAGE', `--addr must be <host>:<port>, got ${JSON.stringify(f.addr ?? '')}`);
  const host = m[1].replace(/^\[|\]$/g, '');
  const confPath = join(dir, CONFIG_FILE);
  let confBytes: Buffer | null;
  try {
    confBytes = readRegularFileUpTo(confPath, 1 << 20);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no witness at ${dir} (no ${CONFIG_FILE})`, { dir }, `run \`ledger witness init --state ${dir} --name NAME\``);
    throw e;
  }
  if (confBytes === null) throw new LedgerError('INPUT_SCHEMA', `${confPath} is larger than 1 MiB`);
  const conf = parseWitnessConfig(confBytes.toString('utf8'), confPath);
  conf.logs.push(...extra);
  if (conf.logs.length === 0) throw new LedgerError('USAGE', `the witness has no logs to witness: add "log <vkey>" lines to ${confPath} or pass --log`);
  const { seed } = readSecretKey(join(dir, KEY_FILE));
  const cosigner = createCosigner(conf.name, seed, Date.now);
  const w = await startWitness({
    dir, config: conf, cosigner, host, port: Number(m[2]),
    log: (line) => io.stderr(`ledger witness: ${line.replace(/[^\x20-\x7e]/g, '?')}\n`),
  });
  emit(io, f, { ok: true, url: w.url, vkey: w.vkey, logs: [...new Set(conf.logs.map((l) => l.name))] }, [`${w.url} ${w.vkey}`]);
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
  const path = resolve(io.cwd, f.policy);
  const bytes = readRegularFileUpTo(path, 1 << 20);
  if (bytes === null) throw new LedgerError('INPUT_POLICY', `${path} is larger than 1 MiB`);
  const policy = parsePolicy(bytes.toString('utf8'), f.policy);
  const dir = ledgerDir(io, f);
  // The ledger is checked first (HEAD, the chain): nothing unverified is sent to a witness.
  Ledger.open({ dir, env: io.env }).get(0);
  const out = await collectCosignatures(realFileOps, ledgerPaths(dir), policy, timeoutMs);
  emit(io, f, { ok: true, witnesses: out }, out.map((o) => `${o.outcome.padEnd(8)} ${o.witness}${o.url ? ` ${o.url}` : ''}: ${o.detail}`));
  return 0;
}
