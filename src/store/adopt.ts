// The local copy of a ledger joined to a remote (SPEC 11) takes what the remote published:
// records already verified from a trusted point (remote/fetch.ts) are appended at HEAD's size
// and HEAD is replaced by the remote's exact bytes, in the append protocol's order (lines, then
// fdatasync, then HEAD by the durable recipe), so records.jsonl and HEAD stay byte-identical to
// the ref's tree and `ledger audit` reads the same ledger every clone holds. Called under the
// writer lock only.
import { ioError } from '../errors.js';
import type { Head } from '../record.js';
import { writeAll } from '../fs/durable.js';
import type { FileOps, FileStat } from '../fs/ops.js';
import { rememberChain } from './chain-memo.js';
import { parseHead, writeHead } from './head.js';
import type { LedgerPaths } from './paths.js';
import { quarantineUnpublished } from './recover.js';

/** Appends `lines` (whole record lines) at `local.size` and publishes `headBytes` as HEAD. */
export function adoptPublished(ops: FileOps, paths: LedgerPaths, local: Head | null, lines: Buffer, headBytes: Buffer): Head {
  const head = parseHead(headBytes, 'the remote HEAD');
  // Bytes past the local HEAD were never published here: aside first, as an append does.
  quarantineUnpublished(ops, paths, local);
  const at = local ? local.size : 0;
  let fd: number;
  try {
    fd = ops.open(paths.records, local ? 'r+' : 'w', 0o644);
  } catch (e) {
    throw ioError(e, 'open', paths.records);
  }
  let st: FileStat | null = null;
  try {
    writeAll(ops, fd, lines, at);
    ops.fdatasync(fd);
    try {
      st = ops.fstat ? ops.fstat(fd) : null;
    } catch {
      st = null; // only the memo is lost
    }
  } catch (e) {
    try {
      ops.ftruncate(fd, at);
    } catch {
      /* the next writer's quarantine step moves them */
    }
    throw ioError(e, 'append to', paths.records);
  } finally {
    ops.close(fd);
  }
  writeHead(ops, paths, { head, bytes: headBytes });
  // The adopted records were checked from a trusted point (link, id, signature, pin): the
  // verified-chain memo may cover them, so the next writer does not re-read the whole chain.
  rememberChain(paths, head.genesis, st, { offset: head.size, seq: head.seq, id: head.tail });
  return head;
}
