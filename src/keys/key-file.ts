// Secret key files on disk (SPEC 7): written 0600 and refused when group or other may read
// them, as ssh refuses them. Trust files are read in src/keys/trust-file.ts.
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { formatSecretKeyFile, parseSecretKeyFile } from './secret-key.js';

/** Reads a secret key file, refusing it when its mode lets group or other read or write it. */
export function readSecretKey(path: string): { name: string; seed: Uint8Array } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LedgerError('INPUT_KEY', `no key file at ${path}; pass --key, set LEDGER_KEY, or create one with \`ledger keygen --out ${path}\``, { path });
    }
    throw ioError(e, 'read key file', path);
  }
  try {
    // fstat on the open descriptor: the mode checked is the mode of the file we read.
    const mode = fstatSync(fd).mode & 0o777;
    if (mode & 0o077) {
      throw new LedgerError('OP_INSECURE_KEY', `key file ${path} has mode ${mode.toString(8).padStart(4, '0')}; others can read it, so it is refused (run \`chmod 600 ${path}\`)`, { path, mode });
    }
    return parseSecretKeyFile(readFileSync(fd, 'utf8'), path);
  } finally {
    closeSync(fd);
  }
}

/** Writes a new secret key file with mode 0600; never overwrites an existing file. */
export function writeSecretKey(path: string, name: string, seed: Uint8Array): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (e) {
    throw ioError(e, 'create directory for', path);
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new LedgerError('INPUT_EXISTS', `${path} already exists; a key file is never overwritten (choose another --out)`, { path });
    }
    throw ioError(e, 'create key file', path);
  }
  try {
    chmodSync(path, 0o600); // the umask may have narrowed it further; never widened
    writeSync(fd, formatSecretKeyFile(name, seed));
  } finally {
    closeSync(fd);
  }
}

