// A writer's witnesses (SPEC 13, issue 27 item 3): after a publication, the checkpoint goes to the
// witnesses the policy names (witness/collect.ts, each bounded in time; one that does not answer
// counts as absent) and the cosignatures are published beside it: one more commit on the ref with
// the same records and HEAD and the cosigned checkpoint, pushed with the lease like any
// publication. What each witness answered is kept in the state directory, so `status` and
// `doctor` can say that one was away; a witness that is down delays nothing else.
//
// Policy: the cosigned checkpoint is published only while the ref is still this machine's
// publication (the lease); when another machine published meanwhile, its own checkpoint is the
// one its witnesses cosign, and this one is dropped, not retried.
import type { FileOps } from '../fs/ops.js';
import { join } from 'node:path';
import type { Head } from '../record.js';
import { CHECKPOINT_FILE } from '../store/checkpoint.js';
import { readHeadWithBytes } from '../store/head.js';
import { acquireLock } from '../store/lock.js';
import type { LedgerPaths } from '../store/paths.js';
import { readAnchor, writeAnchor } from './anchor.js';
import { publishedCheckpoint } from './checkpoint.js';
import { noteFetched } from './fetched.js';
import { pushWithLease } from './publish.js';
import { readStateJson, writeStateJson, type JoinInfo, type RemotePaths } from './state.js';
import { buildCommit } from './tree.js';

export interface WitnessReport {
  v: 1;
  at: string;
  seq: number;
  outcomes: { witness: string; outcome: string; detail: string }[];
}

/** The last report, or null (none, or a file this machine did not write). */
export function readWitnessReport(p: RemotePaths): WitnessReport | null {
  try {
    const v = readStateJson(p.witnesses) as Partial<WitnessReport> | null;
    if (!v || v.v !== 1 || typeof v.at !== 'string' || typeof v.seq !== 'number' || !Array.isArray(v.outcomes)) return null;
    return v as WitnessReport;
  } catch {
    return null;
  }
}

/** Best effort: a state directory that refuses it costs the status line, never the write. */
export function noteWitnessReport(p: RemotePaths, r: WitnessReport): void {
  try {
    writeStateJson(p.witnesses, r);
  } catch {
    /* see above */
  }
}

/**
 * Publishes the local checkpoint (with the cosignatures it now carries) when the ref is still at
 * the anchor this machine's copy is: 'published', 'moved' (someone published since), or 'skipped'
 * (the copy is not the anchor's, or its checkpoint is not HEAD's).
 */
export function publishCosigned(ops: FileOps, paths: LedgerPaths, rp: RemotePaths, join_: JoinInfo, now: Date, waitMs = 10_000): 'published' | 'moved' | 'skipped' | 'unreachable' {
  const lock = acquireLock(ops, paths.lock, waitMs);
  try {
    const anchor = readAnchor(rp);
    const local = readHeadWithBytes(ops, paths);
    if (!anchor || !local || local.head.seq !== anchor.seq || local.head.tail !== anchor.tail) return 'skipped';
    let cp;
    try {
      cp = publishedCheckpoint(ops.readFile(join(paths.dir, CHECKPOINT_FILE)), local.head as Head, 'local');
    } catch {
      return 'skipped';
    }
    if (cp === null) return 'skipped';
    const commit = buildCommit(rp.repo, { parent: anchor.commit, firstSeq: local.head.seq + 1, lines: [], head: local.bytes, ts: local.head.ts, checkpoint: cp.bytes });
    const out = pushWithLease(rp.repo, join_.url, join_.ref, commit, anchor.commit);
    if (out.kind === 'published') {
      writeAnchor(rp, { ...anchor, commit });
      noteFetched(rp, now, commit);
      return 'published';
    }
    return out.kind === 'moved' ? 'moved' : out.kind === 'unreachable' ? 'unreachable' : 'skipped';
  } finally {
    lock.release();
  }
}
