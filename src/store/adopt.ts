// The local copy of a ledger joined to a remote (SPEC 11) takes what the remote published:
// records already verified from a trusted point (remote/fetch.ts) go at HEAD's size and HEAD is
// replaced by the remote's exact bytes. It is the append protocol's steps 7 and 9 (append.ts):
// bytes past the local HEAD to quarantine/, then the one lines-then-HEAD write, so it is
// crash-safe at each step as an append is, and records.jsonl and HEAD stay byte-identical to
// the ref's tree: `ledger audit` reads the same ledger every clone holds. Called under the
// writer lock only.
import { LedgerError } from '../errors.js';
import type { Head } from '../record.js';
import { readFully } from '../fs/lines.js';
import { fsError, type FileOps, type FileStat } from '../fs/ops.js';
import { writeLinesThenHead } from './append.js';
import { rememberChain } from './chain-memo.js';
import { parseHead } from './head.js';
import type { LedgerPaths } from './paths.js';
import { quarantineUnpublished } from './recover.js';
import { join } from 'node:path';
import { hashEqual } from '../tlog/hash.js';
import { storedHashCount, treeHash } from '../tlog/tree.js';
import { CHECKPOINT_FILE, assertCheckpointWritable, extendTree, withTree, writeCheckpoint, type PublishedCheckpoint } from './checkpoint.js';

/** Whether records.jsonl's bytes past `at` are a prefix of `lines` (none past it included). */
function pastHeadIsAdopted(ops: FileOps, paths: LedgerPaths, at: number, lines: Buffer): boolean {
  let size: number;
  try {
    size = ops.size(paths.records);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
  const past = size - at;
  if (past <= 0) return past === 0;
  if (past > lines.length) return false;
  const fd = ops.open(paths.records, 'r');
  try {
    const buf = Buffer.alloc(past);
    return readFully(ops, fd, buf, at) === past && buf.equals(lines.subarray(0, past));
  } finally {
    ops.close(fd);
  }
}

/**
 * Appends `lines` (whole record lines, verified) at the local HEAD's size and publishes
 * `headBytes` as HEAD. `local`: the local HEAD and its exact bytes, or null when there is none
 * (a join: records.jsonl is then written from byte 0).
 */
export function adoptPublished(ops: FileOps, paths: LedgerPaths, local: { head: Head; bytes: Buffer } | null, lines: Buffer, headBytes: Buffer, checkpoint: PublishedCheckpoint | null = null): Head {
  const head = parseHead(headBytes, 'the remote HEAD');
  const at = local ? local.head.size : 0;
  // Fail closed: a HEAD that would not end exactly where these lines do would publish other
  // bytes than the ones verified (the callers' slicing is what this checks).
  if (at + lines.length !== head.size) {
    throw new LedgerError('OP_REMOTE', `refusing to copy the remote's records: they end at byte ${at + lines.length}, the remote HEAD at ${head.size}; nothing was changed`, { at, lines: lines.length, size: head.size });
  }
  // SPEC 13: the tree through the new records (O(log n) from the kept right edge), and the
  // published checkpoint's root checked against it before anything is written.
  let tree: ReturnType<typeof extendTree>;
  try {
    assertCheckpointWritable(ops, paths);
    tree = extendTree(ops, paths, local ? local.head : null, lines);
  } catch (e) {
    // A read that fails here (EIO on the records a rebuild reads) is a coded error; nothing written.
    throw fsError(e, 'read the tree of', paths.dir);
  }
  assertCheckpointRoot(checkpoint, tree.root, head);
  let st: FileStat | null;
  try {
    // 7: bytes past the local HEAD were never published here: aside first, as an append does.
    // Policy: unless they are exactly the records being taken (a writer killed after its push,
    // before its own write; a HEAD put back to an older one): those are published, on the
    // remote, and are never moved aside (issue 23 finding 6); they are written over with
    // themselves.
    if (!pastHeadIsAdopted(ops, paths, at, lines)) quarantineUnpublished(ops, paths, local ? local.head : null);
    // 9: the append's own write.
    st = writeLinesThenHead(ops, paths, { at, lines, headBefore: local ? local.bytes : null, head: { head, bytes: headBytes } }, 'copy of the remote\'s records');
  } catch (e) {
    throw fsError(e, 'copy the remote\'s records to', paths.records);
  }
  // The adopted records were checked from a trusted point (link, id, signature, pin): the
  // verified-chain memo may cover them, so the next writer does not re-read the whole chain.
  rememberChain(paths, head.genesis, st, { offset: head.size, seq: head.seq, id: head.tail });
  writeCheckpoint(ops, paths, { note: checkpoint ? checkpoint.bytes.toString('utf8') : null, at: tree.at, hashes: tree.hashes });
  return head;
}

/** A published checkpoint whose root is not the records' is refused: REMOTE_LINKAGE (exit 11). */
function assertCheckpointRoot(checkpoint: PublishedCheckpoint | null, root: Uint8Array, head: Head): void {
  if (checkpoint && !hashEqual(checkpoint.root, root)) {
    throw new LedgerError('REMOTE_LINKAGE', `the remote's checkpoint of ${checkpoint.size} records names another root than its records (seq ${head.seq}); nothing was changed`, { checkpoint: true, seq: head.seq }, 'run `ledger doctor` and review the remote ref before anyone writes');
  }
}

/**
 * The local copy already holds the remote's records (nothing new): it takes the remote's
 * checkpoint of them when that one is not the one it keeps (a writer published its witnesses'
 * cosignatures on it), root checked. Called under the writer lock only.
 */
export function adoptCheckpoint(ops: FileOps, paths: LedgerPaths, head: Head, checkpoint: PublishedCheckpoint | null): void {
  if (checkpoint === null) return;
  try {
    if (ops.readFile(join(paths.dir, CHECKPOINT_FILE)).equals(checkpoint.bytes)) return;
  } catch {
    /* none kept, or unreadable: taken below */
  }
  let root: Uint8Array | null;
  try {
    assertCheckpointWritable(ops, paths);
    root = withTree(ops, paths, checkpoint.size, checkpoint.root, head, (r) => treeHash(checkpoint.size, r));
  } catch (e) {
    throw fsError(e, 'read the tree of', paths.dir);
  }
  assertCheckpointRoot(checkpoint, root ?? new Uint8Array(0), head);
  writeCheckpoint(ops, paths, { note: checkpoint.bytes.toString('utf8'), at: storedHashCount(checkpoint.size), hashes: new Uint8Array(0) });
}
