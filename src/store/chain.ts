// The chain check of records.jsonl up to HEAD (SPEC 4-5; issue 13 finding 9): every published
// line is UTF-8, canonical JSON of an object, at the next seq, links by prev_tail_hash to the id
// of the line before it (the genesis to null), and the last one is HEAD's tail, ending at HEAD's
// size. That is what an edit in place (a record re-canonicalised or changed, with no key)
// breaks: its id changes, so the next record no longer links to it (or, at the tail, HEAD no
// longer names it). Signatures and pins are the auditor's; this check is the one every reader
// and writer can afford.
//
// O(bytes checked). chain-memo.ts says how much of the file is known checked already, so a
// writer appending in a loop and a reader after it check only the bytes that are new.
// Attacker-controlled input: every byte read here comes from records.jsonl.
import { LedgerError, RUN_AUDIT } from '../errors.js';
import type { Head } from '../record.js';
import { readRecordLine } from '../record-line.js';
import { linesForward } from '../fs/lines.js';
import type { FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

/** A point in the chain: the line of record `seq` ends at `offset`, and its id is `id`. */
export interface ChainPoint {
  /** Byte offset just past the line of record `seq` (where the next line starts). */
  offset: number;
  seq: number;
  id: string;
}

const broken = (paths: LedgerPaths, offset: number, why: string) =>
  new LedgerError('OP_CORRUPT', `${paths.records}: the line at byte ${offset} ${why}`, { path: paths.records, offset }, RUN_AUDIT);

/**
 * Checks the lines of the open file `fd` from just after `from` (null: from byte 0, the
 * genesis) through HEAD's size, and that they end at HEAD's tail. Throws OP_CORRUPT naming the
 * first line that breaks the chain (record-line.ts: what each line must be).
 */
export function checkChain(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, from: ChainPoint | null): void {
  let seq = from ? from.seq + 1 : 0;
  let prev: string | null = from ? from.id : null;
  let offset = from ? from.offset : 0;
  if (offset > head.size) throw broken(paths, offset, `lies past HEAD's size ${head.size}`);
  for (const { bytes, offset: at } of linesForward(ops, fd, paths.records, offset, head.size)) {
    prev = readRecordLine(bytes, paths.records, at, { seq, prev }).id;
    if (seq === 0 && prev !== head.genesis) throw broken(paths, at, `is a genesis record whose id is not HEAD's genesis ${head.genesis}`);
    offset = at + bytes.length + 1;
    seq++;
  }
  if (seq - 1 !== head.seq || prev !== head.tail) {
    throw new LedgerError('OP_CORRUPT', `HEAD says the tail is seq ${head.seq} ${head.tail}, but the last published line is seq ${seq - 1} ${String(prev)}`, { path: paths.records }, RUN_AUDIT);
  }
}
