// The ledger's tree and checkpoint (SPEC 13), kept beside HEAD: `.ledger/tree`, the RFC 6962 tree's
// stored hashes (src/tlog/tree.ts: 32 bytes each, in Go sumdb's order), and `.ledger/checkpoint`,
// the C2SP checkpoint of HEAD's tree size signed by HEAD's key.
//
// An append (append.ts step 6) reads the right edge it merges with from `tree`, O(log n) hashes,
// and signs the next checkpoint; after HEAD (step 9) it appends the new stored hashes and replaces
// the checkpoint. Both files are derivable from the records and HEAD's key, so they are written
// without fsync (fs/durable.ts replaceFileUnsynced, O_APPEND): a crash costs a rebuild,
// never a record.
//
// Policy (hostile .ledger/): `tree` is believed only when the root it gives at HEAD's size is the
// root this user's writer computed through the chain it checked (chain-memo.ts, on the very
// records file) or else the root of the checkpoint HEAD's key signed for that size; otherwise it
// is rebuilt from the records, which the chain check has bound to HEAD. A checkpoint is never
// written for more than HEAD covers: it is signed with the same tree size as the HEAD beside it.
//
// Policy (where the checkpoint goes in the append, issue 27): it is renamed into place only after
// HEAD's directory fsync, never before and never in the same sync: renaming it before HEAD's
// directory fsync (one sync for both) would leave only a filesystem that keeps two renames in
// order to keep a crash from leaving a checkpoint that claims more than HEAD. It is replaced by a
// rename over the old one, never unlinked first nor written in place: readers that take no lock
// (audit, prove, gate under a policy) must always find a whole checkpoint. Measured on ext4, most
// of that rename's cost (about 0.1-0.3 ms of a 3 ms append) is freeing the old file's blocks; a
// hard link that kept the old file through the rename, freed off the append's path, was tried and
// refused: the append then returned with the old file still named in .ledger/ and a descriptor
// still open in it (a copy of the folder, or an unmount, made just after, saw them). Measured
// again (2026-12-06, this machine's ext4, mounted with `discard`, the machine loaded): a rename
// over a file whose blocks are allocated took 3.5 ms, an unlink of one 3.6 ms, a rename over an
// empty file 0.035 ms. The old checkpoint's blocks are always allocated by then: ext4 allocates a
// new file's delayed blocks when it renames it over another (auto_da_alloc, the default), so each
// append's rename frees the blocks the previous one allocated. What would avoid it (writing the
// checkpoint in place, so no block is freed) gives up both guarantees above (a lock-free reader
// could read a torn note; a crash could leave one), so it is not done: issue 27's 1.1x is missed
// on such a disk by this rename, and met where freeing is cheap (docs/speed.md).
import { join } from 'node:path';
import { fromBase64url } from '../canonical.js';
import type { Head } from '../record.js';
import { assertReplaceable, replaceFileUnsynced } from '../fs/durable.js';
import { openToRead, linesForward } from '../fs/lines.js';
import type { FileOps } from '../fs/ops.js';
import type { Signer } from '../sign.js';
import { formatCheckpoint, ledgerOrigin, parseCheckpoint } from '../tlog/checkpoint.js';
import { HASH_SIZE, hashEqual, leafHash } from '../tlog/hash.js';
import { SIG_ED25519, ed25519NoteVerifier, keyIdOf, openNote, parseNote, signNote, type NoteSigner } from '../tlog/note.js';
import { RightEdge, rightEdge, storedHashCount, treeHash, type HashReader } from '../tlog/tree.js';
import type { LedgerPaths } from './paths.js';

export const TREE_FILE = 'tree';
export const CHECKPOINT_FILE = 'checkpoint';

/** HEAD's key as the log's note signer: the key name is the origin (tlog-policy "Defining a log"). */
export function logNoteSigner(origin: string, signer: Signer): NoteSigner {
  const publicKey = fromBase64url(signer.publicKey, 32)!;
  return { name: origin, type: SIG_ED25519, publicKey, keyId: keyIdOf(origin, SIG_ED25519, publicKey), sign: (text) => signer.sign(Buffer.from(text, 'utf8')) };
}

/** The log's verifier for a base64url Ed25519 key (a HEAD's `sig.key`, a trust-file key). */
export function logNoteVerifier(origin: string, key: string) {
  const publicKey = fromBase64url(key, 32);
  if (publicKey === null) return null;
  return ed25519NoteVerifier({ name: origin, type: SIG_ED25519, publicKey, keyId: keyIdOf(origin, SIG_ED25519, publicKey) });
}

const NONE = new Uint8Array(0);

/**
 * Stored hashes read from an open `tree` file, plus hashes not yet written after `base`
 * (`pending`: 32 bytes each, one after another, as they go into the file).
 */
export function treeReader(ops: FileOps, fd: number | null, base: number, pending: Uint8Array = NONE): HashReader {
  return {
    readHashes: (indexes) => indexes.map((i) => {
      if (i >= base) {
        const at = (i - base) * HASH_SIZE;
        if (at + HASH_SIZE > pending.length) throw new RangeError(`stored hash ${i} is past the tree`);
        return pending.subarray(at, at + HASH_SIZE);
      }
      const buf = new Uint8Array(HASH_SIZE);
      if (fd === null || ops.read(fd, buf, i * HASH_SIZE) !== HASH_SIZE) throw new RangeError(`stored hash ${i} is not in the tree file`);
      return buf;
    }),
  };
}

/** A publication's checkpoint that names its HEAD's whole tree and carries HEAD's key's signature. */
export interface PublishedCheckpoint {
  /** The note's exact bytes (the log's signature and any cosignatures): what the local copy keeps. */
  bytes: Buffer;
  size: number;
  root: Uint8Array;
}

/**
 * The tree after some lines are appended: its size and root, and the stored hashes to append
 * after `at` (in hashes), 32 bytes each, one after another, as they go into `tree`.
 */
export interface ExtendedTree { size: number; root: Uint8Array; at: number; hashes: Uint8Array }

/**
 * Stored hashes collected in one growing buffer. Speed (issue 26): a batch of 200,000 records
 * stores about 400,000 hashes, and one object each kept them all alive for the collector.
 */
class StoredHashes {
  private buf = Buffer.allocUnsafe(HASH_SIZE * 64);
  private count = 0;
  readonly push = (h: Uint8Array): void => {
    if ((this.count + 1) * HASH_SIZE > this.buf.length) {
      const grown = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(grown, 0, 0, this.count * HASH_SIZE);
      this.buf = grown;
    }
    this.buf.set(h, this.count++ * HASH_SIZE);
  };
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.count * HASH_SIZE);
  }
}

/**
 * The tree of the ledger whose HEAD is `base` (null: none yet) after `lines` (whole record lines
 * with their newlines): O(log n) stored hashes read from `tree` when it is the one base's signed
 * checkpoint names, else rebuilt from the records (bound to HEAD by the chain check).
 */
export function extendTree(ops: FileOps, paths: LedgerPaths, base: Head | null, lines: Buffer, knownRoot: Uint8Array | null = null): ExtendedTree {
  const tree = growTree(ops, paths, base, knownRoot);
  for (let start = 0; start < lines.length; ) {
    const end = lines.indexOf(0x0a, start);
    if (end < 0) throw new RangeError('record lines end with a newline');
    tree.add(lines.subarray(start, end));
    start = end + 1;
  }
  return tree.done();
}

/** A tree being extended: each new record's line (without its newline) added in order, then done. */
export interface GrowingTree {
  add(line: Uint8Array): void;
  done(): ExtendedTree;
}

/**
 * extendTree a line at a time, for a writer that has each line complete at a different moment
 * (a batch: as each signature is made, append.ts placeDrafts). The edge at `base` is read (or the
 * records folded) now (`knownRoot`: see believedEdge).
 */
export function growTree(ops: FileOps, paths: LedgerPaths, base: Head | null, knownRoot: Uint8Array | null = null): GrowingTree {
  const size = base ? base.seq + 1 : 0;
  const out = new StoredHashes();
  let at = storedHashCount(size);
  let edge = base ? believedEdge(ops, paths, base, ledgerOrigin(base.genesis), knownRoot) : new RightEdge();
  if (edge === null) {
    edge = foldRecords(ops, paths, base!, size, out.push);
    at = 0;
  }
  const e = edge;
  return {
    add: (line) => e.append(leafHash(line), out.push),
    done: () => ({ size: e.size, root: e.root(), at, hashes: out.bytes() }),
  };
}

/** The next checkpoint, its root, and the stored hashes to append after `at` (in hashes) for it. */
export interface NextCheckpoint { note: string | null; root?: Uint8Array; at: number; hashes: Uint8Array }

/**
 * Step 6's share: the checkpoint of tree `t` (extendTree's, or a growTree's done()), signed by
 * `signer`, the key that signs the new HEAD `next`; with the stored hashes to append for it.
 */
export function signCheckpoint(t: ExtendedTree, next: Head, signer: Signer): NextCheckpoint {
  const origin = ledgerOrigin(next.genesis);
  const note = signNote(formatCheckpoint({ origin, size: t.size, root: t.root }), [logNoteSigner(origin, signer)]);
  return { note, root: t.root, at: t.at, hashes: t.hashes };
}

/**
 * The right edge at base's size, read from `tree` (O(log n) hashes) when the root it gives is
 * `knownRoot` (the one this user's writer computed through base: chain-memo.ts), or else the one
 * base's signed checkpoint names; or null.
 */
function believedEdge(ops: FileOps, paths: LedgerPaths, base: Head, origin: string, knownRoot: Uint8Array | null): RightEdge | null {
  const size = base.seq + 1;
  let root = knownRoot;
  if (root === null) {
    try {
      const note = parseNote(ops.readFile(join(paths.dir, CHECKPOINT_FILE)));
      const v = logNoteVerifier(origin, base.sig.key);
      if (!v || openNote(note, [v]).verified.length === 0) return null;
      const cp = parseCheckpoint(note.text);
      if (cp.origin !== origin || cp.size !== size) return null;
      root = cp.root;
    } catch {
      return null;
    }
  }
  let fd: number;
  try {
    fd = openToRead(ops, join(paths.dir, TREE_FILE));
  } catch {
    return null;
  }
  try {
    const st = ops.fstat?.(fd);
    const whole = st ? st.size === BigInt(storedHashCount(size) * HASH_SIZE) : ops.size(join(paths.dir, TREE_FILE)) === storedHashCount(size) * HASH_SIZE;
    if (!whole) return null;
    const edge = RightEdge.of(size, rightEdge(size, treeReader(ops, fd, Infinity)));
    return hashEqual(edge.root(), root) ? edge : null;
  } catch {
    return null; // too short: rebuilt
  } finally {
    ops.close(fd);
  }
}

/**
 * The right edge of the first `size` records of records.jsonl (through `head`, which the chain
 * check has bound them to), hashed from the lines; `stored` is handed every stored hash.
 */
function foldRecords(ops: FileOps, paths: LedgerPaths, head: Head, size: number, stored: (h: Uint8Array) => void): RightEdge {
  const edge = new RightEdge();
  const fd = openToRead(ops, paths.records);
  try {
    for (const line of linesForward(ops, fd, paths.records, 0, head.size)) {
      if (edge.size === size) break;
      edge.append(leafHash(line.bytes), stored);
    }
  } finally {
    ops.close(fd);
  }
  return edge;
}

/** The stored hashes of the first `size` records of records.jsonl (through `head`), computed from the lines, one after another. */
export function storedHashesOfRecords(ops: FileOps, paths: LedgerPaths, head: Head, size: number): Uint8Array {
  const out = new StoredHashes();
  foldRecords(ops, paths, head, size, out.push);
  return out.bytes();
}

/**
 * Runs `use` over the stored hashes of the first `size` records: `.ledger/tree` read by pread
 * when it gives `root` at that size (O(log n) reads), else, with `head`, rebuilt from the records;
 * without `head`, null when the tree file is not believed.
 */
export function withTree<T>(ops: FileOps, paths: LedgerPaths, size: number, root: Uint8Array, head: Head | null, use: (r: HashReader) => T): T | null {
  let fd: number | null = null;
  try {
    fd = openToRead(ops, join(paths.dir, TREE_FILE));
    const r = treeReader(ops, fd, Infinity);
    if (hashEqual(treeHash(size, r), root)) return use(r);
  } catch {
    /* not believed */
  } finally {
    if (fd !== null) ops.close(fd);
  }
  if (head === null) return null;
  return use(treeReader(ops, null, 0, storedHashesOfRecords(ops, paths, head, size)));
}

/**
 * Before anything of an append is written: `tree` and `checkpoint` are regular files or absent.
 * Policy (issue 23's rule for every file below .ledger): a planted link, FIFO, device or folder by
 * either name fails the append closed (OP_SYMLINK / OP_NOT_REGULAR, exit 3) and nothing is
 * written; it is never followed, replaced or removed, nor silently left stale.
 */
export function assertCheckpointWritable(ops: FileOps, paths: LedgerPaths): void {
  assertReplaceable(ops, join(paths.dir, TREE_FILE));
  assertReplaceable(ops, join(paths.dir, CHECKPOINT_FILE));
}

/**
 * After HEAD (step 9): the new stored hashes at their place in `tree`, then the checkpoint, both
 * through the fs layer (no link followed, StrictModes). Policy: a failure here cannot fail the
 * append (HEAD is published already): it leaves a tree or checkpoint the next append does not
 * believe, and rebuilds; a link planted in between is refused by that append's check above.
 */
export function writeCheckpoint(ops: FileOps, paths: LedgerPaths, next: NextCheckpoint): void {
  try {
    const bytes = next.hashes;
    const path = join(paths.dir, TREE_FILE);
    if (next.at === 0) replaceFileUnsynced(ops, paths.dir, TREE_FILE, bytes, 0o644);
    else {
      // O_APPEND | O_NOFOLLOW: never through a planted link; and only onto a file of exactly the
      // stored hashes the new ones follow (else the next append does not believe it, and rebuilds).
      const fd = ops.open(path, 'a');
      try {
        const st = ops.fstat?.(fd);
        if (st && st.kind === 'file' && st.size === BigInt(next.at * HASH_SIZE)) {
          for (let done = 0; done < bytes.length; ) done += ops.write(fd, bytes.subarray(done), null);
        }
      } finally {
        ops.close(fd);
      }
    }
  } catch {
    /* see the Policy above */
  }
  if (next.note === null) return;
  try {
    replaceFileUnsynced(ops, paths.dir, CHECKPOINT_FILE, Buffer.from(next.note, 'utf8'), 0o644);
  } catch {
    /* see the Policy above */
  }
}
