// The publisher of a ledger joined to a git remote (SPEC 11; the seam is store/publisher.ts).
// Under the local writer lock, for every writing verb:
//   refresh  fetch the ref into the private repository; verify what is new from the anchor
//            (fetch.ts); a fork or rollback sets the hold (hold.ts) and refuses; then the
//            local copy takes the new records byte for byte (store/adopt.ts) and the anchor
//            moves to the verified commit. A write whose copy is the anchor's state skips the
//            round trip and lets the push's lease check the remote (see refresh); after a
//            refused push the next refresh fetches at once (one connection, not ls-remote + fetch)
//   publish  build the commit on the remote tail (tree.ts) and push it with the lease on the
//            commit it was built on (publish.ts); on success the anchor moves first, then the
//            store writes the local copy. A writer killed between the two is repaired by the
//            next refresh, which takes its records back from the remote: nothing lost or doubled.
import { randomInt } from 'node:crypto';
import { LedgerError } from '../errors.js';
import type { FileOps } from '../fs/ops.js';
import type { Trust } from '../keys/trust.js';
import type { Draft, Head } from '../record.js';
import { adoptPublished } from '../store/adopt.js';
import { readHeadWithBytes } from '../store/head.js';
import type { LedgerPaths } from '../store/paths.js';
import { readTailLine } from '../store/read.js';
import type { PublishOutcome, Publisher } from '../store/publisher.js';
import { readAnchor, writeAnchor, type Anchor } from './anchor.js';
import { ensureRepo, fetchLedgerRef, unreachable, verifyRemote, type ChainPoint } from './fetch.js';
import { holdKind, holdRefusal, readHold, setHold } from './hold.js';
import { appendOutbox } from './outbox.js';
import { pushUnknown, pushWithLease, refusedByHost } from './publish.js';
import type { JoinInfo, RemotePaths } from './state.js';
import { buildCommit } from './tree.js';
import { retryPauseMs, RETRY_CAP_MS, yieldMs, type RandomInt } from './backoff.js';

const cryptoInt = (lo: number, hi: number): number => randomInt(lo, hi + 1);

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
}

/** A synchronous pause: the append runs in one synchronous critical section under the lock. */
function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class RemoteLink implements Publisher {
  private readonly maxAttempts: number;
  private readonly pauseMs: number;
  private readonly clock: () => Date;
  private readonly sleep: (ms: number) => void;
  private readonly random: RandomInt;
  /** The remote commit the local copy matched at the last refresh (null: the ref is absent). */
  private base: string | null = null;
  /** The last refresh found the remote unreachable and --offline was given. */
  private offlineNow = false;
  /** What the last refresh found: for status and sync's report. */
  lastRefresh: { adopted: number; commit: string | null; offline: boolean } = { adopted: 0, commit: null, offline: false };
  /**
   * `base` was taken from the anchor without asking the remote (see refresh): the push's lease
   * is what checks it. Only a write does this; `sync` always asks.
   */
  private unconfirmed = false;
  /** The last push was refused because the ref moved: the next refresh fetches, never assumes. */
  private moved = false;
  /** The last push was an unconfirmed one the ref refused: not contention, so no pause. */
  private missedGuess = false;
  /** 1 while the write in progress began with an unconfirmed push that missed: it costs no attempt. */
  private bonus = 0;
  /** The write in progress lost a race (or a guess); remembered in the anchor (contended_at). */
  private lostRace = false;
  /** The anchor's contended_at at the last refresh, carried forward by the anchors written after it. */
  private contendedAt: string | undefined;

  constructor(readonly rp: RemotePaths, readonly join: JoinInfo, private readonly trust: () => Trust, private readonly opts: LinkOptions = {}) {
    this.maxAttempts = opts.attempts ?? ATTEMPTS;
    this.pauseMs = opts.pauseMs ?? RETRY_CAP_MS;
    this.clock = opts.now ?? (() => new Date());
    this.sleep = opts.sleep ?? sleepMs;
    this.random = opts.random ?? cryptoInt;
  }

  get attempts(): number {
    return this.maxAttempts + this.bonus;
  }

  pause(attempt: number): void {
    // A guess from the anchor that missed lost no race: the real refresh follows at once.
    if (this.missedGuess) return;
    // backoff.ts: the longer this write has waited, the shorter its pause (seniority).
    const lost = attempt - this.bonus; // the races lost: a missed guess was none
    this.sleep(retryPauseMs(lost, this.random, this.pauseMs));
  }

  /**
   * Step 1 of every attempt. `ask` (sync) always asks the remote. A write whose local copy is
   * exactly the anchor's state, with no refused push since, skips the round trip: it builds on
   * the anchor's commit, and the push's lease (the CAS, publish.ts) is the check that the remote
   * is still there. A ref that moved, was rolled back, forked or deleted refuses that lease, and
   * the next attempt fetches and verifies as always (and sets the hold on a fork or rollback).
   * Policy: this is the same knowledge the ls-remote gave (the remote's ref is the commit this
   * machine verified, and nothing is new), got from the push instead of one round trip before it.
   */
  refresh(ops: FileOps, paths: LedgerPaths, ask = false): void {
    const hold = readHold(this.rp);
    if (hold) throw holdRefusal(hold);
    ensureRepo(this.rp.repo);
    this.offlineNow = false;
    const anchor = readAnchor(this.rp);
    const moved = this.moved;
    this.moved = false;
    this.missedGuess = false;
    // Not after a refused push: the first attempt of a write (every later one follows a 'moved').
    if (!moved) {
      this.bonus = 0;
      this.lostRace = false;
    }
    this.unconfirmed = false;
    this.contendedAt = anchor?.contended_at;
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
    if (!ask && !moved && contended) this.sleep(yieldMs(true, this.random));
    if (!ask && !moved && anchor && !contended) {
      const local = readHeadWithBytes(ops, paths);
      if (local && local.head.genesis === anchor.genesis && local.head.seq === anchor.seq && local.head.tail === anchor.tail && local.head.size === anchor.size) {
        this.unconfirmed = true;
        this.base = anchor.commit;
        this.lastRefresh = { adopted: 0, commit: anchor.commit, offline: false };
        return;
      }
    }
    let tip: string | null;
    try {
      tip = fetchLedgerRef(this.rp.repo, this.join.url, this.join.ref, anchor?.commit ?? null, moved);
    } catch (e) {
      if (this.opts.offline && e instanceof LedgerError && e.code === 'OP_REMOTE_UNREACHABLE') {
        this.offlineNow = true;
        this.lastRefresh = { adopted: 0, commit: null, offline: true };
        return;
      }
      throw e;
    }
    const local = readHeadWithBytes(ops, paths);
    try {
      this.lastRefresh = { adopted: this.catchUp(ops, paths, tip, local?.head ?? null, anchor), commit: tip, offline: false };
    } catch (e) {
      const kind = holdKind(e);
      if (kind) setHold(this.rp, e as LedgerError, kind, local?.bytes ?? null, tip, this.clock());
      throw e;
    }
    this.base = tip;
  }

  /** The anchor's contended_at: now if the write in progress lost a race, else as it was. */
  private contention(): { contended_at?: string } {
    const at = this.lostRace ? this.clock().toISOString() : this.contendedAt;
    return at === undefined ? {} : { contended_at: at };
  }

  /** Verifies the fetched tip and brings the local copy and the anchor to it; returns how many records the local copy took. */
  private catchUp(ops: FileOps, paths: LedgerPaths, tip: string | null, local: Head | null, anchor: Anchor | null): number {
    if (tip === null) {
      if (anchor) throw new LedgerError('REMOTE_FRESHNESS', `rollback: the remote no longer has ${this.join.ref} (this machine verified it at seq ${anchor.seq})`, { kind: 'rollback', seq: anchor.seq });
      return 0;
    }
    // Fast path: nothing new, and the local copy is what the anchor says.
    if (anchor && tip === anchor.commit && local && local.seq === anchor.seq && local.tail === anchor.tail) return 0;
    if (anchor && local && local.genesis !== anchor.genesis) {
      throw new LedgerError('OP_REMOTE', `the local ledger (genesis ${local.genesis.slice(0, 15)}…) is not the one joined to ${this.join.url}`, {}, 'join this ledger again with `ledger init --remote`');
    }
    // Verify from the earlier of the two trusted points; both must be held by the ref.
    const points: { seq: number; id: string; what: string; from: ChainPoint }[] = [];
    if (anchor) points.push({ seq: anchor.seq, id: anchor.tail, what: 'the anchor', from: { seq: anchor.seq, id: anchor.tail, ts: anchor.ts, size: anchor.size } });
    if (local) points.push({ seq: local.seq, id: local.tail, what: 'the local copy', from: { seq: local.seq, id: local.tail, ts: tailTs(ops, paths, local), size: local.size } });
    const from = points.length ? points.reduce((a, b) => (b.seq < a.seq ? b : a)).from : null;
    // The genesis first (as the join does): a remote replaced by another ledger is a fork even
    // when it is shorter than the anchor, not a rollback (verifyRemote compares it before any seq).
    const ours = anchor ? { genesis: anchor.genesis, what: 'the anchor' } : local ? { genesis: local.genesis, what: 'the local copy' } : undefined;
    const v = verifyRemote(this.rp.repo, tip, from, points, this.trust(), this.clock().getTime(), ours);
    const have = local ? local.seq : -1;
    const fresh = v.lines.slice(have + 1 - v.firstSeq);
    if (fresh.length || !local) adoptPublished(ops, paths, local, Buffer.concat(fresh), v.headBytes);
    const last = v.lines.length ? v.lines[v.lines.length - 1] : null;
    writeAnchor(this.rp, {
      v: 1, genesis: v.head.genesis, seq: v.head.seq, tail: v.head.tail, size: v.head.size, commit: tip,
      ts: last ? (JSON.parse(last.toString('utf8')) as { ts: string }).ts : from!.ts,
      ...this.contention(),
    });
    return fresh.length;
  }

  publish(base: Head, data: Buffer, head: { head: Head; bytes: Buffer }, drafts: readonly Draft[]): PublishOutcome {
    if (this.offlineNow) {
      // Policy: the queue holds the drafts as decided on the local copy, not signed records:
      // their seq and link depend on the remote tail at sync, where they are decided again.
      appendOutbox(this.rp, { drafts: [...drafts], decided_on: { seq: base.seq, tail: base.tail }, at: this.clock().toISOString() });
      this.opts.onNotice?.(`offline: the remote ${this.join.url} cannot be reached; ${drafts.length === 1 ? 'this write is' : `these ${drafts.length} writes are`} queued, NOT published (the ids shown are provisional); \`ledger sync\` publishes ${drafts.length === 1 ? 'it' : 'them'}`);
      return 'queued';
    }
    const lines: Buffer[] = [];
    for (let at = 0; at < data.length;) {
      const nl = data.indexOf(0x0a, at);
      lines.push(data.subarray(at, nl + 1));
      at = nl + 1;
    }
    const lastLine = lines[lines.length - 1];
    const commit = buildCommit(this.rp.repo, { parent: this.base, firstSeq: base.seq + 1, lines, head: head.bytes, ts: head.head.ts });
    const outcome = pushWithLease(this.rp.repo, this.join.url, this.join.ref, commit, this.base);
    const guessed = this.unconfirmed;
    this.unconfirmed = false;
    if (guessed && outcome.kind === 'unreachable' && this.opts.offline) {
      // The same as a refresh that found no remote: decided on the local copy, queued.
      this.offlineNow = true;
      this.lastRefresh = { adopted: 0, commit: null, offline: true };
      return this.publish(base, data, head, drafts);
    }
    switch (outcome.kind) {
      case 'published':
        // Policy: the anchor moves before the local copy does: a writer killed between the two
        // has an anchor ahead of its copy, and the next refresh takes the records from the remote.
        // (No update of FETCHED_REF: the build ref, tree.ts BUILT_REF, names this commit and
        // keeps its objects; the next fetch knows it as the anchor's.)
        writeAnchor(this.rp, { v: 1, genesis: head.head.genesis, seq: head.head.seq, tail: head.head.tail, size: head.head.size, ts: (JSON.parse(lastLine.toString('utf8')) as { ts: string }).ts, commit, ...this.contention() });
        this.base = commit;
        return 'published';
      case 'moved':
        this.moved = true;
        this.lostRace = true;
        this.missedGuess = guessed;
        if (guessed) this.bonus = 1;
        return 'moved';
      case 'refused':
        throw refusedByHost(this.join.url, this.join.ref, outcome.detail);
      case 'unreachable':
        throw unreachable(this.join.url, outcome.detail);
      default:
        throw pushUnknown(this.join.url, outcome.detail);
    }
  }
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
