// Secret key files on disk (SPEC 7): written 0600 and refused when group or other may read
// them, as ssh refuses them. Trust files are read in src/keys/trust-file.ts.
import { closeSync, fstatSync, readFileSync, statSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { createFileDurable, mkdirDurable } from '../fs/durable.js';
import { openRegularFile, realFileOps, type FileOps } from '../fs/ops.js';
import { formatSecretKeyFile, parseSecretKeyFile } from './secret-key.js';

/**
 * Reads a secret key file, refusing it when its mode lets group or other read or write it, and
 * when it is not a regular file (a FIFO or device is refused at once, never waited on: exit 3).
 * No error quotes the file's text (secret-key.ts). `bytes` is the file exactly as read.
 */
export function readSecretKey(path: string): { name: string; seed: Uint8Array; bytes: Buffer } {
  let fd: number;
  try {
    fd = openRegularFile(path, true);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      // Issue 25 item 1: a new key cannot sign for this ledger until it is pinned or authorized,
      // so a lost key is restored first; a new one is made only with that step in view.
      throw new LedgerError('INPUT_KEY', `no key file at ${path}`, { path }, `restore the key file if it was moved (or pass --key / set LEDGER_KEY); a new key (\`ledger keygen --out ${path}\`) signs nothing until an admin authorizes it (\`ledger trust add\`) or the trust file pins it`);
    }
    throw ioError(e, 'read key file', path);
  }
  try {
    // fstat on the open descriptor: the mode checked is the mode of the file we read.
    const st = fstatSync(fd);
    const mode = st.mode & 0o777;
    if (mode & 0o077) {
      throw new LedgerError('OP_INSECURE_KEY', `key file ${path} has mode ${mode.toString(8).padStart(4, '0')}; others can read it, so it is refused`, { path, mode }, `run \`chmod 600 ${path}\``);
    }
    // StrictModes (issue 23), as sshd holds an authorized_keys file: the key must be this user's
    // (or root's), and its folder writable by no one else, or whoever could write either chose
    // what this user signs with.
    const me = process.geteuid?.() ?? -1;
    if (me >= 0 && st.uid !== me && st.uid !== 0) {
      throw new LedgerError('OP_INSECURE_KEY', `key file ${path} belongs to uid ${st.uid}, not to this user (uid ${me}) or root, so it is refused`, { path, owner: st.uid }, `the key owner must own it: \`chown ${me} ${path}\``);
    }
    assertKeyFolder(dirname(path), me);
    // The bytes as read are returned too: whoever scans output for the key (handoff/secret-scan.ts)
    // scans for the very file that was checked, not for a second read of the path.
    const bytes = readFileSync(fd);
    return { ...parseSecretKeyFile(bytes.toString('utf8'), path), bytes };
  } finally {
    closeSync(fd);
  }
}

/**
 * The key's folder must belong to this user or root and be writable by no one else, unless its
 * sticky bit keeps others from renaming or removing what is not theirs (Policy: a key in /tmp
 * is still this user's file). Checked through the name given (a link to the folder is the
 * caller's choice).
 */
function assertKeyFolder(dir: string, me: number): void {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch {
    return; // the key was just read from it; a folder that cannot be looked at is no other answer
  }
  const sticky = (st.mode & 0o1000) !== 0;
  if (me >= 0 && st.uid !== me && st.uid !== 0 && !sticky) {
    throw new LedgerError('OP_INSECURE_KEY', `the key's folder ${dir} belongs to uid ${st.uid}, not to this user (uid ${me}) or root: its owner could replace the key`, { path: dir, owner: st.uid }, `keep the key in a folder of your own (\`chown ${me} ${dir}\`)`);
  }
  if (st.mode & 0o022 && !sticky) {
    throw new LedgerError('OP_INSECURE_KEY', `the key's folder ${dir} is writable by others (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}): they could replace the key`, { path: dir, mode: st.mode & 0o7777 }, `run \`chmod go-w ${dir}\``);
  }
}

/**
 * Writes a new secret key file, mode 0600, durably and whole or not at all (fs/durable.ts,
 * create): never over an existing file or a symbolic link, and the directories it makes (0700)
 * are fsynced into their parents. Without that, a power cut could leave the trust file naming a
 * key whose file is empty or gone. `ops` is for tests; callers use the real disk.
 */
export function writeSecretKey(path: string, name: string, seed: Uint8Array, ops: FileOps = realFileOps): void {
  const dir = dirname(path);
  try {
    mkdirDurable(ops, dir, 0o700);
  } catch (e) {
    throw ioError(e, 'create directory for', path);
  }
  try {
    // Policy: the mode is 0600 as the umask narrows it, never widened afterwards: a stricter
    // umask gives a stricter file, which readSecretKey still accepts.
    createFileDurable(ops, dir, basename(path), Buffer.from(formatSecretKeyFile(name, seed), 'utf8'), 0o600);
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'INPUT_EXISTS') {
      throw new LedgerError('INPUT_EXISTS', `${path} already exists; a key file is never overwritten`, { path }, 'choose another --out');
    }
    throw ioError(e, 'create key file', path);
  }
}
