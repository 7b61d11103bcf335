// The keys that `key` records authorized (SPEC 7), as a writer and the other readers on this
// machine need them: the `key` records of records.jsonl through HEAD, each verified from its
// bytes (canonical, schema, its own signature), folded by ../keys/grants.ts under the trust
// file. Only the lines that contain `"kind":"key"` are decoded (in a canonical line that member
// appears exactly so), so a scan costs one pass of indexOf over the file.
//
// Speed: the scan is made only when a key is not pinned in the trust file (the single-user
// ledger never makes it, nor a gate, which takes the keys its audit folded). It is not kept: a
// cache is a Ledger's (../cache/README.md), and none pays for this yet.
import { LedgerError, RUN_AUDIT } from '../errors.js';
import { linesForward, openToRead } from '../fs/lines.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import { applyKeyRecord, keyRecordProblem, type Grants } from '../keys/grants.js';
import type { Trust } from '../keys/trust.js';
import type { Head, LedgerRecord } from '../record.js';
import { readRecordLine } from '../record-line.js';
import { verifySig } from '../sign.js';
import type { LedgerPaths } from './paths.js';

const NEEDLE = Buffer.from('"kind":"key"');

/** A verified `key` record: where it stands and what it says. */
export interface KeyRecordAt { seq: number; id: string; record: LedgerRecord<'key'> }

/**
 * The `key` records through `head`, in seq order, each checked from its bytes. Throws OP_CORRUPT
 * for a line that is not a record, or a `key` record whose signature does not verify.
 */
export function keyRecords(ops: FileOps, paths: LedgerPaths, head: Head): KeyRecordAt[] {
  const out: KeyRecordAt[] = [];
  const fd = openToRead(ops, paths.records);
  try {
    let seq = 0;
    for (const { bytes, offset } of linesForward(ops, fd, paths.records, 0, head.size)) {
      if (bytes.indexOf(NEEDLE) >= 0) {
        const { record, id } = readRecordLine(bytes, paths.records, offset, { seq, schema: true });
        if (record.kind === 'key') {
          if (!verifySig('record', id, record.sig)) throw new LedgerError('OP_CORRUPT', `the key record at seq ${seq} in ${paths.records} has a signature that does not verify`, { seq }, RUN_AUDIT);
          out.push({ seq, id, record: record as LedgerRecord<'key'> });
        }
      }
      seq++;
    }
  } finally {
    ops.close(fd);
  }
  return out;
}

/**
 * Folds `key` records under `trust`. Policy: a record that does not count (not an admin's, a
 * second add, a revoke of nothing) authorizes nothing here; the auditor reports it (key-pin).
 */
export function foldGrants(trust: Trust, records: Iterable<KeyRecordAt>, into: Grants = new Map()): Grants {
  for (const k of records) {
    if (keyRecordProblem(trust, into, k.record, k.seq) === null) applyKeyRecord(trust, into, k.record, k.seq, k.id);
  }
  return into;
}

/** The keys records authorized through `head`, under `trust`. */
export function grantsAt(paths: LedgerPaths, head: Head, trust: Trust, ops: FileOps = realFileOps): Grants {
  return foldGrants(trust, keyRecords(ops, paths, head));
}
