// Trust files on disk (SPEC 7), read strictly through src/keys/trust.ts.
import { basename, dirname } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { mkdirDurable, replaceFileDurable } from '../fs/durable.js';
import { readRegularFile, realFileOps, type FileOps } from '../fs/ops.js';
import { formatTrust, parseTrust, type Trust } from './trust.js';

/** Reads a trust file: a regular file (a FIFO or device is refused at once, exit 3), strictly parsed. */
export function readTrust(path: string): Trust {
  let text: string;
  try {
    text = readRegularFile(path).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LedgerError('INPUT_TRUST', `no trust file at ${path}`, { path }, 'pass --trust or set LEDGER_TRUST');
    }
    throw ioError(e, 'read trust file', path);
  }
  return parseTrust(text, path);
}

/**
 * Writes a trust file (it holds public keys only) with the durable replace recipe, which refuses
 * a trust file that is a symbolic link (OP_SYMLINK, exit 3): never followed, never replaced.
 */
export function writeTrust(path: string, trust: Trust, ops: FileOps = realFileOps): void {
  try {
    mkdirDurable(ops, dirname(path), 0o755);
    replaceFileDurable(ops, dirname(path), basename(path), Buffer.from(formatTrust(trust)));
  } catch (e) {
    throw ioError(e, 'write trust file', path);
  }
}
