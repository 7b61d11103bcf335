// The one seam through which the store touches the disk. Everything that writes goes through a
// FileOps, so a test can swap in a faulty one that stops at any step, truncates a write at any
// byte, or fails with ENOSPC/EIO/EACCES (test/reliability). Reads go through it too, so a fault
// model can also lie about what is on disk after a simulated crash.
import * as fs from 'node:fs';
import { LedgerError, ioError } from '../errors.js';
import { fdatasyncOnHelper } from './sync-thread.js';

export interface FileOps {
  open(path: string, flags: string, mode?: number): number;
  /** Writes `data` at `position`; returns the bytes written (may be short). */
  write(fd: number, data: Uint8Array, position: number | null): number;
  fdatasync(fd: number): void;
  fsync(fd: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
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
  /**
   * How this FileOps overlaps a flush with other work (a simulated disk's model of it, or a
   * test's): fdatasync(fd) and `meanwhile()` in whatever order it picks, both done on return, the
   * flush's error first. realFileOps has none (its overlap is the helper thread's, reached by
   * identity); without one, the two run in sequence.
   */
  fdatasyncWhile?(fd: number, meanwhile: () => void): void;
}

export const realFileOps: FileOps = {
  open: (p, flags, mode) => fs.openSync(p, flags, mode),
  write: (fd, data, position) => fs.writeSync(fd, data, 0, data.length, position),
  fdatasync: (fd) => fs.fdatasyncSync(fd),
  fsync: (fd) => fs.fsyncSync(fd),
  close: (fd) => fs.closeSync(fd),
  rename: (a, b) => fs.renameSync(a, b),
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

/** Writes all of `data` at `position`, looping over short writes. */
export function writeAll(ops: FileOps, fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) {
    const n = ops.write(fd, data.subarray(done), position + done);
    if (n <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
    done += n;
  }
}

/**
 * The durable replace recipe (SPEC 3), written once: 1. write a temp file beside the target,
 * 2. fsync it, 3. rename it over the target, 4. fsync the directory. A reader sees the old file
 * or the new one, never a mix, and after step 4 the new one survives a power cut.
 */
export function replaceFileAtomic(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
  writeAndRename(ops, tempBeside(dir, name), `${dir}/${name}`, data, mode);
  fsyncDir(ops, dir);
}

/** The temp file the recipe writes for `dir/name` (hidden, and per process). */
export function tempBeside(dir: string, name: string): string {
  return `${dir}/.${name}.${process.pid}.tmp`;
}

/**
 * Steps 1-3 of the recipe: writes `data` to `tmp`, fsyncs it, renames it to `target`. When a
 * step before the rename fails (a full disk), the temp file is removed, best effort: a refused
 * write leaves nothing of its own behind.
 */
export function writeAndRename(ops: FileOps, tmp: string, target: string, data: Uint8Array, mode = 0o644): void {
  writeSyncedTemp(ops, tmp, data, mode);
  renameTemp(ops, tmp, target);
}

/** Steps 1-2: writes `data` to `tmp` and fsyncs it; on failure the temp file is removed. */
export function writeSyncedTemp(ops: FileOps, tmp: string, data: Uint8Array, mode = 0o644): void {
  try {
    const fd = ops.open(tmp, 'w', mode);
    try {
      writeAll(ops, fd, data, 0);
      ops.fsync(fd);
    } finally {
      ops.close(fd);
    }
  } catch (e) {
    removeTemp(ops, tmp);
    throw e;
  }
}

/** Step 3: renames `tmp` over `target`; when the rename fails, the temp file is removed. */
export function renameTemp(ops: FileOps, tmp: string, target: string): void {
  try {
    ops.rename(tmp, target);
  } catch (e) {
    removeTemp(ops, tmp);
    throw e;
  }
}

export function removeTemp(ops: FileOps, tmp: string): void {
  try {
    ops.unlink(tmp);
  } catch {
    /* never created, or the disk refuses even this: a temp file is never read */
  }
}

/**
 * fdatasync(fd) and `meanwhile()`, both finished when this returns. On the real disk the flush
 * may run on a helper thread while `meanwhile` runs (sync-thread.ts); a FileOps with its own
 * fdatasyncWhile decides itself; any other gets them in sequence, flush first. Only realFileOps
 * itself reaches the helper: a FileOps spread from it with a fault swapped in does not, so its
 * faults are never bypassed.
 */
export function fdatasyncWhile(ops: FileOps, fd: number, meanwhile: () => void): void {
  if (ops.fdatasyncWhile) return ops.fdatasyncWhile(fd, meanwhile);
  if (ops === realFileOps && fdatasyncOnHelper(fd, meanwhile)) return;
  ops.fdatasync(fd);
  meanwhile();
}

export function fsyncDir(ops: FileOps, dir: string): void {
  const fd = ops.open(dir, 'r');
  try {
    ops.fsync(fd);
  } finally {
    ops.close(fd);
  }
}
