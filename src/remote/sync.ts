// Joining a remote, `ledger sync`, and re-anchoring after a person's review (SPEC 11).
//   joinLedger    `ledger init --remote REMOTE`: take the remote's ledger (verified from genesis
//                 against the trust file), or publish this one's (or a new genesis) when the
//                 remote has none (a new genesis is made in memory, written here once the
//                 remote took it); join.json is written last, so a join that fails is no
//                 join, and a failed join removes what it made: it leaves nothing behind
//   syncLedger    fetch, verify, update the local copy; then replay the outbox through the
//                 store's transact, each entry decided again on the remote's tail
//   acceptRemote  `ledger sync --accept-remote`: after a fork or rollback, clear the hold and
//                 anchor on the remote as it is now, verified from genesis
import { dirname, isAbsolute, join as joinPath, resolve } from 'node:path';
import { LedgerError } from '../errors.js';
import { assertStrictRoot } from '../fs/confine.js';
import { mkdirDurable } from '../fs/durable.js';
import { realFileOps, removeTreeBelow, type FileOps } from '../fs/ops.js';
import { pinProblem, type Trust } from '../keys/trust.js';
import { acceptProblem, pinOf } from '../keys/grants.js';
import type { Head, LedgerRecord } from '../record.js';
import type { Signer } from '../sign.js';
import { adoptCheckpoint, adoptPublished } from '../store/adopt.js';
import { CHECKPOINT_FILE, extendTree, signCheckpoint, type PublishedCheckpoint } from '../store/checkpoint.js';
import { publishedCheckpoint } from './checkpoint.js';
import { readWitnessReport } from './witnesses.js';
import { genesisDraft, placeGenesis, transact, type StoreOptions } from '../store/append.js';
import { readHeadWithBytes } from '../store/head.js';
import { acquireLock } from '../store/lock.js';
import { ledgerPaths, type LedgerPaths } from '../store/paths.js';
import { readRecords, type RecordAt } from '../store/read.js';
import { foldWorkLog } from '../handoff/workitems.js';
import { leaseLive } from '../handoff/lease.js';
import { readAnchor, writeAnchor } from './anchor.js';
import { keyRecords } from '../store/grants.js';
import { ensureRepo, fetchLedgerRef, unreachable, verifiedLine, verifyLines, verifyRemote } from './fetch.js';
import { checkRemoteUrl, gitOk } from './git.js';
import { runGit as runCallerGit } from '../project/git.js';
import { clearHold, readHold } from './hold.js';
import { RemoteLink, type LinkAttempt, type LinkOptions } from './link.js';
import { readOutbox, writeOutbox, type OutboxEntry } from './outbox.js';
import { pushUnknown, pushWithLease, refusedByHost } from './publish.js';
import { ensureRemoteDir, FETCHED_REF, LEDGER_REF, readJoin, remotePaths, stateDirOf, writeStateJson, type Env, type JoinInfo, type RemotePaths } from './state.js';
import { adoptBlobs, blobsNamedBy, localBlobs } from './blobs.js';
import { blobOid, buildCommit } from './tree.js';

/**
 * REMOTE as the user gave it: a URL or path is taken as it is (a relative path against the
 * working directory); a bare name is a remote of the enclosing repository (`git remote get-url`,
 * run as the caller: the repository and its config are theirs, project/git.ts). Either way the
 * URL must pass checkRemoteUrl (git.ts): the config's URL (after its `url.*.insteadOf`) is
 * input like any other, and once named `--upload-pack=CMD` there (issue 23 finding 4).
 * Policy: the URL is resolved once, at join, and kept in the state directory: a later change to
 * the repository's config cannot point this machine's ledger at another remote.
 */
export function resolveRemoteUrl(remote: string, cwd: string): string {
  if (remote.length === 0 || remote.startsWith('-')) throw new LedgerError('USAGE', `--remote expected a git remote name or URL, got "${remote}"`);
  const absolute = (url: string) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/\s]+@[^/\s]+:/.test(url) || isAbsolute(url) ? url : resolve(cwd, url));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(remote) || /^[^/\s]+@[^/\s]+:/.test(remote) || remote.includes('::')) return checkRemoteUrl(remote);
  if (isAbsolute(remote) || remote.startsWith('.') || remote.includes('/')) return checkRemoteUrl(resolve(cwd, remote));
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(remote)) throw new LedgerError('USAGE', `--remote ${JSON.stringify(remote)}: not a URL, a path, or a remote name git allows`, { remote });
  const r = runCallerGit(cwd, ['remote', 'get-url', '--', remote]);
  if (r.code !== 0) throw new LedgerError('USAGE', `--remote ${remote}: not a URL or path, and not a remote of the repository at ${cwd} (${r.error || `exit ${r.code}`})`, { remote }, 'pass a URL or path, or add it with `git remote add`');
  const url = r.stdout.trim();
  if (url.includes('\n')) throw new LedgerError('USAGE', `--remote ${remote}: the repository names more than one URL for it`, { remote });
  // Checked as the config says it (a word git would read as an option, a helper), then as used.
  const what = `the URL of remote ${remote}`;
  if (url.startsWith('-') || /^[^/]*::/.test(url)) checkRemoteUrl(url, what);
  return checkRemoteUrl(absolute(url), what);
}

export interface RemoteContext {
  stateDir: string;
  rp: RemotePaths;
  join: JoinInfo;
}

/** The remote this ledger is joined to on this machine, or null. */
export function joinedRemote(ledgerDir: string, stateDir: string): RemoteContext | null {
  const rp = remotePaths(stateDir, ledgerDir);
  const join = readJoin(rp);
  return join ? { stateDir, rp, join } : null;
}

export function openRemoteLink(ctx: RemoteContext, trust: () => Trust, opts: LinkOptions = {}): RemoteLink {
  return new RemoteLink(ctx.rp, ctx.join, trust, opts);
}

export interface JoinOptions {
  dir: string;
  url: string;
  ref?: string;
  trustPath: string;
  trust: Trust;
  signer: Signer;
  agent: string;
  name?: string;
  env: Env;
  now?: () => Date;
  waitMs?: number;
  /** Under a witness policy: the tip the witnesses stood behind (null: no ledger there); the join takes that commit or nothing. */
  expectTip?: string | null;
}

export interface JoinResult {
  created: boolean;
  /** Records the local copy took from the remote. */
  adopted: number;
  head: { seq: number; tail: string; genesis: string };
  commit: string;
  url: string;
  ref: string;
}

/** The local ledger's whole published bytes, as lines. */
function localLines(ops: FileOps, paths: LedgerPaths, size: number): Buffer[] {
  const all = ops.readFile(paths.records).subarray(0, size);
  const out: Buffer[] = [];
  for (let at = 0; at < all.length;) {
    const nl = all.indexOf(0x0a, at);
    out.push(Buffer.from(all.subarray(at, nl + 1)));
    at = nl + 1;
  }
  return out;
}

/** How many times a join fetches again after another machine created the ref first. */
export const JOIN_ATTEMPTS = 8;

/**
 * `ledger init --remote`: see the header. Policy: a join that fails leaves the per-user state
 * directory and the ledger directory as they were: the folder it made for this remote
 * (`remote/<ledger>/`, with the private repository in it), the folders it made above it, and
 * a ledger directory it made and left empty are removed. A new genesis is made in memory and
 * written here only once the remote took it, so there is no staging copy to leave behind.
 */
export function joinLedger(o: JoinOptions): JoinResult {
  const ref = o.ref ?? LEDGER_REF;
  const now = o.now ?? (() => new Date());
  const stateDir = stateDirOf(o.env);
  const ops = realFileOps;
  const paths = ledgerPaths(o.dir, stateDir);
  assertStrictRoot(paths.dir);
  assertStrictRoot(stateDir);
  const rp = remotePaths(stateDir, paths.dir);
  if (readJoin(rp) && ops.exists(paths.head)) throw new LedgerError('INPUT_EXISTS', `the ledger at ${paths.dir} is already joined to a remote on this machine`, { dir: paths.dir }, 'run `ledger sync`');
  const join: JoinInfo = { v: 1, url: o.url, ref, trust: o.trustPath };
  const madeState = missingDirs(ops, rp.dir);
  const madeDir = !ops.exists(paths.dir);
  try {
    ensureRemoteDir(rp);
    ensureRepo(rp.repo);
    mkdirDurable(ops, paths.dir, 0o755);
    return joinLoop(o, ops, paths, rp, join, ref, now);
  } catch (e) {
    undoJoin(ops, paths, rp, madeDir, madeState);
    throw e;
  }
}

/** `dir` and those of its parents that do not exist yet, innermost first. */
function missingDirs(ops: FileOps, dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; !ops.exists(d) && dirname(d) !== d; d = dirname(d)) out.push(d);
  return out;
}

/** What a failed join made goes again (see joinLedger); best effort, it never hides the failure. */
function undoJoin(ops: FileOps, paths: LedgerPaths, rp: RemotePaths, madeDir: boolean, madeState: readonly string[]): void {
  // rmdir: only an empty ledger directory; one a write reached stays for the person to see.
  if (madeDir) {
    try {
      ops.rmdir(paths.dir);
    } catch {
      /* something was written: it stays */
    }
  }
  // Policy: the remote's folder goes only when this join made it and no join.json is in it (a
  // join of the same ledger that finished meanwhile keeps its own); it holds nothing but what
  // this join fetched and built. Removed whole (the private repository is many files).
  if (madeState[0] !== rp.dir || ops.exists(rp.join)) return;
  try {
    removeTreeBelow(rp.dir);
    for (const d of madeState.slice(1)) ops.rmdir(d); // the folders above it that this join made, while empty
  } catch {
    /* a folder someone else wrote into meanwhile stays */
  }
}

function joinLoop(o: JoinOptions, ops: FileOps, paths: LedgerPaths, rp: RemotePaths, join: JoinInfo, ref: string, now: () => Date): JoinResult {
  for (let attempt = 1; attempt <= JOIN_ATTEMPTS; attempt++) {
    const tip = fetchLedgerRef(rp.repo, o.url, ref);
    if (o.expectTip !== undefined && tip !== o.expectTip) {
      throw new LedgerError('OP_REMOTE_CONTENDED', `the remote ${o.url} moved while its witnesses were asked about it; nothing was changed`, { url: o.url }, 'run the join again');
    }
    const lock = acquireLock(ops, paths.lock, o.waitMs ?? 10_000);
    let result: JoinResult | null = null;
    try {
      const local = readHeadWithBytes(ops, paths);
      if (tip) {
        // The remote has a ledger: verify it whole (from the local copy's tail, if there is one).
        const from = local ? { seq: local.head.seq, id: local.head.tail, ts: lastTs(ops, paths, local.head.size), size: local.head.size } : null;
        const hold = local ? [{ seq: local.head.seq, id: local.head.tail, what: 'the local ledger' }] : [];
        // The remote's records through the local tail must be the local copy's very lines (their
        // blob ids): a remote that holds the local tail over other records below it is a fork.
        const mine = local ? localLines(ops, paths, local.head.size) : [];
        const v = verifyRemote(rp.repo, tip, from, hold, o.trust, now().getTime(), local ? { genesis: local.head.genesis, what: 'the local ledger' } : undefined, local ? keyRecords(ops, paths, local.head) : [], { verified: null, known: (seq) => (mine[seq] ? blobOid(mine[seq]) : null) });
        if (local && v.head.genesis !== local.head.genesis) throw new LedgerError('REMOTE_LINKAGE', 'fork: the remote holds another ledger than the local one', { kind: 'fork' });
        adoptBlobs(rp.repo, tip, paths.dir, blobsNamedBy(v.lines));
        if (v.lines.length || !local) adoptPublished(ops, paths, local, Buffer.concat(v.lines), v.headBytes, v.checkpoint);
        else adoptCheckpoint(ops, paths, v.head, v.checkpoint);
        const lastLine = v.lines.length ? v.lines[v.lines.length - 1] : null;
        writeAnchor(rp, { v: 1, genesis: v.head.genesis, seq: v.head.seq, tail: v.head.tail, size: v.head.size, ts: lastLine ? tsOf(lastLine) : from!.ts, commit: tip });
        result = { created: false, adopted: v.lines.length, head: { seq: v.head.seq, tail: v.head.tail, genesis: v.head.genesis }, commit: tip, url: o.url, ref };
      } else {
        // No ledger there yet: publish this one, or a new genesis (made in memory, written here
        // only once published).
        let lines: Buffer[];
        let headBytes: Buffer;
        if (local) {
          lines = localLines(ops, paths, local.head.size);
          headBytes = local.bytes;
          // A join never publishes records its own trust would reject (issue 23): every local
          // record and the HEAD are checked against the trust file the join names, as a
          // remote's would be, before the first push.
          trustsLocal(lines, local.head, o.trust, now().getTime());
        } else {
          const genesis = placeGenesis(genesisDraft(o.agent, o.name), now, o.signer);
          lines = [genesis.placed.data];
          headBytes = genesis.head.bytes;
        }
        const head = JSON.parse(headBytes.toString('utf8')) as Head;
        const cp = joinCheckpoint(ops, paths, local !== null, lines, head, o.signer);
        const commit = buildCommit(rp.repo, { parent: null, firstSeq: 0, lines, head: headBytes, ts: head.ts, blobs: localBlobs(paths.dir, blobsNamedBy(lines)), checkpoint: cp?.bytes ?? null });
        const out = pushWithLease(rp.repo, o.url, ref, commit, null);
        if (out.kind === 'refused') throw refusedByHost(o.url, ref, out.detail);
        if (out.kind === 'unreachable') throw unreachable(o.url, out.detail);
        if (out.kind === 'unknown') throw pushUnknown(o.url, out.detail);
        if (out.kind === 'published') {
          gitOk(['update-ref', FETCHED_REF, commit], { gitDir: rp.repo });
          if (!local) adoptPublished(ops, paths, null, Buffer.concat(lines), headBytes, cp);
          writeAnchor(rp, { v: 1, genesis: head.genesis, seq: head.seq, tail: head.tail, size: head.size, ts: tsOf(lines[lines.length - 1]), commit });
          result = { created: !local, adopted: 0, head: { seq: head.seq, tail: head.tail, genesis: head.genesis }, commit, url: o.url, ref };
        }
        // 'moved': another machine created the ref meanwhile: join that one, next round.
      }
    } finally {
      lock.release();
    }
    if (result) {
      writeStateJson(rp.join, join);
      // The documented way out of a fork (docs/across-machines.md: move .ledger/ aside and join
      // again) ends here: the copy the hold was about is aside, this one is verified and
      // anchored, so the hold is lifted (issue 23: it stayed, and every writer still refused).
      // Its evidence stays where the hold said.
      clearHold(rp);
      return result;
    }
  }
  throw new LedgerError('OP_REMOTE_CONTENDED', `the remote ${o.url} kept changing while joining; nothing was joined`, {}, 'try again');
}

/**
 * SPEC 13: the checkpoint the first publication carries: the local copy's own (when it is of its
 * HEAD, signed by HEAD's key), or, for a new genesis, one signed by the joining key; null when the
 * local copy has none of its HEAD (published without one; its next append's carries one).
 */
function joinCheckpoint(ops: FileOps, paths: LedgerPaths, hasLocal: boolean, lines: readonly Buffer[], head: Head, signer: Signer): PublishedCheckpoint | null {
  try {
    const bytes = hasLocal ? ops.readFile(joinPath(paths.dir, CHECKPOINT_FILE)) : Buffer.from(signCheckpoint(extendTree(ops, paths, null, Buffer.concat(lines)), head, signer).note!, 'utf8');
    return publishedCheckpoint(bytes, head, 'local');
  } catch {
    return null;
  }
}

function trustsLocal(lines: Buffer[], head: Head, trust: Trust, nowMs: number): void {
  const refuse = (e: LedgerError) => new LedgerError(e.code, `${e.message}; the join publishes nothing`, e.data, 'a ledger is published only when the trust file the join names accepts every record and its HEAD: pin the missing key there, or join with the trust file that does');
  let grants: ReturnType<typeof verifyLines>['grants'];
  try {
    const v = verifyLines(lines, lines.map((_, i) => i), null, trust, nowMs, 'the local record', {});
    if (v.prev.id !== head.tail || v.size !== head.size) throw new LedgerError('REMOTE_LINKAGE', `the local HEAD (seq ${head.seq}) does not match its records`, {});
    grants = v.grants;
  } catch (e) {
    throw e instanceof LedgerError ? refuse(e) : e;
  }
  // The HEAD's key: pinned in the trust file, or authorized by a key record (SPEC 7).
  const pin = pinOf(trust, head.sig.key) ? pinProblem(trust, head.sig.key, head.seq, null) : acceptProblem(trust, grants, head.sig.key, head.seq, null);
  if (pin) throw refuse(new LedgerError('REMOTE_KEY_PIN', `the local HEAD: ${pin}`, {}));
}

function tsOf(line: Buffer): string {
  return verifiedLine(line).ts;
}

function lastTs(ops: FileOps, paths: LedgerPaths, size: number): string {
  const lines = localLines(ops, paths, size);
  return tsOf(lines[lines.length - 1]);
}

export interface SyncReport {
  /** Records the local copy took from the remote. */
  adopted: number;
  /** Outbox entries published now, with their records' seqs. */
  published: { seqs: number[]; kinds: string[] }[];
  /** Outbox entries a rule refuses now: dropped, never published. */
  dropped: { kinds: string[]; slug: string | null; reason: string }[];
  /** Entries still waiting (the remote could not be reached). */
  waiting: number;
  head: { seq: number; tail: string };
  /** The remote's commit as this machine last verified it (after its own publication, that one). */
  commit: string | null;
}

/**
 * Policy: a queued entry is dropped when, since the HEAD it was decided on, another agent wrote
 * a record of the same work item or operation (a start, checkpoint, finish, release or handoff
 * of it: a conflicting successor), or when its `start` would now meet another agent's live
 * lease. The rules the store's callers apply (ownership, retry identity) were decided on the
 * local view when it was queued; this is the order-dependent part decided again.
 */
export function outboxConflict(entry: OutboxEntry, records: Iterable<RecordAt>, now: Date): string | null {
  const ops = new Map<string, string>();
  for (const d of entry.drafts) {
    const op = (d as { logical_operation_id?: string }).logical_operation_id;
    if (op) ops.set(op, d.agent);
  }
  if (ops.size === 0) return null;
  const later: LedgerRecord[] = [];
  const all: RecordAt[] = [];
  for (const r of records) {
    all.push(r);
    if (r.seq > entry.decided_on.seq) later.push(r.record);
  }
  for (const r of later) {
    const op = (r as { logical_operation_id?: string }).logical_operation_id;
    if (op && ops.has(op) && r.agent !== ops.get(op) && r.kind !== 'note') {
      return `${r.agent} wrote a ${r.kind} of ${op} at seq ${(r as { seq: number }).seq} after this was queued`;
    }
  }
  const items = foldWorkLog(all).items;
  for (const d of entry.drafts) {
    if (d.kind !== 'start') continue;
    const item = items.get((d as { logical_operation_id: string }).logical_operation_id);
    if (item && item.status === 'open' && item.owner && item.owner !== d.agent && item.lease_until && leaseLive(item.lease_until, now)) {
      return `${item.owner} owns ${(d as { logical_operation_id: string }).logical_operation_id} (lease live until ${item.lease_until})`;
    }
  }
  return null;
}

/** Why the key `key` may not sign `entry`'s drafts from `seq` on under `trustOf`'s trust, or null. */
function unsignable(entry: OutboxEntry, key: string, seq: number, trustOf: (() => Trust) | undefined): string | null {
  if (!trustOf) return null;
  const trust = trustOf();
  for (const [i, d] of entry.drafts.entries()) {
    const problem = pinProblem(trust, key, seq + i, d.agent);
    if (problem) return `this machine's key may not sign it as ${d.agent}: ${problem}`;
  }
  return null;
}

/** `ledger sync`: see the header. `store.publisher` must be the link. */
export function syncLedger(link: RemoteLink, store: StoreOptions & { publisher: RemoteLink }, signerOf: () => Signer | null, trustOf?: () => Trust): SyncReport {
  const ops = store.ops ?? realFileOps;
  const paths = ledgerPaths(store.dir, store.guard?.stateDir, store.cache);
  assertStrictRoot(paths.dir);
  const lock = acquireLock(ops, paths.lock, store.waitMs ?? 10_000);
  let fetched: LinkAttempt;
  try {
    fetched = link.refresh(ops, paths, null, true);
  } finally {
    lock.release();
  }
  const entries = readOutbox(link.rp);
  const report: SyncReport = { adopted: fetched.adopted, published: [], dropped: [], waiting: 0, head: { seq: -1, tail: '' }, commit: fetched.expected };
  if (fetched.basis === 'offline') {
    report.waiting = entries.length;
  } else if (entries.length) {
    // The key is read only when something waits: a sync with nothing queued signs nothing.
    const signer = signerOf();
    if (!signer) throw new LedgerError('USAGE', `${entries.length} queued write${entries.length === 1 ? '' : 's'} wait to be published, and publishing needs a key`, {}, 'pass --key or set LEDGER_KEY');
    const rest = [...entries];
    while (rest.length) {
      const entry = rest[0];
      const kinds = entry.drafts.map((d) => d.kind);
      let reason: string | null = null;
      const res = transact({ ...store, now: () => new Date() }, signer, (view) => {
        // Policy: a queued draft is signed now, for whatever agent it names (the outbox holds
        // drafts, not signed records); it is published only when the trust this machine checks
        // the remote with would accept this key for that agent at the seq it gets, else dropped
        // and reported (issue 23: drafts carrying any agent name were signed as queued).
        reason = unsignable(entry, signer.publicKey, view.head.seq + 1, trustOf) ?? outboxConflict(entry, readRecords(view.paths, view.head, 0, 0, ops), new Date());
        return reason ? [] : entry.drafts;
      });
      if (reason) report.dropped.push({ kinds, slug: (entry.drafts[0] as { logical_operation_id?: string }).logical_operation_id ?? null, reason });
      else report.published.push({ seqs: res.records.map((r) => r.seq), kinds });
      rest.shift();
      writeOutbox(link.rp, rest);
    }
  }
  const h = readHeadWithBytes(ops, paths);
  if (h) report.head = { seq: h.head.seq, tail: h.head.tail };
  // The commit is the remote state this machine verified last: after publishing, the one its
  // own push made (the anchor), not the one fetched before.
  if (report.published.length) report.commit = readAnchor(link.rp)?.commit ?? report.commit;
  return report;
}

/**
 * `ledger sync --accept-remote`: a person reviewed the evidence of a fork or rollback and takes
 * the remote as it is. It is verified whole from genesis against the trust file; the local copy
 * is brought to it only when the local copy is a prefix of it (else the local copy is kept and
 * the person is told to move it aside and join again: the ledger is never cut back here).
 */
export function acceptRemote(ctx: RemoteContext, store: StoreOptions, trust: Trust, now: Date): { seq: number; commit: string; adopted: number } {
  const ops = store.ops ?? realFileOps;
  const paths = ledgerPaths(store.dir, store.guard?.stateDir, store.cache);
  assertStrictRoot(paths.dir);
  const lock = acquireLock(ops, paths.lock, store.waitMs ?? 10_000);
  try {
    ensureRepo(ctx.rp.repo);
    const tip = fetchLedgerRef(ctx.rp.repo, ctx.join.url, ctx.join.ref);
    if (!tip) throw new LedgerError('OP_REMOTE', `the remote ${ctx.join.url} has no ${ctx.join.ref}; there is nothing to accept`, {}, 'restore the ref on the remote, or join another');
    const v = verifyRemote(ctx.rp.repo, tip, null, [], trust, now.getTime());
    const local = readHeadWithBytes(ops, paths);
    let adopted = 0;
    if (local) {
      const prefix = local.head.genesis === v.head.genesis && local.head.seq <= v.head.seq && idOfLine(v.lines[local.head.seq]) === local.head.tail;
      if (!prefix) {
        throw new LedgerError('REMOTE_LINKAGE', `the local copy (seq ${local.head.seq}) is not part of the remote's ledger; it is kept as it is`, { kind: 'fork' },
          `move ${paths.dir} aside (it stays evidence) and join again: \`ledger init --remote ${ctx.join.url}\``);
      }
      const fresh = v.lines.slice(local.head.seq + 1);
      adoptBlobs(ctx.rp.repo, tip, paths.dir, blobsNamedBy(fresh));
      if (fresh.length) adoptPublished(ops, paths, local, Buffer.concat(fresh), v.headBytes, v.checkpoint);
      else adoptCheckpoint(ops, paths, v.head, v.checkpoint);
      adopted = fresh.length;
    }
    const last = v.lines[v.lines.length - 1];
    writeAnchor(ctx.rp, { v: 1, genesis: v.head.genesis, seq: v.head.seq, tail: v.head.tail, size: v.head.size, ts: tsOf(last), commit: tip });
    clearHold(ctx.rp);
    return { seq: v.head.seq, commit: tip, adopted };
  } finally {
    lock.release();
  }
}

const idOfLine = (line: Buffer): string => verifiedLine(line).id;

/** What `status`, `resume` and `doctor` say about the remote, without touching the network. */
export interface RemoteSummary {
  url: string;
  ref: string;
  anchor: { seq: number; commit: string } | null;
  /** Queued --offline writes not yet published. */
  outbox: number;
  hold: { kind: string; evidence: string } | null;
  /** in-sync: the local copy is the anchor; ahead: writes wait in the outbox; held: a fork or rollback. */
  state: 'in-sync' | 'ahead' | 'behind' | 'held';
  /** SPEC 13: the witnesses that did not cosign this machine's last publication (away, refused, holding more). */
  witnessesAway: { seq: number; at: string; names: string[] } | null;
}

export function summarizeRemote(ctx: RemoteContext, localSeq: number | null): RemoteSummary {
  const anchor = readAnchor(ctx.rp);
  const hold = readHold(ctx.rp);
  const outbox = readOutbox(ctx.rp).length;
  const state = hold ? 'held' : outbox ? 'ahead' : anchor && localSeq !== null && localSeq < anchor.seq ? 'behind' : 'in-sync';
  const w = readWitnessReport(ctx.rp);
  const away = w ? w.outcomes.filter((o) => o.outcome !== 'cosigned' && o.outcome !== 'no-url').map((o) => `${o.witness} (${o.outcome})`) : [];
  return { url: ctx.join.url, ref: ctx.join.ref, anchor: anchor ? { seq: anchor.seq, commit: anchor.commit } : null, outbox, hold: hold ? { kind: hold.kind, evidence: hold.evidence } : null, state, witnessesAway: away.length ? { seq: w!.seq, at: w!.at, names: away } : null };
}

