// Recovery: bytes past HEAD's `size` were never published (SPEC 5). They are moved, never
// deleted, into quarantine/ before anything else is written, and published bytes are never
// touched: a records.jsonl shorter than HEAD says is refused loudly.
import { LedgerError, ioError, RUN_AUDIT } from '../errors.js';
import { sha256Hex } from '../canonical.js';
import type { Head } from '../record.js';
import { createFileDurable, fsyncDir, fsyncFile, mkdirDurable } from '../fs/durable.js';
import { readFully } from '../fs/lines.js';
import type { FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

/** The names of quarantine files: where the bytes stood and the start of their digest. */
export const QUARANTINE_NAME_RE = /^at-\d+-[0-9a-f]{16}\.bin$/;

export interface RecoverReport {
  /** Where published bytes end (HEAD's size, 0 when there is no HEAD). */
  published: number;
  /** How many unpublished bytes were found past it. */
  unpublished: number;
  /** The quarantine file they were (or, with dryRun, would be) moved to; null when none. */
  file: string | null;
  moved: boolean;
}

function fileSize(ops: FileOps, path: string): number {
  try {
    return ops.size(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw ioError(e, 'stat', path);
  }
}

/**
 * Moves bytes past `head.size` (all bytes when there is no HEAD) into quarantine/, then truncates
 * records.jsonl back to the published end. The caller holds the writer lock.
 *
 * Order: 1. copy the bytes into quarantine/<name> and fsync it, 2. fsync quarantine/, 3. truncate
 * records.jsonl and fdatasync it. A crash between steps leaves the bytes in both places (a later
 * recovery finds the same quarantine name, checks that it holds the same bytes, makes it and its
 * entry durable, and truncates); never in neither.
 */
export function quarantineUnpublished(ops: FileOps, paths: LedgerPaths, head: Head | null, dryRun = false): RecoverReport {
  const published = head ? head.size : 0;
  const size = fileSize(ops, paths.records);
  if (size < published) {
    throw new LedgerError('OP_CORRUPT', `refusing to recover: ${paths.records} has ${size} bytes but HEAD publishes ${published}; published records are missing`, {
      size,
      published,
    }, RUN_AUDIT);
  }
  const unpublished = size - published;
  if (unpublished === 0) return { published, unpublished, file: null, moved: false };

  const fd = ops.open(paths.records, 'r+');
  try {
    const bytes = Buffer.alloc(unpublished);
    const got = readFully(ops, fd, bytes, published);
    // Named by where the bytes stood and what they are, so a repeated recovery of the same
    // bytes lands on the same file instead of a second copy.
    const name = `at-${published}-${sha256Hex(bytes.subarray(0, got)).slice(0, 16)}.bin`;
    const file = `${paths.quarantine}/${name}`;
    if (dryRun) return { published, unpublished, file, moved: false };

    mkdirDurable(ops, paths.quarantine, 0o755);
    if (!ops.exists(file)) {
      // Policy: created, never replaced (SPEC 3: quarantine/ files are only added); the writer
      // lock keeps a second recovery from racing this one to the same name. Its bytes are
      // records.jsonl's, so it is never more readable than records.jsonl is (issue 23: a key
      // behind a planted link once came out 0644): its mode is records.jsonl's, at most 0644.
      const recordsMode = ops.fstat?.(fd).mode ?? 0o600;
      createFileDurable(ops, paths.quarantine, name, bytes.subarray(0, got), recordsMode & 0o644);
    } else {
      // An earlier recovery left this file, perhaps one that failed or died right after its
      // rename, before the directory fsync. It must hold exactly these bytes, and they and its
      // entry must be durable, before a single byte is cut from records.jsonl.
      if (!ops.readFile(file).equals(bytes.subarray(0, got))) {
        throw new LedgerError('OP_CORRUPT', `refusing to recover: ${file} exists but holds other bytes than the ${got} past HEAD`, { file }, 'move it aside and run `ledger recover` again');
      }
      fsyncFile(ops, file);
      fsyncDir(ops, paths.quarantine);
    }
    ops.ftruncate(fd, published);
    ops.fdatasync(fd);
    return { published, unpublished, file, moved: true };
  } finally {
    ops.close(fd);
  }
}
