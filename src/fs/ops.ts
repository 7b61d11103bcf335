// The one seam through which the ledger's writers touch the disk. Everything that writes goes through a
// FileOps, so a test can swap in a faulty one that stops at any step, truncates a write at any
// byte, or fails with ENOSPC/EIO/EACCES (test/reliability). Reads go through it too, so a fault
// model can also lie about what is on disk after a simulated crash.
import { closeSync, constants, existsSync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, rmdirSync, unlinkSync, writeSync, type BigIntStats, type Stats } from 'node:fs';
import { LedgerError, ioError } from '../errors.js';
import { checkOpened, confine, linkRefused, strictProblem, through, type Confined } from './confine.js';

/**
 * How a file is opened: 'r' read, 'r+' read and write, 'w' create or truncate, and 'wx' a new
 * file only: O_CREAT | O_EXCL | O_NOFOLLOW, so a name that exists, a symbolic link (even one
 * that dangles) included, is refused with EEXIST instead of being followed. On the real disk
 * 'r' and 'r+' are O_NONBLOCK too: opening a FIFO planted by that name returns at once instead
 * of waiting for a writer (issue 13 finding 12), and the reader's fstat then refuses it. 'a'
 * appends to a file that exists (O_APPEND, never created, never through a link, never blocking):
 * the per-user state logs of store/state-log.ts.
 * On the real disk every open is O_NOFOLLOW (issue 23 finding 1: writers followed links), and a
 * path below one of the ledger's folders is resolved by confine.ts: no link at any folder on the
 * way, the file opened the one lstat saw, and a write held to StrictModes. 'w' truncates only
 * after those checks (never a file it must not write).
 */
export type OpenFlags = 'r' | 'r+' | 'w' | 'wx' | 'a';

/** What an fstat or lstat says a name is. */
export type FileKind = 'file' | 'dir' | 'link' | 'other';

/** An open file's identity and state, as a bigint fstat gives it (the verified-chain memo). */
export interface FileStat {
  kind: FileKind;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** The permission bits (0o7777). */
  mode?: number;
}

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
  // The three below are optional: a FileOps without them (the simulated disk of
  // test/reliability, which holds only regular files and directories, never a link or a FIFO)
  // is not asked, and the verified-chain memo is then never believed (every check is a full one).
  /**
   * Opens a file that must be a regular file for reading: not through a symbolic link
   * (O_NOFOLLOW), without blocking (O_NONBLOCK), and fstat-checked; anything else is refused
   * with OP_SYMLINK or OP_NOT_REGULAR before a byte is read.
   */
  openRegular?(path: string): number;
  /** fstat of an open file, with nanosecond times and 64-bit identity. */
  fstat?(fd: number): FileStat;
  /** What `path` itself is (a link is not followed); null when nothing is there. */
  lstat?(path: string): FileKind | null;
}

const { O_WRONLY, O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const NEW_FILE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
const { O_APPEND } = constants;
const FLAGS: Record<OpenFlags, number> = {
  r: O_RDONLY | O_NONBLOCK | O_NOFOLLOW,
  'r+': O_RDWR | O_NONBLOCK | O_NOFOLLOW,
  w: O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK,
  wx: NEW_FILE,
  a: O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK,
};
const REGULAR = O_RDONLY | O_NONBLOCK | O_NOFOLLOW;

/** An O_NOFOLLOW open's refusal of a link: ELOOP (Linux), EMLINK (FreeBSD), EFTYPE (macOS). */
const isLinkErrno = (e: unknown) => ['ELOOP', 'EMLINK', 'EFTYPE'].includes((e as NodeJS.ErrnoException).code ?? '');

/**
 * Opens `path` with `flags` through confine.ts, checked (step 3); the descriptor is the caller's.
 * A file replaced between the lstat and the open (another writer renaming a new HEAD into place)
 * is opened again, up to three times; then refused.
 */
function openConfined(path: string, flags: number, write: boolean, mode?: number): { fd: number; st: Stats | null } {
  for (let attempt = 1; ; attempt++) {
    try {
      return openConfinedOnce(path, flags, write, mode);
    } catch (e) {
      if (attempt >= 3 || !(e instanceof LedgerError) || e.data.replaced !== true) throw e;
    }
  }
}

function openConfinedOnce(path: string, flags: number, write: boolean, mode?: number): { fd: number; st: Stats | null } {
  return through(path, write, (c: Confined) => {
    let fd: number;
    try {
      fd = openSync(c.sys, flags, mode);
    } catch (e) {
      if (isLinkErrno(e)) throw linkRefused(path);
      throw e;
    }
    if (c.sys === path) return { fd, st: null };
    try {
      return { fd, st: checkOpened(fd, c, path, write) };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  });
}

/** mkdir -p, one folder at a time through confine.ts (a recursive mkdir would follow a link on the way). */
function mkdirConfined(path: string, mode?: number): void {
  const missing: string[] = [];
  for (let d = path; ; ) {
    let there: boolean;
    try {
      const c = confine(d, true);
      try {
        there = c.seen !== null || (c.sys === d && existsSync(d));
        if (c.seen?.isSymbolicLink()) throw linkRefused(d);
      } finally {
        c.release();
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      there = false; // its root is not there yet: made on the way
    }
    if (there) break;
    missing.push(d);
    const up = d.slice(0, d.lastIndexOf('/')) || '/';
    if (up === d) break;
    d = up;
  }
  for (const d of missing.reverse()) {
    through(d, true, (c) => {
      if (c.sys === d) mkdirSync(d, { mode, recursive: true });
      else {
        try {
          mkdirSync(c.sys, { mode });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !lstatSync(c.sys).isDirectory()) throw e;
        }
      }
    });
  }
}

function kindOf(st: Stats | BigIntStats): FileKind {
  return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
}

/** The refusal of a name that is not a regular file where one must be (exit 3). */
export function notRegular(path: string, kind: FileKind): LedgerError {
  if (kind === 'link') return new LedgerError('OP_SYMLINK', `${path} is a symbolic link; it is never followed or replaced`, { path }, 'replace the link with the file itself, or pass the path it points to');
  const what = kind === 'dir' ? 'a directory' : 'not a regular file (a FIFO, socket or device)';
  return new LedgerError('OP_NOT_REGULAR', `${path} is ${what}; only regular files are read or replaced`, { path, kind });
}

/**
 * Opens a regular file for reading (FileOps.openRegular on the real disk): never through a link
 * (`follow`: false, the ledger's own files) and never blocking. `follow`: true for a file the
 * caller names (a key, a trust file, a floor), which a harness may well keep behind a link; it
 * must still end at a regular file.
 */
export function openRegularFile(path: string, follow = false): number {
  return openRegularSized(path, follow).fd;
}

/** openRegularFile, with the size its fstat saw. */
function openRegularSized(path: string, follow: boolean): { fd: number; size: number; st: Stats } {
  let fd: number;
  let st: Stats | null;
  try {
    if (follow) ({ fd, st } = { fd: openSync(path, O_RDONLY | O_NONBLOCK), st: null });
    else ({ fd, st } = openConfined(path, REGULAR, false));
  } catch (e) {
    if (isLinkErrno(e) || (e as LedgerError).code === 'OP_SYMLINK') throw notRegular((e as LedgerError).data?.path as string ?? path, 'link');
    throw e;
  }
  try {
    st ??= fstatSync(fd);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const kind = kindOf(st);
  if (kind !== 'file') {
    closeSync(fd);
    throw notRegular(path, kind);
  }
  return { fd, size: st.size, st };
}

/**
 * The bytes of a regular file open at `fd` whose fstat said `size`, as readFileSync(fd) reads
 * them (up to that size), without the second fstat it would make. Speed: HEAD, the lock and the
 * writer's mark are read so on every append.
 */
function readSized(fd: number, size: number): Buffer {
  if (size === 0) return readFileSync(fd); // a file whose size says nothing (procfs): to EOF
  const buf = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const r = readSync(fd, buf, n, size - n, n);
    if (r === 0) break;
    n += r;
  }
  return n === size ? buf : buf.subarray(0, n);
}

/**
 * The bytes of the regular file at `path`, never through a link and never blocking, or null when
 * its fstat says it holds more than `max` bytes (nothing is read then: a planted file must not
 * cost memory). Throws as openRegularFile does: OP_SYMLINK, OP_NOT_REGULAR, or the open's error
 * (ENOENT for a file that is not there).
 */
export function readRegularFileUpTo(path: string, max: number): Buffer | null {
  const { fd, size } = openRegularSized(path, false);
  try {
    return size > max ? null : readSized(fd, size);
  } finally {
    closeSync(fd);
  }
}

/**
 * A file of this user's own, at most `max` bytes, not followed if a link: null when it is absent,
 * larger, or not this user's to trust (another owner, or writable by its group or others: what
 * such a file says, someone else may have written). For a per-user memo that lets work be skipped
 * (store/head-memo.ts): refused means the work is done for real.
 */
export function readOwnFileUpTo(path: string, max: number): Buffer | null {
  let opened: { fd: number; size: number; st: Stats };
  try {
    opened = openRegularSized(path, false);
  } catch {
    return null;
  }
  const { fd, size, st } = opened;
  try {
    return size > max || strictProblem(st, path) !== null ? null : readSized(fd, size);
  } finally {
    closeSync(fd);
  }
}

/** The whole of a regular file the caller names (see openRegularFile, `follow`). */
export function readRegularFile(path: string): Buffer {
  const { fd, size } = openRegularSized(path, true);
  try {
    return readSized(fd, size);
  } finally {
    closeSync(fd);
  }
}

const WRITES: Record<OpenFlags, boolean> = { r: false, 'r+': true, w: true, wx: true, a: true };

export const realFileOps: FileOps = {
  open: (p, flags, mode) => {
    const { fd } = openConfined(p, FLAGS[flags], WRITES[flags], mode);
    if (flags === 'w') {
      // Truncated only now, once the checks of confine.ts passed.
      try {
        ftruncateSync(fd, 0);
      } catch (e) {
        closeSync(fd);
        throw e;
      }
    }
    return fd;
  },
  write: (fd, data, position) => writeSync(fd, data, 0, data.length, position),
  fdatasync: (fd) => fdatasyncSync(fd),
  fsync: (fd) => fsyncSync(fd),
  close: (fd) => closeSync(fd),
  rename: (a, b) => through(a, true, (ca) => through(b, true, (cb) => renameSync(ca.sys, cb.sys))),
  link: (a, b) => through(a, true, (ca) => through(b, true, (cb) => linkSync(ca.sys, cb.sys))),
  ftruncate: (fd, n) => ftruncateSync(fd, n),
  unlink: (p) => through(p, true, (c) => unlinkSync(c.sys)),
  mkdir: (p, mode) => mkdirConfined(p, mode),
  // Every file the store reads whole (HEAD, the lock, a quarantine file) must be a regular file.
  readFile: (p) => {
    const { fd, size } = openRegularSized(p, false);
    try {
      return readSized(fd, size);
    } finally {
      closeSync(fd);
    }
  },
  read: (fd, buf, position) => readSync(fd, buf, 0, buf.length, position),
  // A name is what lstat says (a link is not followed; a dangling one exists, and is refused
  // wherever it is used).
  size: (p) => through(p, false, (c) => {
    const st = lstatSync(c.sys);
    if (st.isSymbolicLink()) throw linkRefused(p);
    return st.size;
  }),
  exists: (p) => {
    try {
      return through(p, false, (c) => (c.sys === p ? existsSync(p) || lstatSync(p, { throwIfNoEntry: false }) !== undefined : c.seen !== null));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  },
  mkdirExclusive: (p) => through(p, true, (c) => mkdirSync(c.sys)),
  rmdir: (p) => through(p, true, (c) => rmdirSync(c.sys)),
  mtimeMs: (p) => through(p, false, (c) => lstatSync(c.sys).mtimeMs),
  openRegular: (p) => openRegularFile(p),
  fstat: (fd) => {
    const st = fstatSync(fd, { bigint: true });
    return { kind: kindOf(st), dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, mode: Number(st.mode) & 0o7777 };
  },
  lstat: (p) => {
    try {
      return through(p, false, (c) => kindOf(lstatSync(c.sys)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  },
};

/** The names in folder `path`, read through confine.ts (no link followed below a root). */
export function readdirBelow(path: string): string[] {
  return through(path, false, (c) => readdirSync(c.sys));
}

/** Removes `path` and all below it (rm -r: links are removed, never followed), through confine.ts. */
export function removeTreeBelow(path: string): void {
  through(path, true, (c) => rmSync(c.sys, { recursive: true, force: true }));
}

/**
 * A file-system error (one with an errno code) as a coded OP_IO/OP_PERMISSION LedgerError, so no
 * raw errno reaches the CLI as an "internal error". Anything else (a bug) passes through as is.
 */
export function fsError(e: unknown, action: string, path: string): unknown {
  if (e instanceof LedgerError) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? ioError(e, action, path) : e;
}

