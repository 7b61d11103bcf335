// Reading published records: only the bytes HEAD covers are ever shown (SPEC 5: bytes past
// `size` are not part of the ledger), and only once the whole chain through HEAD checks
// (assertPublishedChain: links and ids, chain.ts, with the verified-chain memo of chain-memo.ts),
// so a record edited in place is refused by every read verb (show, log, resume, render, pending)
// and by every writer, not shown or built on (issue 13 finding 9).
import { LedgerError, RUN_AUDIT } from '../errors.js';
import type { Head, LedgerRecord } from '../record.js';
import { readRecordLine } from '../record-line.js';
import { lineEndingAt, linesForward, openToRead, type StoredLine } from '../fs/lines.js';
import { realFileOps, type FileOps, type FileStat } from '../fs/ops.js';
import { assertChain } from './chain-memo.js';
import type { LedgerPaths } from './paths.js';

export interface RecordAt {
  seq: number;
  /** Byte offset where the record's line starts. */
  offset: number;
  id: string;
  record: LedgerRecord;
}

/**
 * The last record line, the one ending at `head.size`, read backwards (fs/lines.ts). `fd`:
 * records.jsonl open already (else it is opened here).
 */
export function readTailLine(ops: FileOps, paths: LedgerPaths, head: Head, fd?: number, linked = false): RecordAt {
  const own = fd === undefined ? openToRead(ops, paths.records) : fd;
  let line: StoredLine;
  try {
    line = lineEndingAt(ops, own, paths.records, head.size);
  } finally {
    if (fd === undefined) ops.close(own);
  }
  const { bytes, offset } = line;
  // `linked` (isCheckedFile): the chain check ended at this line with HEAD's tail as its id.
  const { record, id } = readRecordLine(bytes, paths.records, offset, linked ? { needId: false } : {});
  return { seq: record.seq, offset, id: linked ? head.tail : id, record };
}

/**
 * Speed (issue 22: a read verb with nothing new to check loads no node:crypto): whether the file
 * open as `fd` is the very file whose chain through HEAD was checked (`checked`: what
 * assertPublishedChain returned, the file's identity as checked; chain-memo.ts says how exact
 * that is). Then each line's id is the next line's prev_tail_hash, and the last line's HEAD's
 * tail: the chain check compared each recomputed id with exactly those, so a reader takes them
 * from there instead of hashing the line again. Any other file, or no identity: hashed.
 */
export function isCheckedFile(ops: FileOps, fd: number, checked: FileStat | null | undefined): boolean {
  if (!checked || !ops.fstat) return false;
  const st = ops.fstat(fd);
  return st !== null && st.dev === checked.dev && st.ino === checked.ino && st.size === checked.size && st.mtimeNs === checked.mtimeNs && st.ctimeNs === checked.ctimeNs;
}

/**
 * The one check that HEAD's tail is the last line (SPEC 5): the line ending at HEAD's size is a
 * canonical record whose seq and id are HEAD's `seq` and `tail`. Every reader and writer makes it
 * before it shows or builds on anything, and gets that record back. `refusing` prefixes the
 * message for a verb that says what it refuses (recover); `fd` as for readTailLine. Throws
 * OP_CORRUPT.
 */
export function assertTailIsLastLine(ops: FileOps, paths: LedgerPaths, head: Head, refusing = '', fd?: number, linked = false): RecordAt {
  const tail = readTailLine(ops, paths, head, fd, linked);
  if (tail.id !== head.tail || tail.seq !== head.seq) {
    throw new LedgerError('OP_CORRUPT', `${refusing}HEAD says the tail is seq ${head.seq} ${head.tail}, but the last published line is seq ${String(tail.seq)} ${tail.id}`, {}, RUN_AUDIT);
  }
  return tail;
}

/**
 * The one check every reader and writer makes before it shows or builds on anything: HEAD's
 * size is within records.jsonl, and the chain through HEAD links and hashes (chain.ts), believing
 * the verified-chain memo only for a file it names exactly (chain-memo.ts). `fd`: records.jsonl
 * open already (else it is opened here). Returns the file's identity as checked (null when
 * `ops` cannot tell). Throws OP_CORRUPT.
 */
export function assertPublishedChain(ops: FileOps, paths: LedgerPaths, head: Head, fd?: number): FileStat | null {
  const own = fd === undefined ? openToRead(ops, paths.records) : fd;
  try {
    // One fstat of the open file gives both its size and its identity for the memo.
    const st = ops.fstat ? ops.fstat(own) : null;
    const size = st ? Number(st.size) : ops.size(paths.records);
    if (size < head.size) throw new LedgerError('OP_CORRUPT', `${paths.records} has ${size} bytes but HEAD publishes ${head.size}`, {}, RUN_AUDIT);
    return assertChain(ops, own, paths, head, st);
  } finally {
    if (fd === undefined) ops.close(own);
  }
}

/**
 * Every published record in order, streaming. `fromOffset`/`fromSeq` start the scan at a known
 * line (an index or a floor); ids are recomputed from the bytes, never taken from a cache.
 */
export function* readRecords(paths: LedgerPaths, head: Head, fromOffset = 0, fromSeq = 0, ops: FileOps = realFileOps): Generator<RecordAt> {
  const fd = openToRead(ops, paths.records);
  try {
    // Fail closed before showing anything: a HEAD that publishes more than the file holds, whose
    // tail is not the line ending at its size, or whose chain does not link (an edit in place),
    // is not a state of this ledger, even if the first records are intact. (The writer checks
    // the same before it appends.)
    assertPublishedChain(ops, paths, head, fd);
    assertTailIsLastLine(ops, paths, head);
    let seq = fromSeq;
    for (const { bytes, offset } of linesForward(ops, fd, paths.records, fromOffset, head.size)) {
      const { record, id } = readRecordLine(bytes, paths.records, offset, { seq });
      yield { seq, offset, id, record };
      seq++;
    }
  } finally {
    ops.close(fd);
  }
}
