// Trust files on disk (SPEC 7), read strictly through src/keys/trust.ts.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { formatTrust, parseTrust, type Trust } from './trust.js';

export function readTrust(path: string): Trust {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LedgerError('INPUT_TRUST', `no trust file at ${path}; pass --trust or set LEDGER_TRUST`, { path });
    }
    throw ioError(e, 'read trust file', path);
  }
  return parseTrust(text, path);
}

/** Writes a trust file (it holds public keys only) with the durable replace recipe. */
export function writeTrust(path: string, trust: Trust, replace: (dir: string, name: string, data: Uint8Array) => void): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw ioError(e, 'create directory for', path);
  }
  replace(dirname(path), path.slice(dirname(path).length + 1), Buffer.from(formatTrust(trust)));
}
