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
// A reader sees the old file or the new one, never a mix. When a step up to 4 fails, the temp
// file is removed (best effort): a refused write leaves nothing of its own behind. A directory
// made on the way to a file (mkdirDurable) has its own entry made durable the same way (step 5
// on its parent), or a power cut could take the directory, and the file in it, back.
//
// Every function here takes the FileOps first; only the outermost caller picks realFileOps.
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { LedgerError } from '../errors.js';
import type { FileOps } from './ops.js';

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
 * umask narrows it. A symbolic link at the target is replaced itself, never written through.
 */
export function replaceFileDurable(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
  const tmp = writeTemp(ops, dir, name, data, mode);
  renameInto(ops, tmp, dir, name);
}

/**
 * Creates `dir/name` with `data` durably, never overwriting (steps 1-5, link): a file that is
 * there already, or a symbolic link by that name (even one that dangles), is refused with
 * INPUT_EXISTS. The new file is whole or absent, never a torn key file.
 */
export function createFileDurable(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
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
const tempName = (name: string) => `.${name}.${randomBytes(6).toString('hex')}.tmp`;

/** Steps 1-3: the bytes in a new, fsynced temp file beside the target; returns its path. */
function writeTemp(ops: FileOps, dir: string, name: string, data: Uint8Array, mode: number): string {
  const tmp = `${dir}/${tempName(name)}`;
  // Policy: a name that exists (EEXIST: planted, or a 2^-48 collision) fails the write; it is
  // never retried under another name, so a planted link is reported rather than raced.
  const fd = ops.open(tmp, 'wx', mode); // throws before anything exists: nothing to clean up
  try {
    writeAll(ops, fd, data, 0);
    ops.fsync(fd);
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
function renameInto(ops: FileOps, tmp: string, dir: string, name: string): void {
  try {
    ops.rename(tmp, `${dir}/${name}`);
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  fsyncDir(ops, dir);
}

function closeQuietly(ops: FileOps, fd: number): void {
  try {
    ops.close(fd);
  } catch {
    /* close(2) frees the descriptor even when it reports an error */
  }
}

/** Removes a file, best effort: it may be gone already, or the disk may refuse even this. */
export function removeQuietly(ops: FileOps, path: string): void {
  try {
    ops.unlink(path);
  } catch {
    /* never created, or the disk refuses even this: a temp file is never read */
  }
}
