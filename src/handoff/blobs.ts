// The content-addressed blob store for test output: `<ledger dir>/blobs/sha256/<64 hex>`.
// A record keeps only a bounded excerpt and the digest (SPEC 4: a line is at most 1 MiB); the
// whole output lives here, named by its digest, so it can be checked against the record.
//
// Policy: a blob is written durably *before* the record that names it (the records-before-pointer
// rule, one level down), so a published record never names a missing blob. A refused or crashed
// command can leave a blob that no record names; it is harmless (its name is its content) and is
// never trusted: every read re-verifies the digest.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { DIGEST_RE, digestOf, sha256Hex } from '../canonical.js';
import { fsyncDir, replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { hashOpenFile } from '../causal/evidence.js';

export interface StoredBlob { digest: string; bytes: number; path: string }

export function blobDir(ledgerDir: string): string {
  return join(ledgerDir, 'blobs', 'sha256');
}

export function blobPath(ledgerDir: string, digest: string): string {
  if (!DIGEST_RE.test(digest)) throw new LedgerError('USAGE', `expected a digest ("sha256:" + 64 lowercase hex), got "${digest}"`);
  return join(blobDir(ledgerDir), digest.slice(7));
}

/** A fresh path in the store's scratch folder, for output captured before its digest is known. */
export function blobScratchPath(ledgerDir: string): string {
  const dir = join(ledgerDir, 'blobs', 'tmp');
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw ioError(e, 'create', dir);
  }
  return join(dir, `${process.pid}-${randomBytes(6).toString('hex')}`);
}

/** Stores bytes under their digest (temp file, fsync, rename, fsync of the directory). */
export function putBlob(ledgerDir: string, data: Uint8Array): StoredBlob {
  const hex = sha256Hex(data);
  const dir = blobDir(ledgerDir);
  const path = join(dir, hex);
  try {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(path)) replaceFileDurable(realFileOps, dir, hex, data);
  } catch (e) {
    throw ioError(e, 'store a blob in', dir);
  }
  return { digest: `sha256:${hex}`, bytes: data.length, path };
}

/** Moves a finished scratch file into the store under its digest, hashing it as it reads. */
export function adoptBlobFile(ledgerDir: string, scratch: string): StoredBlob {
  const dir = blobDir(ledgerDir);
  try {
    const fd = openSync(scratch, 'r');
    let hex: string;
    let bytes: number;
    try {
      ({ hex, bytes } = hashOpenFile(fd));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const path = join(dir, hex);
    mkdirSync(dir, { recursive: true });
    if (existsSync(path)) unlinkSync(scratch);
    else {
      renameSync(scratch, path);
      fsyncDir(realFileOps, dir);
    }
    return { digest: `sha256:${hex}`, bytes, path };
  } catch (e) {
    throw ioError(e, 'store a blob in', dir);
  }
}

/** A blob's bytes, re-verified against its name ("expected X, computed Y"). */
export function readBlob(ledgerDir: string, digest: string): Buffer {
  const path = blobPath(ledgerDir, digest);
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw ioError(e, 'read blob', path);
  }
  const got = digestOf(data);
  if (got !== digest) throw new LedgerError('OP_CORRUPT', `blob ${path}: expected ${digest}, computed ${got}; the blob store was altered`, { path, expected: digest, computed: got });
  return data;
}
