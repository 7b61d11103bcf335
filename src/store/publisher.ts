// The seam between the append protocol and a place the ledger is published beyond this disk
// (SPEC 11: a git remote, src/remote/). The store owns the local copy and the lock; a publisher
// owns the remote. Under the writer lock, `transact` with a publisher runs each attempt of a
// write as its steps (append.ts numbers them):
//
//   3. refresh: a new Attempt (the first of the write, or the one after `prior`); the local copy
//      is brought to what the remote published (fetched, verified, written by append.ts's one
//      lines-then-HEAD write), and the attempt says what it was built on
//   4-7. read HEAD, decide on it (ownership, leases, retry identity: every rule that depends on
//      order is decided again on each attempt), place and sign the drafts, quarantine
//   8. publish the placed write in that attempt; its outcome goes into the attempt:
//      - 'published': step 9, the local copy takes the records (lines, HEAD), and the append returns
//      - 'moved': another machine published first: `again` says whether there is another
//        attempt (bounded, after a jittered pause) or the write gives up (exit 3, nothing published)
//      - 'queued': kept in the publisher's outbox (--offline), not published, not written here
// Nothing of a write lives in the publisher between its calls: what one attempt learned is in
// the attempt, and the next is made from it. The store does not know git; the dependency points
// from remote/ to store/.
import type { Draft, Head } from '../record.js';
import type { FileOps } from '../fs/ops.js';
import type { SignedHead } from './head.js';
import type { LedgerPaths } from './paths.js';

export type PublishOutcome = 'published' | 'moved' | 'queued';

/** One attempt of one write: made by `refresh`, passed to `publish`, which records its outcome. */
export interface Attempt {
  /** Which attempt of the write this is (1-based). */
  readonly n: number;
  /** What publishing it came to; null until `publish` ran. */
  outcome: PublishOutcome | null;
  /**
   * 'guessed': built on what this machine verified last, without asking the remote. A refusal
   * that newer records could lift (the writer's key, not yet authorized here: SPEC 7) then asks
   * the remote before it stands.
   */
  readonly basis?: 'fetched' | 'guessed' | 'offline';
}

/** What step 8 publishes: drafts placed and signed on `base`. */
export interface PlacedWrite {
  /** The HEAD the records were placed on. */
  base: Head;
  /** Their lines, each with its newline, in seq order. */
  lines: Buffer;
  /** The new HEAD over them, signed, with its exact line. */
  head: SignedHead;
  /** The drafts as decided (what an outbox keeps: they are placed again when published). */
  drafts: readonly Draft[];
  /** Published or refused: never queued (StoreOptions.mustPublish). */
  mustPublish?: boolean;
  /** SPEC 13: the checkpoint of the tree through the new HEAD, signed by its key, published beside it. */
  checkpoint?: Buffer | null;
}

export interface Publisher<A extends Attempt = Attempt> {
  /** Step 3; throws to refuse (unreachable, a fork, a rollback), and then nothing was written. */
  refresh(ops: FileOps, paths: LedgerPaths, prior: A | null): A;
  /** Step 8, in `attempt` (which it records the outcome in). */
  publish(attempt: A, write: PlacedWrite): PublishOutcome;
  /** After 'moved': false when the write has used its attempts; else waits before the next and says true. */
  again(attempt: A): boolean;
}
