// The publisher of a ledger joined to a git remote (SPEC 11; the seam is store/publisher.ts).
// Under the local writer lock, every writing verb runs attempts, each one record (LinkAttempt)
// made by refresh and carried through publish, so the store's loop reads refresh -> decide ->
// publish -> the local copy takes the records, or again:
//   refresh  fetch the ref into the private repository; verify what is new from the anchor
//            (fetch.ts); a fork or rollback sets the hold (hold.ts) and refuses; then the
//            local copy takes the new records byte for byte (store/adopt.ts) and the anchor
//            moves to the verified commit. A write whose copy is the anchor's state skips the
//            round trip and lets the push's lease check the remote (see refresh); after a
//            refused push the next refresh fetches at once (one connection, not ls-remote + fetch).
//            The attempt says what was fetched and which ref value the push will expect.
//   publish  build the commit on that value (tree.ts) and push it with the lease on it
//            (publish.ts); on success the anchor moves first, then the store writes the local
//            copy. A writer killed between the two is repaired by the next refresh, which takes
//            its records back from the remote: nothing lost or doubled. The outcome goes into
//            the attempt.
//   again    after a refused push ('moved'): another attempt, after a pause (backoff.ts), or
//            the write gives up after ATTEMPTS lost races.
// The link itself holds only what is fixed for its life: the remote, the trust, the options.
import { nodeCrypto } from '../node-crypto.js';
import { LedgerError } from '../errors.js';
import type { FileOps } from '../fs/ops.js';
import type { Trust } from '../keys/trust.js';
import type { Head } from '../record.js';
import { adoptCheckpoint, adoptPublished } from '../store/adopt.js';
import { readHeadWithBytes } from '../store/head.js';
import type { LedgerPaths } from '../store/paths.js';
import { readTailLine } from '../store/read.js';
import type { Attempt, PlacedWrite, PublishOutcome, Publisher } from '../store/publisher.js';
import { readAnchor, writeAnchor, type Anchor } from './anchor.js';
import { keyRecords } from '../store/grants.js';
import { ensureRepo, fetchLedgerRef, unreachable, verifiedLine, verifyRemote, type ChainPoint } from './fetch.js';
import { holdKind, holdRefusal, readHold, setHold } from './hold.js';
import { appendOutbox } from './outbox.js';
import { noteFetched } from './fetched.js';
import { adoptBlobs, blobsNamedBy, localBlobs } from './blobs.js';
import { pushUnknown, pushWithLease, refusedByHost } from './publish.js';
import type { JoinInfo, RemotePaths } from './state.js';
import { buildCommit } from './tree.js';
import { retryPauseMs, RETRY_CAP_MS, yieldMs, type RandomInt } from './backoff.js';

const cryptoInt = (lo: number, hi: number): number => nodeCrypto().randomInt(lo, hi + 1);

export interface LinkOptions {
  /** --offline: when the remote cannot be reached, queue instead of refusing. */
  offline?: boolean;
  now?: () => Date;
  /** Attempts under contention (default ATTEMPTS) and the cap of the first jittered pause (default RETRY_CAP_MS, backoff.ts). */
  attempts?: number;
  pauseMs?: number;
  /** How the link sleeps and draws its jitter (tests pass their own; default: Atomics.wait, crypto). */
  sleep?: (ms: number) => void;
  random?: RandomInt;
  /** Told when a write is queued instead of published. */
  onNotice?: (text: string) => void;
  /** Told how many records the local copy took from the remote (its views are then out of date). */
  onAdopt?: (records: number) => void;
  /** Told when a write was published (SPEC 13: its checkpoint then goes to the witnesses). */
  onPublished?: () => void;
}

/** A synchronous pause: the append runs in one synchronous critical section under the lock. */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * One attempt of one write to publish (SPEC 11): made by `refresh`, passed to `publish`, which
 * records its outcome. It says what the attempt fetched (how the remote's state was learned,
 * and what the local copy took), the value the push's lease expects, and what came of it; a
 * write's next attempt is made from it. So nothing of a write lives on in the link.
 */
export interface LinkAttempt extends Attempt {
  /** Which attempt of the write (1-based). */
  readonly n: number;
  /** The races this write lost before this attempt; a refused guess is none (see `again`). */
  readonly lost: number;
  /**
   * How the remote's state was learned: 'fetched' (asked, verified, the local copy brought to
   * it), 'guessed' (the anchor's, without asking: the push's lease checks it; see refresh), or
   * not at all, 'offline' (unreachable, and --offline given: the write is queued).
   */
  readonly basis: 'fetched' | 'guessed' | 'offline';
  /** The ref's value this attempt builds on: the parent of its commit and its push's expected old value (null: no ref). */
  readonly expected: string | null;
  /** Records the local copy took from the remote in this attempt's refresh. */
  readonly adopted: number;
  /** The anchor's contended_at when the attempt began (carried into the anchors it writes). */
  readonly contendedAt: string | undefined;
  /** The ledger directory whose blob store the publication's test output is taken from (blobs.ts). */
  readonly ledgerDir: string;
  outcome: PublishOutcome | null;
}

/** The races a write has lost once attempt `a` was refused: a refused guess lost to nobody. */
const lostAfter = (a: LinkAttempt): number => a.lost + (a.basis === 'guessed' ? 0 : 1);

/** The count of the attempt after `prior` (null: a write's first); a later one only ever follows a refused push. */
export function following(prior: LinkAttempt | null): { n: number; lost: number } {
  return prior ? { n: prior.n + 1, lost: lostAfter(prior) } : { n: 1, lost: 0 };
}

export class RemoteLink implements Publisher<LinkAttempt> {
  private readonly maxAttempts: number;
  private readonly pauseMs: number;
  private readonly clock: () => Date;
  private readonly sleep: (ms: number) => void;
  private readonly random: RandomInt;

  constructor(readonly rp: RemotePaths, readonly join: JoinInfo, private readonly trust: () => Trust, private readonly opts: LinkOptions = {}) {
    this.maxAttempts = opts.attempts ?? ATTEMPTS;
    this.pauseMs = opts.pauseMs ?? RETRY_CAP_MS;
    this.clock = opts.now ?? (() => new Date());
    this.sleep = opts.sleep ?? sleepMs;
    this.random = opts.random ?? cryptoInt;
  }

  /**
   * Step 3 of every attempt: the attempt after `prior` (null: a write's first; a later one
   * follows a refused push). `ask` (sync) always asks the remote. A write's first attempt whose
   * local copy is exactly the anchor's state skips the round trip: it builds on the anchor's
   * commit, and the push's lease (the CAS, publish.ts) is the check that the remote is still
   * there. A ref that moved, was rolled back, forked or deleted refuses that lease, and the next
   * attempt fetches at once and verifies as always (and sets the hold on a fork or rollback).
   * Policy: this is the same knowledge the ls-remote gave (the remote's ref is the commit this
   * machine verified, and nothing is new), got from the push instead of one round trip before it.
   */
  refresh(ops: FileOps, paths: LedgerPaths, prior: LinkAttempt | null, ask = false, deadline?: number): LinkAttempt {
    const hold = readHold(this.rp);
    if (hold) throw holdRefusal(hold);
    ensureRepo(this.rp.repo);
    const anchor = readAnchor(this.rp);
    const begun = { ...following(prior), contendedAt: anchor?.contended_at, ledgerDir: paths.dir, outcome: null };
    // Policy: a machine whose write lost a race in the last CONTENDED_MS asks the remote first:
    // under contention the guess would let the last winner write again and again without a
    // fetch while the losers fetch, verify and lose again (the slowest of eight racing clones
    // waited 25x the median with it, 12x without).
    const contended = anchor?.contended_at !== undefined && this.clock().getTime() - Date.parse(anchor.contended_at) < CONTENDED_MS;
    // The first attempt of a write on a contended machine yields before it asks (backoff.ts),
    // so the fetch after it sees what the writers already racing published meanwhile. Asking
    // alone was not enough: the last winner's ls-remote finds its own commit, so it still
    // builds and pushes with no fetch while the losers fetch and verify (eight clones: 24-31x
    // without the yield, 1.8-2.3x with it, same build, 3 runs each).
    // Policy: only a lost race of this machine marks contention (not records of others
    // adopted: one agent handing to another is no race). A machine that never lost (the first
    // winner of a race) cannot tell that others wait; it yields only once it has lost. The
    // yield runs while CONTENDED_MS lasts, so a lone writer right after a race pays it for 5 s.
    if (!ask && !prior && contended) this.sleep(yieldMs(true, this.random));
    if (!ask && !prior && anchor && !contended && copyIsAnchor(ops, paths, anchor)) {
      return { ...begun, basis: 'guessed', expected: anchor.commit, adopted: 0 };
    }
    let tip: string | null;
    try {
      // After a refused push: one fetch at once (one connection, not ls-remote + fetch).
      tip = fetchLedgerRef(this.rp.repo, this.join.url, this.join.ref, anchor?.commit ?? null, prior !== null, deadline);
    } catch (e) {
      if (this.opts.offline && e instanceof LedgerError && e.code === 'OP_REMOTE_UNREACHABLE') return { ...begun, basis: 'offline', expected: null, adopted: 0 };
      throw e;
    }
    const local = readHeadWithBytes(ops, paths);
    let adopted: number;
    try {
      adopted = this.catchUp(ops, paths, tip, local, anchor, begun);
    } catch (e) {
      const kind = holdKind(e);
      if (kind) setHold(this.rp, e as LedgerError, kind, local?.bytes ?? null, tip, this.clock());
      throw e;
    }
    noteFetched(this.rp, this.clock(), tip);
    if (adopted > 0) this.opts.onAdopt?.(adopted);
    return { ...begun, basis: 'fetched', expected: tip, adopted };
  }

  /** The anchor's contended_at for the anchors an attempt writes: now once the write lost a race (an earlier attempt was refused), else as it was. */
  private contention(a: Pick<LinkAttempt, 'n' | 'contendedAt'>): { contended_at?: string } {
    const at = a.n > 1 ? this.clock().toISOString() : a.contendedAt;
    return at === undefined ? {} : { contended_at: at };
  }

  /** Verifies the fetched tip and brings the local copy and the anchor to it; returns how many records the local copy took. */
  private catchUp(ops: FileOps, paths: LedgerPaths, tip: string | null, localCopy: { head: Head; bytes: Buffer } | null, anchor: Anchor | null, a: Pick<LinkAttempt, 'n' | 'contendedAt'>): number {
    const local = localCopy?.head ?? null;
    if (tip === null) {
      if (anchor) throw new LedgerError('REMOTE_FRESHNESS', `rollback: the remote no longer has ${this.join.ref} (this machine verified it at seq ${anchor.seq})`, { kind: 'rollback', seq: anchor.seq });
      return 0;
    }
    // Fast path: nothing new, and the local copy is what the anchor says.
    if (anchor && tip === anchor.commit && local && local.seq === anchor.seq && local.tail === anchor.tail) return 0;
    // Fail closed (issue 23 finding 6): a joined copy whose HEAD is gone still holds records this
    // machine verified as published; nothing may treat them as unpublished bytes (quarantine) or
    // write over them from byte 0. A person restores HEAD, or joins again in a fresh folder.
    if (anchor && !local && ops.exists(paths.records)) {
      throw new LedgerError('OP_CORRUPT', `${paths.head} is missing, but this machine verified the remote's ledger through seq ${anchor.seq}: records.jsonl holds published records; nothing was changed`, { path: paths.head, anchor_seq: anchor.seq },
        `restore ${paths.head}, or move ${paths.dir} aside (it stays evidence) and join again: \`ledger init --remote ${this.join.url}\``);
    }
    if (anchor && local && local.genesis !== anchor.genesis) {
      throw new LedgerError('OP_REMOTE', `the local ledger (genesis ${local.genesis.slice(0, 15)}…) is not the one joined to ${this.join.url}`, {}, 'join this ledger again with `ledger init --remote`');
    }
    // Verify from the earlier of the two trusted points; both must be held by the ref.
    const points: { seq: number; id: string; what: string; from: ChainPoint }[] = [];
    if (anchor) points.push({ seq: anchor.seq, id: anchor.tail, what: 'the anchor', from: { seq: anchor.seq, id: anchor.tail, ts: anchor.ts, size: anchor.size } });
    if (local) points.push({ seq: local.seq, id: local.tail, what: 'the local copy', from: { seq: local.seq, id: local.tail, ts: tailTs(ops, paths, local), size: local.size } });
    const from = points.length ? points.reduce((x, y) => (y.seq < x.seq ? y : x)).from : null;
    // The genesis first (as the join does): a remote replaced by another ledger is a fork even
    // when it is shorter than the anchor, not a rollback (verifyRemote compares it before any seq).
    const ours = anchor ? { genesis: anchor.genesis, what: 'the anchor' } : local ? { genesis: local.genesis, what: 'the local copy' } : undefined;
    const v = verifyRemote(this.rp.repo, tip, from, points, this.trust(), this.clock().getTime(), ours, local ? keyRecords(ops, paths, local) : [], { verified: anchor ? { seq: anchor.seq, commit: anchor.commit } : null });
    const have = local ? local.seq : -1;
    const fresh = v.lines.slice(have + 1 - v.firstSeq);
    // The whole test output the new records name, before the records (blobs.ts).
    adoptBlobs(this.rp.repo, tip, paths.dir, blobsNamedBy(fresh));
    if (fresh.length || !local) adoptPublished(ops, paths, localCopy, Buffer.concat(fresh), v.headBytes, v.checkpoint);
    else adoptCheckpoint(ops, paths, v.head, v.checkpoint);
    const last = v.lines.length ? v.lines[v.lines.length - 1] : null;
    writeAnchor(this.rp, {
      v: 1, genesis: v.head.genesis, seq: v.head.seq, tail: v.head.tail, size: v.head.size, commit: tip,
      ts: last ? verifiedLine(last).ts : from!.ts,
      ...this.contention(a),
    });
    return fresh.length;
  }

  /** Step 8, in attempt `a`: the outcome is recorded in it. */
  publish(a: LinkAttempt, write: PlacedWrite): PublishOutcome {
    a.outcome = this.push(a, write);
    return a.outcome;
  }

  private push(a: LinkAttempt, write: PlacedWrite): PublishOutcome {
    if (a.basis === 'offline') return this.queue(write);
    const lines: Buffer[] = [];
    for (let at = 0; at < write.lines.length;) {
      const nl = write.lines.indexOf(0x0a, at);
      lines.push(write.lines.subarray(at, nl + 1));
      at = nl + 1;
    }
    const lastLine = lines[lines.length - 1];
    const { head, bytes } = write.head;
    const commit = buildCommit(this.rp.repo, { parent: a.expected, firstSeq: write.base.seq + 1, lines, head: bytes, ts: head.ts, blobs: localBlobs(a.ledgerDir, blobsNamedBy(lines)), checkpoint: write.checkpoint ?? null });
    const outcome = pushWithLease(this.rp.repo, this.join.url, this.join.ref, commit, a.expected);
    // A guess that finds no remote is a refresh that found none: decided on the local copy, queued.
    if (a.basis === 'guessed' && outcome.kind === 'unreachable' && this.opts.offline) return this.queue(write);
    switch (outcome.kind) {
      case 'published':
        // Policy: the anchor moves before the local copy does: a writer killed between the two
        // has an anchor ahead of its copy, and the next refresh takes the records from the remote.
        // (No update of FETCHED_REF: the build ref, tree.ts BUILT_REF, names this commit and
        // keeps its objects; the next fetch knows it as the anchor's.)
        writeAnchor(this.rp, { v: 1, genesis: head.genesis, seq: head.seq, tail: head.tail, size: head.size, ts: verifiedLine(lastLine).ts, commit, ...this.contention(a) });
        noteFetched(this.rp, this.clock(), commit);
        this.opts.onPublished?.();
        return 'published';
      case 'moved':
        return 'moved';
      case 'refused':
        throw refusedByHost(this.join.url, this.join.ref, outcome.detail);
      case 'unreachable':
        throw unreachable(this.join.url, outcome.detail);
      default:
        throw pushUnknown(this.join.url, outcome.detail);
    }
  }

  /**
   * --offline with no remote: the write waits in the outbox. Policy: the queue holds the drafts
   * as decided on the local copy, not signed records: their seq and link depend on the remote
   * tail at sync, where they are decided again.
   */
  private queue(write: PlacedWrite): 'queued' {
    const { drafts, base } = write;
    // Policy: a consume counts only once published (issue 23 finding 8: a queued consume let the
    // --offline gate proceed, and another machine's gate for the same consumer too): it is never
    // queued; the caller (the gate) holds instead.
    if (write.mustPublish) {
      throw new LedgerError('OP_REMOTE_UNREACHABLE', `the remote ${this.join.url} cannot be reached, and a consumption counts only once published; nothing was queued`, { url: this.join.url, not_queued: true }, 'try again when the remote answers');
    }
    appendOutbox(this.rp, { drafts: [...drafts], decided_on: { seq: base.seq, tail: base.tail }, at: this.clock().toISOString() });
    this.opts.onNotice?.(`offline: the remote ${this.join.url} cannot be reached; ${drafts.length === 1 ? 'this write is' : `these ${drafts.length} writes are`} queued, NOT published (the ids shown are provisional); \`ledger sync\` publishes ${drafts.length === 1 ? 'it' : 'them'}`);
    return 'queued';
  }

  /**
   * After attempt `a` was refused ('moved'): false once the write has lost ATTEMPTS races (it
   * gives up: exit 3, nothing published); else it pauses as backoff.ts says (seniority: the
   * longer it has waited, the shorter) and says true. A refused guess lost no race (it built on
   * the anchor without asking): it costs no attempt and no pause, the real refresh follows at once.
   */
  again(a: LinkAttempt): boolean {
    const lost = lostAfter(a);
    if (lost >= this.maxAttempts) return false;
    if (a.basis !== 'guessed') this.sleep(retryPauseMs(lost, this.random, this.pauseMs));
    return true;
  }
}

/** Whether the local copy is exactly the anchor's state (the guess of refresh may build on it). */
function copyIsAnchor(ops: FileOps, paths: LedgerPaths, anchor: Anchor): boolean {
  const local = readHeadWithBytes(ops, paths);
  return local !== null && local.head.genesis === anchor.genesis && local.head.seq === anchor.seq && local.head.tail === anchor.tail && local.head.size === anchor.size;
}

/**
 * Policy: 32 attempts. The old 24 lasted about 8 s with pauses growing to 400 ms; the seniority
 * pauses (backoff.ts) add up to about a second over 32 attempts, so attempts go faster. Eight
 * clones racing (4 appends each, 3 runs): the most attempts one write needed were 13, 15 and
 * 16; one run on a loaded machine (load 5) had a write use all 24 and give up. 32 keeps a
 * write's bound near the old time (~10-14 s under that load) and gives the fair order room to
 * reach the last.
 */
export const ATTEMPTS = 32;

/** How long after a lost race a machine's writes ask the remote before they push. */
export const CONTENDED_MS = 5_000;

function tailTs(ops: FileOps, paths: LedgerPaths, head: Head): string {
  return readTailLine(ops, paths, head).record.ts;
}
