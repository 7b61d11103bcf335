// The durable write recipe, written once (SPEC 3). Every file that must survive a crash, HEAD,
// the views, floors, the trust file, index segments, blobs, quarantine files, the secret key
// file and the launcher's code cache, is written here, over the FileOps seam, so a fault model
// can stop it at any step:
//
//   1. create a temp file beside the target, with a random name, O_CREAT | O_EXCL | O_NOFOLLOW
//      and the file's mode: a planted file or symbolic link by that name is refused, never
//      followed or truncated
//   2. write all of the bytes (short writes are continued)
//   3. fsync the temp file: its bytes are durable before any name points at them
//   4. rename it over the target (replace), or link it to the target, which fails if the target
//      exists (create, never overwrite), then remove the temp name
//   5. fsync the directory: the new name survives a power cut
//
// A replace target that is a symbolic link (or a directory, FIFO or device) is refused before
// step 1 (OP_SYMLINK, OP_NOT_REGULAR): never followed, never replaced.
// A reader sees the old file or the new one, never a mix. When a step up to 4 fails, the temp
// file is removed (best effort): a refused write leaves nothing of its own behind. A directory
// made on the way to a file (mkdirDurable) has its own entry made durable the same way (step 5
// on its parent), or a power cut could take the directory, and the file in it, back.
//
// Every function here takes the FileOps first; only the outermost caller picks realFileOps.
import { dirname, join } from 'node:path';
import { LedgerError } from '../errors.js';
import { nodeCrypto } from '../node-crypto.js';
import { confineFolder } from './confine.js';
import { notRegular, readdirBelow, type FileOps } from './ops.js';

/** Step 2: writes all of `data` at `position`, looping over short writes. */
export function writeAll(ops: FileOps, fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) {
    const n = ops.write(fd, data.subarray(done), position + done);
    if (n <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
    done += n;
  }
}

/**
 * Replaces `dir/name` with `data` durably (steps 1-5, rename). `mode` is the new file's, as the
 * umask narrows it.
 *
 * Policy: a target that is a symbolic link (or a directory, FIFO or device) is refused before
 * anything is written, with OP_SYMLINK or OP_NOT_REGULAR (exit 3): never followed, and never
 * replaced either, since a view, floor or trust file that someone made a link is not ours to
 * turn back into a file without a word (issue 13 finding 4). A link planted between this check
 * and the rename is replaced by the rename itself (rename(2) never follows it): no write ever
 * goes through a link.
 */
export function replaceFileDurable(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
  confineFolder(dir);
  assertReplaceable(ops, join(dir, name));
  const tmp = writeTemp(ops, dir, name, data, mode, true);
  renameInto(ops, tmp, dir, name, true);
}

/**
 * Replaces several files of one directory durably, each as replaceFileDurable does, with one
 * fsync of the directory after the last rename (step 5 once): for the two views, which a verb
 * rewrites together. Every target is checked (assertReplaceable) and every temp file written and
 * fsynced before the first rename, so a refused or failed write replaces none of them. A crash
 * between two renames leaves the first new and the second old, as two calls would.
 */
export function replaceFilesDurable(ops: FileOps, dir: string, files: readonly { name: string; data: Uint8Array; mode?: number }[]): void {
  confineFolder(dir);
  for (const f of files) assertReplaceable(ops, join(dir, f.name));
  const temps: string[] = [];
  try {
    for (const f of files) temps.push(writeTemp(ops, dir, f.name, f.data, f.mode ?? 0o644, true));
  } catch (e) {
    for (const t of temps) removeQuietly(ops, t);
    throw e;
  }
  for (let i = 0; i < files.length; i++) {
    try {
      renameInto(ops, temps[i], dir, files[i].name, false);
    } catch (e) {
      for (const t of temps.slice(i + 1)) removeQuietly(ops, t); // renameInto removed temps[i]
      throw e;
    }
  }
  fsyncDir(ops, dir);
}

/**
 * Steps 1, 2 and 4 without the fsyncs: for a file that need not survive a power cut (the
 * per-user state of store/state-dir.ts: a lost one falls back to an older one or to none, which
 * only costs a full check). A reader still sees the old file or the new one, never a mix.
 */
export function replaceFileUnsynced(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o600): void {
  assertReplaceable(ops, join(dir, name));
  const tmp = writeTemp(ops, dir, name, data, mode, false);
  renameInto(ops, tmp, dir, name, false);
}

/**
 * Step 2 alone, at the end of a regular file that exists, with no fsync and no rename: for the
 * per-user state logs (store/state-log.ts), whose reader takes the newest entry whose digest
 * matches, so a torn append (a crash, ENOSPC, a concurrent appender) costs only that entry.
 * Returns false, having written nothing, when there is no such file, when it holds `limit` bytes
 * or more, or when `ops` cannot fstat: the caller then replaces it whole (replaceFileUnsynced).
 * A symbolic link or anything but a regular file is refused (OP_SYMLINK, OP_NOT_REGULAR), never
 * followed or written through.
 */
export function appendFileUnsynced(ops: FileOps, path: string, data: Uint8Array, limit: number): boolean {
  let fd: number;
  try {
    fd = ops.open(path, 'a');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    // O_NOFOLLOW on a link: ELOOP (Linux), EMLINK (FreeBSD), EFTYPE (macOS).
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE') throw notRegular(path, 'link');
    throw e;
  }
  try {
    const st = ops.fstat?.(fd) ?? null;
    if (st === null) return false;
    if (st.kind !== 'file') throw notRegular(path, st.kind);
    if (st.size >= BigInt(limit)) return false;
    // O_APPEND: each write(2) lands at the end as it is then; a short write is continued there.
    for (let done = 0; done < data.length; ) {
      const n = ops.write(fd, data.subarray(done), null);
      if (n <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
      done += n;
    }
    return true;
  } finally {
    closeQuietly(ops, fd);
  }
}

/**
 * A replace target must be a regular file or absent (see replaceFileDurable's Policy); throws
 * OP_SYMLINK or OP_NOT_REGULAR. Exported so that a verb checks its targets before it writes
 * anything else (the views before a checkpoint, the trust file before init makes a key).
 */
export function assertReplaceable(ops: FileOps, target: string): void {
  const kind = ops.lstat?.(target) ?? null;
  if (kind !== null && kind !== 'file') throw notRegular(target, kind);
}

/**
 * The target whose temp file `name` is, when it is a name this recipe makes (`.NAME.<12 hex>.tmp`)
 * or one the pid-named recipe of old made (`.NAME.<pid>.tmp`); null for any other name.
 */
export function durableTempTarget(name: string): string | null {
  const m = /^\.(.+)\.([0-9a-f]{12}|\d{1,10})\.tmp$/.exec(name);
  return m ? m[1] : null;
}

/**
 * Removes the temp files of this recipe for `targets` that a killed writer left in `dir`
 * (SIGKILL between steps 1 and 4). The caller must hold the lock under which every such temp
 * file is written, so none of them can be a write in progress. Only names of the recipe's
 * pattern that are regular files are removed: a link or anything else by such a name is left
 * alone (unlink would not follow it, but it is not ours). Best effort: returns how many went.
 * `seen`, if given, is handed the names `dir` held (a caller that cleans a subfolder next skips
 * one that is not there).
 */
export function removeStaleTemps(ops: FileOps, dir: string, isTarget: (name: string) => boolean, seen?: (names: readonly string[]) => void): number {
  let names: string[];
  try {
    names = readdirBelow(dir);
  } catch {
    return 0; // a directory we cannot list (or one on a simulated disk): nothing to clean
  }
  seen?.(names);
  let removed = 0;
  for (const name of names) {
    const target = durableTempTarget(name);
    if (target === null || !isTarget(target)) continue;
    const path = join(dir, name);
    try {
      if ((ops.lstat?.(path) ?? null) !== 'file') continue;
      ops.unlink(path);
      removed++;
    } catch {
      /* gone already, or the disk refuses: the next writer tries again */
    }
  }
  return removed;
}

/**
 * Creates `dir/name` with `data` durably, never overwriting (steps 1-5, link): a file that is
 * there already, or a symbolic link by that name (even one that dangles), is refused with
 * INPUT_EXISTS. The new file is whole or absent, never a torn key file.
 */
export function createFileDurable(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
  confineFolder(dir);
  const tmp = writeTemp(ops, dir, name, data, mode);
  const target = `${dir}/${name}`;
  try {
    ops.link(tmp, target);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new LedgerError('INPUT_EXISTS', `${target} already exists; it is never overwritten`, { path: target });
    }
    throw e;
  } finally {
    removeQuietly(ops, tmp);
  }
  fsyncDir(ops, dir);
}

/**
 * Steps 3-5 for a file that something else filled (a test command's output, written through a
 * descriptor the ledger handed it): fsync it, rename it to `dir/name`, fsync `dir`. Steps 1-2
 * are the caller's: it must have created `tmp` itself with ops.open(tmp, 'wx', mode). On a
 * failure before the rename, `tmp` is removed.
 */
export function adoptFileDurable(ops: FileOps, tmp: string, dir: string, name: string): void {
  try {
    fsyncFile(ops, tmp);
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  renameInto(ops, tmp, dir, name);
}

/**
 * Step 3 alone, by path: makes a file's bytes durable. For a file an earlier, crashed writer may
 * have left between its rename and its directory fsync, before it is relied on.
 */
export function fsyncFile(ops: FileOps, path: string): void {
  const fd = ops.open(path, 'r');
  try {
    ops.fsync(fd);
  } finally {
    ops.close(fd);
  }
}

/**
 * Step 5 alone: makes the entries of `dir` durable (after a rename, link, mkdir or unlink). A
 * directory is opened read-only and fsynced exactly as a file is.
 */
export const fsyncDir: (ops: FileOps, dir: string) => void = fsyncFile;

/**
 * Makes `dir` and any missing parents (with `mode`), then step 5 on the parent of each directory
 * it made, and on `dir`'s parent even when `dir` was there: an earlier writer may have died
 * between its mkdir and that fsync, and what is written next into `dir` must not vanish with it.
 */
export function mkdirDurable(ops: FileOps, dir: string, mode: number): void {
  const made: string[] = [];
  for (let d = dir; !ops.exists(d) && dirname(d) !== d; d = dirname(d)) made.push(d);
  if (made.length > 0) ops.mkdir(dir, mode);
  // Outermost first, ending with `dir`: each entry is durable before the one inside it.
  for (const d of made.length > 0 ? made.reverse() : [dir]) fsyncDir(ops, dirname(d));
}

// A temp name never seen before: a pid alone repeats across containers and after a pid reuse,
// and a predictable name is one an attacker can plant a link at ahead of us.
// Speed (the durable append): drawn 6 bytes at a time from a pool that is refilled once per 64.
let pool = Buffer.alloc(0);
let poolAt = 0;
function tempName(name: string): string {
  if (poolAt + 6 > pool.length) {
    pool = nodeCrypto().randomBytes(6 * 64);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + 6);
  poolAt += 6;
  return `.${name}.${hex}.tmp`;
}

/** Steps 1-3: the bytes in a new, fsynced temp file beside the target; returns its path. */
function writeTemp(ops: FileOps, dir: string, name: string, data: Uint8Array, mode: number, sync = true): string {
  const tmp = `${dir}/${tempName(name)}`;
  // Policy: a name that exists (EEXIST: planted, or a 2^-48 collision) fails the write; it is
  // never retried under another name, so a planted link is reported rather than raced.
  const fd = ops.open(tmp, 'wx', mode); // throws before anything exists: nothing to clean up
  try {
    writeAll(ops, fd, data, 0);
    if (sync) ops.fsync(fd);
  } catch (e) {
    closeQuietly(ops, fd); // the write's own error is the one to report
    removeQuietly(ops, tmp);
    throw e;
  }
  try {
    ops.close(fd);
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  return tmp;
}

/** Step 4 (rename) and 5: `tmp` becomes `dir/name`; on a failed rename, `tmp` is removed. */
function renameInto(ops: FileOps, tmp: string, dir: string, name: string, sync = true): void {
  try {
    ops.rename(tmp, `${dir}/${name}`);
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  if (sync) fsyncDir(ops, dir);
}

function closeQuietly(ops: FileOps, fd: number): void {
  try {
    ops.close(fd);
  } catch {
    /* close(2) frees the descriptor even when it reports an error */
  }
}

/**
 * Removes a file, best effort: it may be gone already, or the disk may refuse even this. A
 * removal refused once (EIO, EACCES) is tried once more; what is left after that is a temp file
 * that is never read, and the next writer under the same lock removes it (removeStaleTemps).
 */
export function removeQuietly(ops: FileOps, path: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      ops.unlink(path);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || typeof code !== 'string') return; // gone, or a crash: nothing more to do
    }
  }
}
