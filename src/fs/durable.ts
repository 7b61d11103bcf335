// The durable write recipe, written once (SPEC 3). Every file that must survive a crash, HEAD,
// the views, floors, the trust file, index segments, blobs and the secret key file, is written
// here, over the FileOps seam, so a fault model can stop it at any step:
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
// A reader sees the old file or the new one, never a mix. When a step before 4 fails, the temp
// file is removed (best effort): a refused write leaves nothing of its own behind.
import { randomBytes } from 'node:crypto';
import { LedgerError } from '../errors.js';
import type { FileOps } from './ops.js';

/** Writes all of `data` at `position`, looping over short writes. */
export function writeAll(ops: FileOps, fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) {
    const n = ops.write(fd, data.subarray(done), position + done);
    if (n <= 0) throw Object.assign(new Error('write returned 0 bytes'), { code: 'EIO' });
    done += n;
  }
}

/** Replaces `dir/name` with `data` durably (steps 1-5, rename). */
export function replaceFileDurable(ops: FileOps, dir: string, name: string, data: Uint8Array, mode = 0o644): void {
  const tmp = writeTemp(ops, dir, name, data, mode);
  try {
    ops.rename(tmp, `${dir}/${name}`);
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  fsyncDir(ops, dir);
}

/**
 * Creates `dir/name` with `data` durably, never overwriting (steps 1-5, link): a file that is
 * there already, or a symbolic link by that name, is refused with INPUT_EXISTS. The new file is
 * whole or absent, never a torn key file.
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

/** Step 5 alone: makes the entries of `dir` durable (after a rename, link, mkdir or unlink). */
export function fsyncDir(ops: FileOps, dir: string): void {
  const fd = ops.open(dir, 'r');
  try {
    ops.fsync(fd);
  } finally {
    ops.close(fd);
  }
}

// A temp name never seen before: a pid alone repeats across containers and after a pid reuse,
// and a predictable name is one an attacker can plant a link at ahead of us.
const tempName = (name: string) => `.${name}.${randomBytes(6).toString('hex')}.tmp`;

/** Steps 1-3: the bytes in a new, fsynced temp file beside the target; returns its path. */
function writeTemp(ops: FileOps, dir: string, name: string, data: Uint8Array, mode: number): string {
  const tmp = `${dir}/${tempName(name)}`;
  const fd = ops.open(tmp, 'wx', mode); // throws before anything exists: nothing to clean up
  try {
    try {
      writeAll(ops, fd, data, 0);
      ops.fsync(fd);
    } finally {
      ops.close(fd);
    }
  } catch (e) {
    removeQuietly(ops, tmp);
    throw e;
  }
  return tmp;
}

function removeQuietly(ops: FileOps, path: string): void {
  try {
    ops.unlink(path);
  } catch {
    /* never created, or the disk refuses even this: a temp file is never read */
  }
}
