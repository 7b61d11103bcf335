// The content-addressed blob store for test output: `<ledger dir>/blobs/sha256/<64 hex>`.
// A record keeps only a bounded excerpt and the digest (SPEC 4: a line is at most 1 MiB); the
// whole output lives here, named by its digest, so it can be checked against the record.
//
// Policy: a blob is written durably *before* the record that names it (the records-before-pointer
// rule, one level down), so a published record never names a missing blob. A refused or crashed
// command can leave a blob that no record names; it is harmless (its name is its content) and is
// never trusted: every read re-verifies the digest.
//
// Every write goes through fs/durable.ts. `ops` is for tests; it must hand out real descriptors,
// because a test command's child process writes its output through one.
import { nodeCrypto } from '../node-crypto.js';
import { join } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { DIGEST_RE, digestOf, sha256Hex } from '../canonical.js';
import { adoptFileDurable, fsyncDir, fsyncFile, mkdirDurable, replaceFileDurable } from '../fs/durable.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import { hashOpenFile } from '../causal/evidence.js';

export interface StoredBlob { digest: string; bytes: number; path: string }

export function blobDir(ledgerDir: string): string {
  return join(ledgerDir, 'blobs', 'sha256');
}

export function blobPath(ledgerDir: string, digest: string): string {
  if (!DIGEST_RE.test(digest)) throw new LedgerError('USAGE', `expected a digest ("sha256:" + 64 lowercase hex), got "${digest}"`);
  return join(blobDir(ledgerDir), digest.slice(7));
}

export interface BlobScratch { path: string; fd: number }

/**
 * A new, empty scratch file in the store's scratch folder, for output captured before its digest
 * is known (step 1 of fs/durable.ts: a random name, O_CREAT | O_EXCL | O_NOFOLLOW, so a file or
 * link planted by that name is refused, never written through). Hand it to adoptBlobFile, or
 * remove it with discardBlobScratch. `mode`: tests-cmd.ts makes it 0600 until the output is known
 * to carry no secret.
 */
export function openBlobScratch(ledgerDir: string, ops: FileOps = realFileOps, mode = 0o644): BlobScratch {
  const dir = join(ledgerDir, 'blobs', 'tmp');
  const path = join(dir, `${process.pid}-${nodeCrypto().randomBytes(6).toString('hex')}`);
  try {
    ops.mkdir(dir, 0o755); // scratch only: its entry need not survive a crash
    return { path, fd: ops.open(path, 'wx', mode) };
  } catch (e) {
    throw ioError(e, 'create', path);
  }
}

/** Removes a scratch file that will not be adopted (a leftover one is harmless, never read). */
export function discardBlobScratch(scratch: string, ops: FileOps = realFileOps): void {
  try {
    ops.unlink(scratch);
  } catch {
    /* already gone, or the disk refuses: it is never read */
  }
}

/** Stores bytes under their digest (fs/durable.ts: temp file, fsync, rename, fsync of the directory). */
export function putBlob(ledgerDir: string, data: Uint8Array, ops: FileOps = realFileOps): StoredBlob {
  const hex = sha256Hex(data);
  const dir = blobDir(ledgerDir);
  try {
    mkdirDurable(ops, dir, 0o755);
    if (!keepStored(ops, dir, hex)) replaceFileDurable(ops, dir, hex, data);
  } catch (e) {
    throw ioError(e, 'store a blob in', dir);
  }
  return { digest: `sha256:${hex}`, bytes: data.length, path: join(dir, hex) };
}

/**
 * Moves a finished scratch file (from openBlobScratch, its descriptor closed) into the store
 * under its digest, hashing it as it reads: fsync, rename, fsync of the directory. On failure the
 * scratch file is removed.
 */
export function adoptBlobFile(ledgerDir: string, scratch: string, ops: FileOps = realFileOps): StoredBlob {
  const dir = blobDir(ledgerDir);
  try {
    const fd = ops.open(scratch, 'r');
    let hex: string;
    let bytes: number;
    try {
      ({ hex, bytes } = hashOpenFile(fd));
    } finally {
      ops.close(fd);
    }
    mkdirDurable(ops, dir, 0o755);
    if (keepStored(ops, dir, hex)) discardBlobScratch(scratch, ops);
    else adoptFileDurable(ops, scratch, dir, hex);
    return { digest: `sha256:${hex}`, bytes, path: join(dir, hex) };
  } catch (e) {
    discardBlobScratch(scratch, ops);
    throw ioError(e, 'store a blob in', dir);
  }
}

/**
 * Whether a blob by this name is there already. Policy: one that is there is kept, not rewritten
 * (its name is its content, and every read re-verifies it), after its bytes and its entry are
 * made durable: an earlier writer may have died between its rename and its directory fsync, and
 * a record is about to name it.
 */
function keepStored(ops: FileOps, dir: string, hex: string): boolean {
  const path = join(dir, hex);
  if (!ops.exists(path)) return false;
  fsyncFile(ops, path);
  fsyncDir(ops, dir);
  return true;
}

/** A blob's bytes, re-verified against its name ("expected X, computed Y"). */
export function readBlob(ledgerDir: string, digest: string): Buffer {
  const path = blobPath(ledgerDir, digest);
  let data: Buffer;
  try {
    data = realFileOps.readFile(path);
  } catch (e) {
    throw ioError(e, 'read blob', path);
  }
  const got = digestOf(data);
  if (got !== digest) throw new LedgerError('OP_CORRUPT', `blob ${path}: expected ${digest}, computed ${got}; the blob store was altered`, { path, expected: digest, computed: got });
  return data;
}
