// The seam between the append protocol and a place the ledger is published beyond this disk
// (SPEC 11: a git remote, src/remote/). The store owns the local copy and the lock; a publisher
// owns the remote. Under the writer lock, `transact` with a publisher runs:
//
//   1. refresh: bring the local copy to what the remote published (fetch, verify, adopt)
//   2. read HEAD, let the caller decide on it (ownership, leases, retry identity: every rule
//      that depends on order is decided again on each attempt), place and sign the drafts
//   3. publish: the publisher pushes them built on the HEAD they were placed on
//      - 'published': the local copy takes them (lines, HEAD) and the append returns
//      - 'moved': another machine published first: back to 1, bounded, with a jittered pause
//      - 'queued': kept in the publisher's outbox (--offline), not published, not written here
// The store does not know git; the dependency points from remote/ to store/.
import type { Draft, Head } from '../record.js';
import type { FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

export type PublishOutcome = 'published' | 'moved' | 'queued';

export interface Publisher {
  /** Step 1; throws to refuse (unreachable, a fork, a rollback), and then nothing was written. */
  refresh(ops: FileOps, paths: LedgerPaths): void;
  /** Step 3. `base` is the HEAD the records were placed on; `data` their lines; `head` the new HEAD line. */
  publish(base: Head, data: Buffer, head: { head: Head; bytes: Buffer }, drafts: readonly Draft[]): PublishOutcome;
  /** How many times step 1-3 may run before the append gives up (exit 3, nothing changed). */
  readonly attempts: number;
  /** Waits before attempt `n` (1-based) after a 'moved'. */
  pause(attempt: number): void;
}
