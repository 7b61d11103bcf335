// The files around witnesses that the CLI reads and writes, behind the public API (src/index.ts):
// a policy or proof file (bounded, regular files only), a witness's folder made by `init`, and a
// witness served from its folder.
import { join } from 'node:path';
import { LedgerError } from '../errors.js';
import { createFileDurable, mkdirDurable } from '../fs/durable.js';
import { readRegularFileUpTo, realFileOps } from '../fs/ops.js';
import { readSecretKey, writeSecretKey } from '../keys/key-file.js';
import { createCosigner } from '../tlog/cosignature.js';
import { formatVkey, type Vkey } from '../tlog/note.js';
import { parsePolicy, type Policy } from '../tlog/policy.js';
import { MAX_PROOF_BYTES, parseProof, type TlogProof } from '../tlog/proof.js';
import { formatWitnessConfig, parseWitnessConfig } from './config.js';
import type { RunningWitness } from './server.js';
import { CONFIG_FILE, KEY_FILE } from './state.js';

function readBounded(path: string, max: number, code: 'INPUT_PROOF' | 'INPUT_POLICY' | 'INPUT_SCHEMA'): Buffer {
  let b: Buffer | null;
  try {
    b = readRegularFileUpTo(path, max);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no file at ${path}`, { path });
    throw e;
  }
  if (b === null) throw new LedgerError(code, `${path} is larger than ${max} bytes`, { path });
  return b;
}

/** A tlog-policy file (at most 1 MiB). */
export function readPolicy(path: string, shown = path): Policy {
  return parsePolicy(readBounded(path, 1 << 20, 'INPUT_POLICY').toString('utf8'), shown);
}

/** A tlog-proof file (at most 1 MiB). */
export function readProof(path: string): TlogProof {
  return parseProof(readBounded(path, MAX_PROOF_BYTES, 'INPUT_PROOF'));
}

/** `ledger witness init`: a new key (0600, never overwritten) and witness.conf; returns the witness's vkey. */
export function initWitness(dir: string, name: string, logs: readonly Vkey[], seed: Uint8Array): string {
  // Checked before anything is written: a bad name leaves no folder behind.
  const text = formatWitnessConfig({ name, logs: [...logs] });
  const vkey = formatVkey(createCosigner(name, seed, Date.now));
  mkdirDurable(realFileOps, dir, 0o700);
  writeSecretKey(join(dir, KEY_FILE), 'witness', seed);
  createFileDurable(realFileOps, dir, CONFIG_FILE, Buffer.from(text), 0o644);
  return vkey;
}

/** `ledger witness serve`: the witness of the folder `dir`, with `extra` logs beside witness.conf's. */
export async function serveWitnessDir(dir: string, host: string, port: number, extra: readonly Vkey[], log: (line: string) => void): Promise<RunningWitness & { logs: string[] }> {
  const confPath = join(dir, CONFIG_FILE);
  let bytes: Buffer;
  try {
    bytes = readBounded(confPath, 1 << 20, 'INPUT_SCHEMA');
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'INPUT_NOT_FOUND') throw new LedgerError('INPUT_NOT_FOUND', `no witness at ${dir} (no ${CONFIG_FILE})`, { dir }, `run \`ledger witness init --state ${dir} --name NAME\``);
    throw e;
  }
  const conf = parseWitnessConfig(bytes.toString('utf8'), confPath);
  conf.logs.push(...extra);
  if (conf.logs.length === 0) throw new LedgerError('USAGE', `the witness has no logs to witness: add "log <vkey>" lines to ${confPath} or pass --log`);
  const { seed } = readSecretKey(join(dir, KEY_FILE));
  // Loaded here: the HTTP server (node:http, net) costs every other command's start nothing.
  const { startWitness } = await import('./server.js');
  const w = await startWitness({ dir, config: conf, cosigner: createCosigner(conf.name, seed, Date.now), host, port, log });
  return { ...w, logs: [...new Set(conf.logs.map((l) => l.name))] };
}
