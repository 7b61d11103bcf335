// The one seam through which the ledger's writers touch the disk. Everything that writes goes through a
// FileOps, so a test can swap in a faulty one that stops at any step, truncates a write at any
// byte, or fails with ENOSPC/EIO/EACCES (test/reliability). Reads go through it too, so a fault
// model can also lie about what is on disk after a simulated crash.
import * as fs from 'node:fs';
import { LedgerError, ioError } from '../errors.js';

/**
 * How a file is opened: 'r' read, 'r+' read and write, 'w' create or truncate, and 'wx' a new
 * file only: O_CREAT | O_EXCL | O_NOFOLLOW, so a name that exists, a symbolic link (even one
 * that dangles) included, is refused with EEXIST instead of being followed.
 */
export type OpenFlags = 'r' | 'r+' | 'w' | 'wx';

export interface FileOps {
  open(path: string, flags: OpenFlags, mode?: number): number;
  /** Writes `data` at `position`; returns the bytes written (may be short). */
  write(fd: number, data: Uint8Array, position: number | null): number;
  fdatasync(fd: number): void;
  fsync(fd: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
  /** A second name for a file; EEXIST when `to` exists (never replaces it). */
  link(from: string, to: string): void;
  ftruncate(fd: number, length: number): void;
  unlink(path: string): void;
  mkdir(path: string, mode?: number): void;
  readFile(path: string): Buffer;
  read(fd: number, buf: Uint8Array, position: number): number;
  size(path: string): number;
  exists(path: string): boolean;
  /** Creates one directory; throws EEXIST when it is already there (the lock's takeover guard). */
  mkdirExclusive(path: string): void;
  rmdir(path: string): void;
  /** Last modification time, ms since the epoch (the age of a lock its holder never wrote). */
  mtimeMs(path: string): number;
}

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
const NEW_FILE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

export const realFileOps: FileOps = {
  open: (p, flags, mode) => fs.openSync(p, flags === 'wx' ? NEW_FILE : flags, mode),
  write: (fd, data, position) => fs.writeSync(fd, data, 0, data.length, position),
  fdatasync: (fd) => fs.fdatasyncSync(fd),
  fsync: (fd) => fs.fsyncSync(fd),
  close: (fd) => fs.closeSync(fd),
  rename: (a, b) => fs.renameSync(a, b),
  link: (a, b) => fs.linkSync(a, b),
  ftruncate: (fd, n) => fs.ftruncateSync(fd, n),
  unlink: (p) => fs.unlinkSync(p),
  mkdir: (p, mode) => {
    fs.mkdirSync(p, { mode, recursive: true });
  },
  readFile: (p) => fs.readFileSync(p),
  read: (fd, buf, position) => fs.readSync(fd, buf, 0, buf.length, position),
  size: (p) => fs.statSync(p).size,
  exists: (p) => fs.existsSync(p),
  mkdirExclusive: (p) => fs.mkdirSync(p),
  rmdir: (p) => fs.rmdirSync(p),
  mtimeMs: (p) => fs.statSync(p).mtimeMs,
};

/**
 * A file-system error (one with an errno code) as a coded OP_IO/OP_PERMISSION LedgerError, so no
 * raw errno reaches the CLI as an "internal error". Anything else (a bug) passes through as is.
 */
export function fsError(e: unknown, action: string, path: string): unknown {
  if (e instanceof LedgerError) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? ioError(e, action, path) : e;
}

