// `ledger prove RECORD` (SPEC 13): a C2SP tlog-proof of one record: its seq as the index, its
// inclusion proof in the tree of the checkpoint beside HEAD, that checkpoint with whatever
// cosignatures it carries, and the record's line as `extra` (a verifier needs the leaf; tlog-proof
// leaves computing it to the application). O(log n) stored hashes read from `.ledger/tree`.
import { join } from 'node:path';
import { LedgerError, RUN_AUDIT } from '../errors.js';
import type { Head } from '../record.js';
import type { FileOps } from '../fs/ops.js';
import { ledgerOrigin, parseCheckpoint } from '../tlog/checkpoint.js';
import { hashEqual, leafHash, toBase64 } from '../tlog/hash.js';
import { SIG_ED25519, formatVkey, openNote, parseNote } from '../tlog/note.js';
import { fromBase64url } from '../canonical.js';
import { openToRead } from '../fs/lines.js';
import { formatProof } from '../tlog/proof.js';
import { proveInclusion } from '../tlog/tree.js';
import { rootFromInclusion } from '../tlog/verify.js';
import { CHECKPOINT_FILE, logNoteVerifier, withTree } from './checkpoint.js';
import type { LedgerPaths } from './paths.js';
import type { RecordAt } from './read.js';

/**
 * The proof of `at` (a published record of the ledger whose verified HEAD is `head`; `line` its
 * bytes without the newline). Fails closed: the proof is checked against the signed checkpoint's
 * root before it is returned.
 */
export function proveRecord(ops: FileOps, paths: LedgerPaths, head: Head, at: RecordAt, line: Uint8Array): string {
  const origin = ledgerOrigin(head.genesis);
  let noteText: string;
  try {
    noteText = ops.readFile(join(paths.dir, CHECKPOINT_FILE)).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no checkpoint beside HEAD in ${paths.dir}`, { dir: paths.dir }, 'the next append signs one (a ledger from before checkpoints has none)');
    throw e;
  }
  const note = parseNote(noteText);
  const v = logNoteVerifier(origin, head.sig.key);
  if (!v || openNote(note, [v]).verified.length === 0) {
    throw new LedgerError('OP_CORRUPT', 'the checkpoint beside HEAD is not signed by HEAD\'s key', {}, RUN_AUDIT);
  }
  const cp = parseCheckpoint(note.text);
  // A checkpoint past `head` is one an append wrote since `head` was read: still this ledger's.
  if (cp.origin !== origin) throw new LedgerError('OP_CORRUPT', 'the checkpoint beside HEAD is not this ledger\'s', {}, RUN_AUDIT);
  if (at.seq >= cp.size) {
    throw new LedgerError('INPUT_NOT_FOUND', `record ${at.seq} is past the checkpoint beside HEAD (size ${cp.size})`, { seq: at.seq, size: cp.size }, 'the next append signs a checkpoint that covers it');
  }
  const proof = withTree(ops, paths, cp.size, cp.root, head, (r) => proveInclusion(cp.size, at.seq, r))!;
  const root = rootFromInclusion(at.seq, cp.size, leafHash(line), proof);
  if (root === null || !hashEqual(root, cp.root)) throw new LedgerError('OP_CORRUPT', `the record at seq ${at.seq} is not in the tree the checkpoint signs`, { seq: at.seq }, RUN_AUDIT);
  return formatProof({ extra: line, index: at.seq, proof, checkpointNote: noteText });
}

/** The checkpoint beside HEAD, verified under HEAD's key (note null when there is none), and the log's vkey. */
export function readCheckpointBeside(ops: FileOps, paths: LedgerPaths, head: Head): { origin: string; vkey: string; note: string | null; size: number | null; root: string | null } {
  const origin = ledgerOrigin(head.genesis);
  const vkey = formatVkey({ name: origin, type: SIG_ED25519, publicKey: fromBase64url(head.sig.key, 32)! });
  let text: string;
  try {
    text = ops.readFile(join(paths.dir, CHECKPOINT_FILE)).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { origin, vkey, note: null, size: null, root: null };
    throw e;
  }
  // Shown only once it verifies under HEAD's key: nothing unverified is given out as the ledger's.
  const note = parseNote(text);
  const v = logNoteVerifier(origin, head.sig.key);
  if (!v || openNote(note, [v]).verified.length === 0) throw new LedgerError('OP_CORRUPT', 'the checkpoint beside HEAD is not signed by HEAD\'s key', {}, RUN_AUDIT);
  const cp = parseCheckpoint(note.text);
  return { origin, vkey, note: text, size: cp.size, root: toBase64(cp.root) };
}

/** The bytes of the record line at `offset` (without its newline), read back from records.jsonl. */
export function recordLineAt(ops: FileOps, paths: LedgerPaths, offset: number): Buffer {
  const fd = openToRead(ops, paths.records);
  try {
    const out: Buffer[] = [];
    const buf = Buffer.alloc(65536);
    for (let pos = offset; ; ) {
      const n = ops.read(fd, buf, pos);
      if (n <= 0) throw new LedgerError('OP_CORRUPT', `${paths.records} ends inside the line at byte ${offset}`, {}, RUN_AUDIT);
      const nl = buf.subarray(0, n).indexOf(0x0a);
      if (nl >= 0) {
        out.push(Buffer.from(buf.subarray(0, nl)));
        return Buffer.concat(out);
      }
      out.push(Buffer.from(buf.subarray(0, n)));
      pos += n;
    }
  } finally {
    ops.close(fd);
  }
}
