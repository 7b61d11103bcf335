// file: evidence, and every file a dir: digest reads: the bytes of one regular file.
//
// Policy (SPEC 9, "a gate that cannot decide says no, promptly"): only a regular file is read.
// The caller has lstat'ed the path already and passes what it saw; the file is then opened
// O_NOFOLLOW | O_NONBLOCK (a link swapped in since fails, a FIFO swapped in cannot block), and
// the open descriptor is fstat'ed: another inode, another kind, or a size or mtime that moves
// while it is read means the file changed while digesting, a refusal, never a wrong digest.
import { nodeCrypto } from '../../node-crypto.js';
import { readSync, type Stats } from 'node:fs';
import { badEvidence, changedWhileDigesting, errnoOf, kindOf, shown, type EvidenceReadOps } from './read-ops.js';

/** SHA-256 of everything readable from an open file, read in 1 MiB chunks, and its length. */
export function hashOpenFile(fd: number, read: (fd: number, buf: Buffer) => number = defaultRead): { hex: string; bytes: number } {
  const hash = nodeCrypto().createHash('sha256');
  const buf = Buffer.alloc(1 << 20);
  let bytes = 0;
  for (;;) {
    const n = read(fd, buf);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    bytes += n;
  }
  return { hex: hash.digest('hex'), bytes };
}

const defaultRead = (fd: number, buf: Buffer) => readSync(fd, buf, 0, buf.length, null);

// The inode alone is not enough: a file deleted and written again often gets the same number.
const unchanged = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

/**
 * The SHA-256 hex of a regular file that `seen` (its lstat) says is there. Throws INPUT_EVIDENCE:
 * not a regular file, unreadable, or changed while digesting.
 */
export function regularFileSha256(ops: EvidenceReadOps, path: Buffer, seen: Stats, source: string): string {
  if (!seen.isFile()) throw badEvidence(`evidence ${source}: ${shown(path)} is ${kindOf(seen)}, not a regular file; only regular files are read`, source);
  let fd: number;
  try {
    fd = ops.openRead(path);
  } catch (e) {
    const code = errnoOf(e);
    // Gone, or a link (ELOOP from O_NOFOLLOW) or a directory since the lstat.
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') throw changedWhileDigesting(source, `${shown(path)} was replaced`);
    throw badEvidence(`evidence ${source}: cannot open ${shown(path)} (${code ?? 'error'})`, source);
  }
  try {
    const before = ops.fstat(fd);
    if (!before.isFile() || !unchanged(before, seen)) throw changedWhileDigesting(source, `${shown(path)} was replaced`);
    let hex: string;
    let bytes: number;
    try {
      ({ hex, bytes } = hashOpenFile(fd, ops.read));
    } catch (e) {
      throw badEvidence(`evidence ${source}: cannot read ${shown(path)} (${errnoOf(e) ?? 'error'})`, source);
    }
    const after = ops.fstat(fd);
    if (bytes !== before.size || !unchanged(before, after)) throw changedWhileDigesting(source, `${shown(path)} was written to`);
    return hex;
  } finally {
    ops.close(fd);
  }
}
