// The Ledger: the library a caller uses, above the rules it applies. Every write goes through
// one of them, so a library caller can write only what `ledger` itself would write, and so only
// what the auditor accepts:
//   init                       the genesis record (a ledger has one; `append` refuses another)
//   append                     handoff, intent, revoke, with retry identity (causal/retry.ts);
//   handoff, intent, revoke      the same, one record from its request (requests/causal.ts)
//   start/checkpoint/finish    the handoff-log workflow with its ownership and lease rules
//                              (handoff/workflow.ts)
//   release/note               hand an item back, annotate one (handoff/release.ts, note.ts)
//   gate(op, { consumeAs })    the only way to a consume record (causal/gate-run.ts)
//   consumeFailed              the consumer's report that its action failed (causal/consume-failed.ts)
// and the reads: status, resume, log, get/resolve, pending, the views (render, check), audit.
// The CLI and the MCP server call these same methods with the requests of requests/, each checked
// once: by its builder (requests/checked.ts) or here, for a library caller's. Below them the
// store's transact decides and appends under the writer lock; it is not exposed, since a
// caller's decide function could return any draft.
import { basename, dirname, resolve } from 'node:path';
import { runAudit, type AuditOptions, type AuditReport } from '../audit/index.js';
import { canonicalJson, canonicalLine } from './canonical.js';
import { LedgerError, ioError } from './errors.js';
import { assertStrictRoot } from './fs/confine.js';
import { assertReplaceable, replaceFileDurable } from './fs/durable.js';
import { realFileOps, type FileOps } from './fs/ops.js';
import { readSecretKey } from './keys/key-file.js';
import type { Trust } from './keys/trust.js';
import { writerTrust, type TrustRef } from './store/head-guard.js';
import { trustAdd, trustList, trustRevoke, type ListedKey, type TrustAddRequest, type TrustRevokeRequest } from './causal/authorize.js';
export type { ListedKey } from './causal/authorize.js';
import { stateDirFrom, type Env } from './store/state-dir.js';
import { keepFloorTree, keepUserFloor, namedFloorTree, userFloorPath } from './store/user-floor.js';
import { KINDS, type Draft, type Evidence, type Head, type TrustFloor } from './record.js';
import { LedgerCache, cacheOn, cachesOff, withOff } from './cache/ledger-cache.js';
import type { KeySecret } from './handoff/secret-scan.js';
import { createSigner, type Signer } from './sign.js';
import { initLedger, notALedger, recoverLedger, type StoreOptions } from './store/append.js';
import { readHead } from './store/head.js';
import { nodeCrypto } from './node-crypto.js';
import { readCheckpointBeside, proveRecord, recordLineAt } from './store/prove.js';
import type { WitnessOutcome } from './witness/collect.js';
import type { WitnessedVerdict } from './witness/enforce.js';
import type { WitnessRule } from './witness/remote-check.js';
import { LEDGER_REF } from './remote/state.js';
import type { Policy } from './tlog/policy.js';
import { ledgerPaths, type LedgerPaths } from './store/paths.js';
import { assertPublishedChain, readRecords, type RecordAt } from './store/read.js';
import { recordsBackward } from './store/read-back.js';
import { parseRecordRef, recordAtSeq, recordById, resolveRecordRef, type LocateId, type RecordRef } from './store/ids.js';
import { RecordIndex } from './causal/index/record-index.js';
import { idKey } from './causal/index/keys.js';
import type { RecoverReport } from './store/recover.js';
import type { DoctorOptions, DoctorReport } from './project/doctor.js';
import { runGate, runGateAndConsume, type GateRun, type GateRunOptions } from './causal/gate-run.js';
import { reportConsumeFailed, type ConsumeFailedResult } from './causal/consume-failed.js';
import type { WorkItemFold } from './causal/work-lease.js';
import { leaseLive } from './handoff/lease.js';
import { foldWorkLog } from './handoff/workitems.js';
import { findPending, scanPending, type PendingEntry, type PendingReport } from './causal/pending.js';
import { appendCausal, type CausalAppendResult, type CausalAppended } from './causal/retry.js';
import { checkpointWork, digestEvidence, finishWork, startWork, type WorkResult, type WorkWriter, type WriteResult } from './handoff/workflow.js';
import { releaseWork, type ReleaseResult } from './handoff/release.js';
import { noteWork } from './handoff/note.js';
import { statusOf, type StatusReport } from './handoff/status.js';
import { readFolds, type Folds } from './handoff/fold-memo.js';
import { openItems, type WorkLog } from './handoff/workitems.js';
import type { ResumeReport } from './handoff/resume.js';
import type { ViewCheck, WrittenViews } from './handoff/views.js';
import { checkOnce } from './requests/checked.js';
import {
  checkCheckpoint, checkFinish, checkNote, checkRelease, checkStart,
  type CheckpointChecked, type CheckpointRequest, type FinishChecked, type FinishRequest, type NoteRequest, type ReleaseRequest, type StartChecked, type StartRequest,
} from './requests/work.js';
import {
  checkConsumeFailed, checkGate, checkHandoff, checkIntent, checkOp, checkRevoke,
  type ConsumeFailedRequest, type GateChecked, type GateRequest, type HandoffChecked, type HandoffRequest, type IntentRequest, type RevokeRequest,
} from './requests/causal.js';
import { checkLog, checkResume, checkStatus, type LogRequest, type ResumeChecked, type ResumeRequest, type StatusChecked, type StatusRequest } from './requests/read.js';
import { readTrust } from './keys/trust-file.js';
import type { RemoteLink } from './remote/link.js';
import { acceptRemote, joinedRemote, joinLedger, openRemoteLink, resolveRemoteUrl, summarizeRemote, syncLedger, type JoinResult, type RemoteContext, type RemoteSummary, type SyncReport } from './remote/sync.js';
import { describe as describeCurrency, readBudgetMs, refreshForRead, type Currency } from './remote/current.js';

export interface OpenOptions {
  /** The ledger directory (default `.ledger`). */
  dir?: string;
  /** A secret key file path, a 32-byte seed, or a Signer; needed only to write. */
  key?: string | Uint8Array | Signer;
  /** How long a writer waits for a live lock holder, in ms (default 10 000). */
  waitMs?: number;
  /** The clock (records never go back in time even if it does). */
  now?: () => Date;
  /** The file-operation seam of the store (tests inject faults through it). */
  ops?: FileOps;
  /**
   * The trust file (a path) or its parsed keys. A writer builds only on a HEAD signed by its own
   * key or by a key pinned here (SPEC 5); without it, only on its own. `recover` without a key
   * needs it. Default: none.
   */
  trust?: string | Trust;
  /**
   * The trust file a writer checks its own key against (SPEC 7) when no `trust` is given and the
   * ledger is not joined: the project's, for a verb that takes no --trust (note, release).
   */
  fallbackTrust?: string;
  /**
   * The per-user state directory (writer marks, the verified-chain memo: docs/guarantees.md "The
   * per-user state directory"). Default: the one `env` names.
   */
  stateDir?: string;
  /** The environment that names the state directory, and whether caches are used (LEDGER_NO_CACHE; default: process.env). */
  env?: Env;
  /** Whether this Ledger uses its caches (src/cache/); default: unless the environment sets LEDGER_NO_CACHE. */
  cache?: boolean;
  /**
   * A ledger joined to a git remote on this machine (`ledger init --remote`, SPEC 11) publishes
   * every write there before it returns. `offline`: when the remote cannot be reached, queue the
   * write in the outbox instead of refusing (it is not published until `sync`). The remote's
   * records are checked against `trust` when given, else the trust file named at join.
   */
  offline?: boolean;
  /** Told, in one line, when a write was queued (--offline) instead of published. */
  onRemoteNotice?: (text: string) => void;
  /** Told when a write was published to the remote (SPEC 13: a writer then asks its witnesses). */
  onPublished?: () => void;
}

/** `log`'s filter (requests/read.ts LogRequest). */
export type LogFilter = LogRequest;

/** One record of an append: the one written, or the identical one already there (`existing`). */
export type AppendedRecord = CausalAppended;
/** What `append` and `init` return: one entry per draft, in order. */
export type AppendResult = CausalAppendResult;

/** A gate's options beside its operation (requests/causal.ts GateRequest). */
export type GateCallOptions = Omit<GateRequest, 'op'>;

/**
 * What `resume` answers: one work item (`resume`, with its text), or, without a slug when the
 * asker does not own exactly one open item, the status (`reason` says why).
 */
export type ResumeAnswer =
  | { mode: 'resume'; slug: string; /** chosen as the asker's one open item */ own: boolean; report: ResumeReport; lines: string[] }
  | { mode: 'status'; reason: 'no-agent' | 'none' | 'several'; own: string[]; report: StatusReport };

/** `render`: where the views are (default: the folder that holds the ledger directory). */
export interface ViewsRequest {
  views?: string;
  /** Rewrite views that another ledger (another genesis) rendered. */
  adopt?: boolean;
  /** How long to wait for the views lock (default: the ledger's waitMs, else 10 s). */
  waitMs?: number;
}

export type LedgerAuditOptions = Omit<AuditOptions, 'dir' | 'now'> & { now?: number | Date };


/** The kinds `append` writes (docs/causal-handoffs.md "The kinds, and who writes them"). */
const APPEND_KINDS: ReadonlySet<string> = new Set(['handoff', 'intent', 'revoke']);
/** Who writes each other kind. */
const WRITTEN_BY: Readonly<Record<string, string>> = {
  genesis: '`ledger init` (Ledger.init): a ledger has exactly one',
  consume: '`ledger gate OP --consume-as CONSUMER` (ledger.gate()), which checks the gate first',
  start: '`ledger start` (ledger.start()), which applies the ownership and lease rules',
  checkpoint: '`ledger checkpoint` (ledger.checkpoint()), which applies the ownership and lease rules',
  finish: '`ledger finish` (ledger.finish()), which applies the ownership and lease rules',
  release: '`ledger release` (ledger.release()), which applies the ownership rules',
  note: '`ledger note` (ledger.note())',
  consume_failed: '`ledger consume-failed` (ledger.consumeFailed()), which checks who consumed it',
  key: '`ledger trust add` / `trust revoke` (ledger.trustAdd(), ledger.trustRevoke()), signed by an admin key of the trust file',
};

/**
 * Policy (issue 13 finding 2): every kind but handoff, intent and revoke goes through its own
 * verb's rules or not at all, a kind added later included (an allow-list fails closed). A kind
 * that is not a kind at all is left to the schema's refusal.
 */
function refuseOtherKinds(drafts: readonly Draft[]): void {
  drafts.forEach((d, i) => {
    const kind = (d as { kind?: unknown } | null)?.kind;
    if (typeof kind !== 'string' || APPEND_KINDS.has(kind) || !(KINDS as readonly string[]).includes(kind)) return;
    const where = drafts.length > 1 ? `payload ${i + 1}: ` : '';
    throw new LedgerError('INPUT_REFUSED', `${where}a ${kind} record is written only by ${WRITTEN_BY[kind] ?? `\`ledger ${kind}\`, with its own rules`}; append writes handoff, intent and revoke`, { kind });
  });
}

/**
 * SPEC 9's lease rule needs a work item as the handoff log folds it (handoff/workitems.ts) with
 * its one lease boundary (handoff/lease.ts); the causal layer sits below those, so the Ledger,
 * above both, hands this in (causal/work-lease.ts).
 */
const foldWorkItem: WorkItemFold = (records, op, now) => {
  const item = foldWorkLog(records).items.get(op);
  if (!item) return null;
  const start = item.entries.findLast((e) => e.record.kind === 'start' && e.record.execution_id === item.execution_id);
  return {
    open: item.status === 'open',
    owner: item.owner,
    execution_id: item.execution_id,
    lease_until: item.lease_until,
    live: item.lease_until !== null && leaseLive(item.lease_until, now),
    start_seq: start?.seq ?? -1,
  };
};

/** A store append's result as the façade reports one (none of these records is a retry). */
function asAppended(res: import('./store/append.js').AppendResult): AppendResult {
  return { records: res.records.map((r) => ({ ...r, existing: false })), appended: res.records.length, head: res.head, recovered: res.recovered };
}

export class Ledger {
  readonly paths: LedgerPaths;
  private readonly store: StoreOptions;
  private readonly keyOpt: OpenOptions['key'];
  private signerCache: Signer | null = null;
  private readonly clock: () => Date;

  private constructor(opts: OpenOptions) {
    const env = opts.env ?? process.env;
    this.env = env;
    // Speed: a Ledger given a key signs with node:crypto, so it loads it now, before its first
    // digest, and spends none in JavaScript first (canonical.ts sha256Hex: about 5M instructions
    // of `ledger start` on the field ledger).
    if (opts.key !== undefined) nodeCrypto();

    const stateDir = opts.stateDir ?? stateDirFrom(env);
    // StrictModes for the per-user state directory (issue 23: trusted without an owner or mode
    // check): what it says (marks, the anchor, the hold, the outbox) is believed only from a
    // folder that is this user's or root's and writable by no one else.
    assertStrictRoot(stateDir);
    // This Ledger's caches (src/cache/): LEDGER_NO_CACHE read here, once, and passed down.
    // Policy (speed): a Ledger given a key keeps no HEAD memo (store/head-memo.ts): it loads
    // node:crypto to sign anyway, where verifying HEAD costs about 0.1 ms, and a memo replaced by
    // rename just before the append's fsyncs would make them wait for it on ext4 (state-log.ts).
    const off = opts.cache ?? cachesOff(env);
    const cache = new LedgerCache(opts.key !== undefined && off !== false && off !== 'all' ? withOff(off, 'head-memo') : off, stateDir);
    this.paths = ledgerPaths(opts.dir ?? '.ledger', stateDir, cache);
    // A writer (it holds a key) reads nothing from a ledger directory someone else could write.
    if (opts.key !== undefined) assertStrictRoot(this.paths.dir);
    // SPEC 11: joined on this machine (the per-user state directory says so, not the ledger).
    this.remoteCtx = joinedRemote(this.paths.dir, stateDir);
    // Policy: a joined ledger's HEAD is signed by whichever machine published last, so its
    // writers check it against the trust file named at join unless one is given.
    const given = opts.trust ?? this.remoteCtx?.join.trust ?? opts.fallbackTrust;
    this.trustGiven = given;
    const trust: TrustRef = given === undefined ? null : typeof given === 'string' ? { path: resolve(given) } : { trust: given };
    this.store = { dir: this.paths.dir, ops: opts.ops ?? realFileOps, waitMs: opts.waitMs, now: opts.now, guard: { stateDir, trust }, cache };
    this.keyOpt = opts.key;
    this.clock = opts.now ?? (() => new Date());
    if (this.remoteCtx) {
      const path = this.remoteCtx.join.trust;
      const t = opts.trust;
      this.trustOf = () => (t === undefined ? readTrust(path) : typeof t === 'string' ? readTrust(t) : t);
      this.link = openRemoteLink(this.remoteCtx, this.trustOf, { offline: opts.offline, now: opts.now, onNotice: opts.onRemoteNotice, onAdopt: () => void (this.viewsBehind = true), onPublished: opts.onPublished });
      this.store.publisher = this.link;
    }
  }

  /** The trust file this ledger was opened with (or its join's), for a gate that names none. */
  private trustFile(): { trust: Trust; path?: string } {
    const t = this.trustGiven;
    if (t === undefined) throw new LedgerError('USAGE', 'the gate needs a trust file', {}, 'pass --trust FILE; a library caller gives { trust } to Ledger.open or to gate()');
    return typeof t === 'string' ? { trust: readTrust(t), path: t } : { trust: t };
  }

  private readonly trustGiven: string | Trust | undefined;
  private readonly env: Env;
  /** Set when the local copy took records from the remote since the views were last rendered. */
  private viewsBehind = false;
  private readonly remoteCtx: RemoteContext | null;
  private readonly link: RemoteLink | null = null;
  private readonly trustOf: () => Trust = () => {
    throw new LedgerError('USAGE', 'this ledger is not joined to a remote');
  };

  /** The remote this ledger is joined to on this machine, as known without the network; null when it is not joined. */
  remote(): RemoteSummary | null {
    if (!this.remoteCtx) return null;
    const head = readHead(this.store.ops!, this.paths);
    return summarizeRemote(this.remoteCtx, head ? head.seq : null);
  }

  /**
   * SPEC 11 "reads are current": in a ledger joined to a remote, fetches and verifies what is new
   * within `budgetMs` (default: LEDGER_FETCH_BUDGET, else 2 s; remote/current.ts) and says how
   * current the local copy is; past the budget, or with the remote away, it says how old it is.
   * Never throws; null when the ledger is not joined (the local copy is the ledger). Records
   * taken re-render the views (a failure there is in `warnings`).
   */
  async current(opts: { budgetMs?: number } = {}): Promise<{ currency: Currency; warnings: string[] } | null> {
    if (!this.link) return null;
    const currency = refreshForRead(this.link, this.store, opts.budgetMs ?? readBudgetMs(this.env), this.clock);
    return { currency, warnings: await this.viewsAfterAdoption() };
  }

  /** How current the local copy is, from what this machine knows, without the network (null: not joined). */
  currency(): Currency | null {
    return this.link ? describeCurrency(this.link, this.store, null, 0, this.clock()) : null;
  }

  /**
   * SPEC 11: the views follow the local copy. After records were taken from the remote (a sync,
   * a current read, a write that adopted first), HANDOFF.md and HANDOFF.yml are rendered again.
   * Policy: a failure is a warning (the record is the truth; `ledger render` repairs the views).
   */
  async viewsAfterAdoption(): Promise<string[]> {
    if (!this.viewsBehind) return [];
    this.viewsBehind = false;
    try {
      return (await this.renderViews()).warnings;
    } catch (e) {
      return [`the local copy took records from the remote but the views were not rewritten (${(e as Error).message.split('\n')[0]}); run \`ledger render\``];
    }
  }

  /**
   * `ledger sync`: fetch, verify from the anchor, update the local copy, and publish what the
   * outbox holds (each entry decided again on the remote's tail; one that conflicts now is
   * dropped and reported). With `acceptRemote`, after a fork or rollback a person reviewed:
   * re-anchor on the remote as it is, verified from genesis.
   */
  sync(opts: { acceptRemote?: boolean } = {}): SyncReport {
    if (!this.remoteCtx || !this.link) throw new LedgerError('USAGE', `the ledger at ${this.paths.dir} is not joined to a remote on this machine`, {}, 'join it with `ledger init --remote REMOTE`');
    if (opts.acceptRemote) acceptRemote(this.remoteCtx, this.store, this.trustOf(), this.clock());
    return syncLedger(this.link, { ...this.store, publisher: this.link }, () => (this.keyOpt === undefined ? null : this.signer()), this.trustOf);
  }

  /**
   * `ledger doctor`: read-only checks of the deployment around the ledger at `o.dir` (key, trust
   * file, pins, HEAD, unpublished bytes, git, lock, the views, a joined remote), each with its fix.
   */
  static async doctor(o: Omit<DoctorOptions, 'checkViews' | 'checkRemote'> & { env?: Env }): Promise<DoctorReport> {
    const [{ runDoctor }, { checkViews }, { remoteChecks }] = await Promise.all([import('./project/doctor.js'), import('./handoff/views.js'), import('./remote/doctor-checks.js')]);
    const { env, ...rest } = o;
    return runDoctor({ ...rest, checkViews, checkRemote: (ledger, seq) => remoteChecks(ledger, env ?? process.env, seq) });
  }

  /**
   * Issue 25 item 4: whether a git remote of the project at `root` holds a ledger (`init`
   * refuses a second genesis there), and the remote a teammate would join through.
   */
  static async otherLedgerRemote(root: string): Promise<{ held: { name: string; url: string } | null; likely: string | null }> {
    const { remoteHoldingLedger, likelyRemote } = await import('./remote/probe.js');
    const held = remoteHoldingLedger(root);
    return { held, likely: held ? held.name : likelyRemote(root) };
  }

  /** Opens an existing ledger. Nothing is read until a method needs it. */
  static open(opts: OpenOptions = {}): Ledger {
    return new Ledger(opts);
  }

  /** Creates a ledger with its genesis record; refuses if one exists. */
  static init(opts: OpenOptions & { agent: string; name?: string }): { ledger: Ledger; result: AppendResult } {
    const ledger = new Ledger(opts);
    const res = initLedger(ledger.store, ledger.signer(), opts.agent, opts.name);
    const result = { records: res.records.map((r) => ({ ...r, existing: false })), appended: res.records.length, head: res.head, recovered: res.recovered };
    return { ledger, result };
  }

  /**
   * Joins the ledger at `dir` to a git remote (`ledger init --remote`, SPEC 11): takes the
   * remote's ledger, verified from genesis against the trust file, or publishes this one's (or
   * a new genesis) when the remote has none. `remote` is a URL or path, or a remote name of the
   * repository at `cwd`. The trust file must be a path: it is re-read at every write.
   */
  static join(opts: OpenOptions & { remote: string; trust: string; agent: string; ref?: string; name?: string; cwd?: string }): { ledger: Ledger; result: JoinResult } {
    const probe = new Ledger({ ...opts, trust: undefined });
    const url = resolveRemoteUrl(opts.remote, opts.cwd ?? process.cwd());
    const result = joinLedger({ dir: probe.paths.dir, url, ref: opts.ref, trustPath: resolve(opts.trust), trust: readTrust(opts.trust), signer: probe.signer(), agent: opts.agent, name: opts.name, env: opts.env ?? process.env, now: opts.now, waitMs: opts.waitMs });
    return { ledger: new Ledger(opts), result };
  }

  /**
   * Ledger.join under a witness policy (SPEC 13): the remote's state is verified and put to the
   * policy's witnesses before anything is written (witness/remote-check.ts), and the join takes
   * exactly that commit. A state they do not stand behind is refused (exit 14, 11 or 12).
   */
  static async joinWitnessed(opts: OpenOptions & { remote: string; trust: string; agent: string; ref?: string; name?: string; cwd?: string; rule: WitnessRule }): Promise<{ ledger: Ledger; result: JoinResult }> {
    const probe = new Ledger({ ...opts, trust: undefined });
    const url = resolveRemoteUrl(opts.remote, opts.cwd ?? process.cwd());
    const trust = readTrust(opts.trust);
    const { witnessedRemoteTip } = await import('./witness/remote-check.js');
    const tip = await witnessedRemoteTip({ url, ref: opts.ref ?? LEDGER_REF, trust, rule: opts.rule, nowMs: (opts.now ?? (() => new Date()))().getTime() });
    const result = joinLedger({ dir: probe.paths.dir, url, ref: opts.ref, trustPath: resolve(opts.trust), trust, signer: probe.signer(), agent: opts.agent, name: opts.name, env: opts.env ?? process.env, now: opts.now, waitMs: opts.waitMs, expectTip: tip });
    return { ledger: new Ledger(opts), result };
  }

  /**
   * The key file, read once for this Ledger, with its checks (a missing, insecure, malformed or
   * non-regular key is refused): its signer and the secret the workflow scans for come from
   * the same bytes.
   */
  private keyFile(path: string): ReturnType<typeof readSecretKey> {
    return (this.keyRead ??= readSecretKey(path));
  }
  private keyRead: ReturnType<typeof readSecretKey> | undefined;

  /** The signer for writes; throws USAGE when the ledger was opened without a key. */
  private signer(): Signer {
    if (!this.signerCache) {
      const k = this.keyOpt;
      this.signerCache = k === undefined ? null : typeof k === 'string' ? createSigner(this.keyFile(k).seed) : k instanceof Uint8Array ? createSigner(k) : k;
      if (!this.signerCache) throw new LedgerError('USAGE', 'writing needs a key', {}, 'pass --key or set LEDGER_KEY; a library caller opens the ledger with { key }');
    }
    return this.signerCache;
  }

  /** What the rules below need of this ledger (causal/retry.ts LedgerWriter, handoff/workflow.ts WorkWriter). */
  private writer(): WorkWriter & { workItem: WorkItemFold } {
    return {
      paths: this.paths, store: this.store, signer: () => this.signer(), head: () => this.head(), now: this.clock, keySecret: () => this.keySecret(), workItem: foldWorkItem,
      // A joined ledger's advisory checks decide on the remote's state (a checkpoint of an item
      // another machine finished is refused before its test suite runs, not after).
      ...(this.link ? { refresh: () => void refreshForRead(this.link!, this.store, readBudgetMs(this.env), this.clock) } : {}),
    };
  }

  /** The key's secret as the workflow scans test output for it; null when only a Signer was given. */
  private keySecret(): KeySecret | null {
    const k = this.keyOpt;
    if (typeof k === 'string') {
      // The bytes scanned for are the bytes that were checked, and signed with (keyFile).
      const { seed, bytes } = this.keyFile(k);
      return { seed, file: bytes, path: resolve(k) };
    }
    if (k instanceof Uint8Array) return { seed: k, file: null, path: null };
    if (k === undefined) this.signer(); // the usual refusal: writing needs a key
    return null;
  }

  /**
   * SPEC 13: the checkpoint beside HEAD, verified under HEAD's key (its note text with any
   * cosignatures, its size and root), and the ledger's log verifier key.
   */
  treeCheckpoint(): { origin: string; vkey: string; note: string | null; size: number | null; root: string | null } {
    return readCheckpointBeside(this.store.ops!, this.paths, this.head());
  }

  /** SPEC 13: the C2SP tlog-proof of the record `ref` names (a seq, HEAD, an id or a prefix). */
  prove(ref: string): { seq: number; id: string; proof: string } {
    const at = this.resolve(ref, 'prove');
    const head = this.head();
    return { seq: at.seq, id: at.id, proof: proveRecord(this.store.ops!, this.paths, head, at, recordLineAt(this.store.ops!, this.paths, at.offset)) };
  }

  /**
   * SPEC 13, a writer after a publication: the checkpoint goes to the policy's witnesses (each
   * bounded by `timeoutMs`; absent past it), what they answered is kept for `status` and
   * `doctor`, and the cosignatures are published beside the checkpoint while the ref is still
   * this publication. Null when the ledger is not joined.
   */
  async witnessPublication(policy: Policy, timeoutMs: number): Promise<{ outcomes: WitnessOutcome[]; published: string } | null> {
    if (!this.remoteCtx) return null;
    const head = this.head();
    // Loaded when used: the witness client (node:http) costs no other command's start.
    const [{ collectCosignatures }, { noteWitnessReport, publishCosigned }] = await Promise.all([import('./witness/collect.js'), import('./remote/witnesses.js')]);
    const outcomes = await collectCosignatures(this.store.ops!, this.paths, policy, timeoutMs);
    noteWitnessReport(this.remoteCtx.rp, { v: 1, at: this.clock().toISOString(), seq: head.seq, outcomes: outcomes.map(({ witness, outcome, detail }) => ({ witness, outcome, detail })) });
    const published = outcomes.some((o) => o.outcome === 'cosigned') ? publishCosigned(this.store.ops!, this.paths, this.remoteCtx.rp, this.remoteCtx.join, this.clock(), this.store.waitMs) : 'skipped';
    return { outcomes, published };
  }

  /** SPEC 13: the checkpoint beside HEAD sent to the policy's witnesses; their cosignatures kept beside it. */
  async cosign(policy: Policy, timeoutMs: number): Promise<WitnessOutcome[]> {
    assertPublishedChain(this.store.ops!, this.paths, this.head());
    const { collectCosignatures } = await import('./witness/collect.js');
    return collectCosignatures(this.store.ops!, this.paths, policy, timeoutMs);
  }

  /** SPEC 13: whether the policy's quorum of witnesses stands behind HEAD (see witness/enforce.ts). */
  async witnessed(policy: Policy, o: { trust: Trust; nowMs: number; maxAgeMs: number | null; timeoutMs: number }): Promise<WitnessedVerdict> {
    const head = this.head();
    const { checkWitnessed, localWitnessInput } = await import('./witness/enforce.js');
    return checkWitnessed({ ...localWitnessInput(this.store.ops!, this.paths.dir, head), head, policy, ...o });
  }

  /** The published HEAD (checked: canonical, well-formed, signature verifies). */
  head(): Head {
    const head = readHead(this.store.ops!, this.paths);
    if (!head) throw notALedger(this.paths);
    return head;
  }

  /**
   * Appends handoff, intent and revoke records: one draft, or several as one all-or-nothing
   * batch. An identical retry of a handoff or intent (same operation, execution and claim)
   * returns the record that exists, `existing: true`; a different one is refused. A revoke must
   * name a handoff or finish. genesis, consume, start, checkpoint and finish are refused: init,
   * gate and the workflow methods write them, each with its own rules.
   */
  append(drafts: Draft | readonly Draft[]): AppendResult {
    const list = Array.isArray(drafts) ? (drafts as readonly Draft[]) : [drafts as Draft];
    refuseOtherKinds(list);
    return appendCausal(this.writer(), list);
  }

  /** Takes a work item (SPEC 10 `ledger start`); refused while another agent's lease is live. */
  async start(req: StartRequest | StartChecked): Promise<WorkResult<'start'>> {
    return startWork(this.writer(), checkOnce(req, checkStart));
  }

  /** Records a milestone of a work item this agent owns, renewing its lease (`ledger checkpoint`). */
  async checkpoint(req: CheckpointRequest | CheckpointChecked): Promise<WriteResult<'checkpoint'>> {
    return checkpointWork(this.writer(), checkOnce(req, checkCheckpoint));
  }

  /** Closes a work item this agent owns as a handoff the gate can accept (`ledger finish`). */
  async finish(req: FinishRequest | FinishChecked): Promise<WriteResult<'finish'>> {
    const c = checkOnce(req, checkFinish);
    // A record named as people type it (a seq, HEAD, a prefix) is the one record it names now;
    // the workflow decides under the lock whether it may be superseded.
    const supersedes = c.supersedes?.map((ref) => this.recordId(ref, '--supersedes'));
    return finishWork(this.writer(), supersedes === undefined ? c : { ...c, supersedes });
  }

  /** Hands a work item this agent owns back, open and unowned (`ledger release`). */
  async release(req: ReleaseRequest): Promise<ReleaseResult> {
    return releaseWork(this.writer(), checkOnce(req, checkRelease));
  }

  /** Adds anyone's note to an existing work item; takes no ownership (`ledger note`). */
  async note(req: NoteRequest): Promise<WorkResult<'note'>> {
    return noteWork(this.writer(), checkOnce(req, checkNote));
  }

  /**
   * One handoff (`ledger append handoff`), its evidence digested now and its supersedes resolved;
   * an identical retry (same operation, execution and claim) returns the record that exists.
   */
  handoff(req: HandoffRequest | HandoffChecked): AppendResult {
    const h = checkOnce(req, checkHandoff);
    const evidence = digestEvidence(this.paths, h.evidence, h.cwd, true);
    const supersedes = h.supersedes?.map((ref) => this.recordId(ref, '--supersedes'));
    return this.append({
      kind: 'handoff', agent: h.agent, logical_operation_id: h.op, execution_id: h.exec, outcome: h.outcome, evidence, invariants: h.invariants, depends_on: h.depends_on,
      ...(supersedes !== undefined ? { supersedes } : {}), ...(h.note !== undefined ? { note: h.note } : {}),
    });
  }

  /** One intent (`ledger append intent`): the external side effect an execution is about to have. */
  intent(req: IntentRequest): AppendResult {
    const i = checkOnce(req, checkIntent);
    return this.append({ kind: 'intent', agent: i.agent, logical_operation_id: i.op, execution_id: i.exec, action: i.action, ...(i.note !== undefined ? { note: i.note } : {}) });
  }

  /**
   * `ledger trust add` (SPEC 7): authorizes a machine's public key, for the agents named, with a
   * `key` record signed by this Ledger's key, which must be an admin key of the trust file.
   */
  trustAdd(req: TrustAddRequest): AppendResult {
    return asAppended(trustAdd(this.store, this.signer(), this.adminTrust(), req));
  }

  /** `ledger trust revoke NAME` (SPEC 7): the key stops being accepted after this record. */
  trustRevoke(req: TrustRevokeRequest): AppendResult {
    return asAppended(trustRevoke(this.store, this.signer(), this.adminTrust(), req));
  }

  /** `ledger trust list`: the pinned keys and the keys records authorized, with who and when. */
  trustList(): ListedKey[] {
    const head = this.head();
    assertPublishedChain(this.store.ops!, this.paths, head);
    return trustList(this.paths, head, this.adminTrust(), this.store.ops);
  }

  private adminTrust(): Trust {
    const t = writerTrust(this.store.guard!.trust);
    if (t === null) throw new LedgerError('USAGE', 'no trust file: the keys that may authorize others are the trust file\'s admin keys', {}, 'pass --trust FILE or set LEDGER_TRUST');
    return t;
  }

  /** Revokes a handoff or finish (`ledger revoke`): a gate on it holds from then on. */
  revoke(req: RevokeRequest): AppendResult {
    const r = checkOnce(req, checkRevoke);
    return this.append({ kind: 'revoke', agent: r.agent, target: this.recordId(r.target, 'revoke'), reason: r.reason });
  }

  /**
   * Evidence digested now (`--evidence NAME=SOURCE`, SPEC 6): each source a path, `file:PATH`,
   * `dir:PATH`, `git:REV` or `sha256:HEX`, inside this ledger's project; a relative path starts
   * at `cwd` (default: the working directory).
   */
  evidence(sources: Readonly<Record<string, string>>, cwd?: string): Record<string, Evidence> {
    return digestEvidence(this.paths, sources, cwd);
  }

  /** The work log and the outcome fold through `head`, from one pass (what status, resume and the hooks read). */
  folds(head: Head = this.head()): Folds {
    return readFolds(this.paths, head, { ops: this.store.ops });
  }

  /**
   * Issue 26.4: "did you mean `x`?" for a name this ledger does not hold, among its work items'
   * slugs or among every record's operation id, or null (nothing close, it is held, or the
   * ledger cannot be read). The distance library is loaded only here, on that path.
   */
  async nameSuggestion(name: string, among: 'slugs' | 'ops'): Promise<string | null> {
    let known: string[];
    try {
      if (among === 'slugs') known = [...this.folds().log.items.keys()];
      else {
        const ops = new Set<string>();
        for (const { record } of this.records()) {
          const op = (record as { logical_operation_id?: unknown }).logical_operation_id;
          if (typeof op === 'string') ops.add(op);
        }
        known = [...ops];
      }
    } catch {
      return null;
    }
    if (known.includes(name)) return null; // it exists: its own refusal says what is wrong
    const { closest, didYouMean } = await import('./text/suggest.js');
    const { distance } = await import('fastest-levenshtein');
    return didYouMean(closest(distance, name, known), (n) => n);
  }

  /** The work log and the status from one fold (what a hook reads: `agent`'s own items first). */
  workState(req: StatusRequest | StatusChecked = {}): { log: WorkLog; status: StatusReport } {
    const { agent, now } = checkOnce(req, checkStatus);
    const { log, outcomes } = this.folds();
    return { log, status: statusOf(log, outcomes, agent, now ?? this.clock()) };
  }

  /** Whether this ledger is joined to a git remote on this machine (SPEC 11); reads nothing. */
  joined(): boolean {
    return this.remoteCtx !== null;
  }

  /** What is open, who holds it, what waits (`ledger status`); `agent`'s own items first. */
  status(req: (StatusRequest | StatusChecked) & { head?: Head } = {}): StatusReport {
    const { agent, now } = checkOnce(req, checkStatus);
    const { log, outcomes } = this.folds(req.head ?? this.head());
    return statusOf(log, outcomes, agent, now ?? this.clock());
  }

  /**
   * The short, bounded read for whoever takes a work item up (`ledger resume`, at most 80 lines
   * of text, `lead` first, after the line naming the asker's own item); without a slug, the
   * asker's own open item when there is exactly one, else the status.
   */
  async resume(req: ResumeRequest | ResumeChecked = {}, lead: readonly string[] = [], opts: { caller?: 'cli' | 'mcp' } = {}): Promise<ResumeAnswer> {
    const r = checkOnce(req, checkResume);
    const now = r.now ?? this.clock();
    const root = dirname(this.paths.dir);
    const [{ gitFacts }, { RESUME_MAX_LINES, buildResume, formatResume }] = await Promise.all([import('./handoff/git.js'), import('./handoff/resume.js')]);
    const { log, outcomes } = this.folds();
    let slug = r.slug;
    if (slug === null) {
      const own = r.agent === null ? [] : openItems(log).filter((i) => i.owner === r.agent).map((i) => i.slug);
      if (own.length !== 1) return { mode: 'status', reason: r.agent === null ? 'no-agent' : own.length === 0 ? 'none' : 'several', own, report: statusOf(log, outcomes, r.agent, now) };
      slug = own[0];
    }
    const bare = { now, root, ledgerDir: this.paths.dir, git: null, asker: r.agent, caller: opts.caller ?? 'cli' };
    // An unknown slug is refused before git is asked (handoff/git.ts gitFacts: one /bin/sh, waited for).
    if (!log.items.has(slug)) buildResume(log, slug, bare);
    const ctx = { ...bare, git: gitFacts(root) };
    const report = buildResume(log, slug, ctx);
    // The lead lines take lines of the 80-line budget: the last ones go when they would not fit.
    const first = [...(r.slug === null ? [`${r.agent}'s open item: ${slug}`] : []), ...lead];
    const text = formatResume(report, ctx);
    return { mode: 'resume', slug, own: r.slug === null, report, lines: first.length ? [...first, ...text].slice(0, RESUME_MAX_LINES) : text };
  }

  /** `ledger render`: rewrites HANDOFF.md and HANDOFF.yml from the ledger; `warnings` name edits kept beside them. */
  async renderViews(req: ViewsRequest = {}): Promise<WrittenViews & { warnings: string[] }> {
    const { defaultViewsDir, keptNotice, writeViews } = await import('./handoff/views.js');
    const written = writeViews(this.paths, req.views ?? defaultViewsDir(this.paths.dir), req.waitMs ?? this.store.waitMs ?? 10_000, this.clock(), req.adopt === true);
    return { ...written, warnings: written.kept.map(keptNotice) };
  }

  /** `ledger render --check`: whether both views are what the ledger renders now; writes nothing. */
  async checkViews(req: Pick<ViewsRequest, 'views'> = {}): Promise<{ ok: boolean; through: { seq: number; id: string } | null; views: ViewCheck[] }> {
    const { checkViews, defaultViewsDir } = await import('./handoff/views.js');
    return checkViews(this.paths, req.views ?? defaultViewsDir(this.paths.dir));
  }

  /**
   * May a consumer act on operation `op` now (SPEC 9)? With `consumeAs`, and only if the gate
   * passes, the consume record is appended under the writer lock in the same critical section.
   */
  gate(op: string, opts: GateCallOptions): GateRun;
  gate(req: GateRequest | GateChecked): GateRun;
  gate(opOrReq: string | GateRequest | GateChecked, opts?: GateCallOptions): GateRun {
    const g = checkOnce(typeof opOrReq === 'string' ? { ...opts, op: opOrReq } : opOrReq, checkGate);
    // A record named as people type it is the one it names now; a full id goes to the gate as typed.
    const expectHandoff = g.expectHandoff === null ? null : this.recordId(g.expectHandoff, '--handoff');
    const t = g.trust !== undefined ? { trust: g.trust, path: g.trustPath } : g.trustPath !== undefined ? { trust: readTrust(g.trustPath), path: g.trustPath } : this.trustFile();
    const o: GateRunOptions = {
      trust: t.trust,
      ...(t.path !== undefined ? { trustPath: t.path } : {}),
      floorPath: g.floorPath,
      accept: g.accept,
      requireInvariants: g.requireInvariants,
      maxAgeMs: g.maxAgeMs,
      allowOpaque: g.allowOpaque,
      expectHandoff,
      now: g.now ?? this.clock().getTime(),
    };
    if (g.consume === null) return runGate(this.writer(), o, g.op);
    return runGateAndConsume(this.writer(), { ...o, agent: g.consume.agent }, g.op, g.consume.consumer);
  }

  /**
   * The consumer's report that the action it took on a consumed handoff failed (`ledger
   * consume-failed`): `target` is the consume record's id, the handoff's id or the operation.
   * After it the gate lets that consumer consume the handoff again. Only the agent that wrote
   * the consume record, for the same consumer, may report it.
   */
  consumeFailed(req: ConsumeFailedRequest): ConsumeFailedResult;
  consumeFailed(target: string, opts: Omit<ConsumeFailedRequest, 'target'>): ConsumeFailedResult;
  consumeFailed(a: string | ConsumeFailedRequest, opts?: Omit<ConsumeFailedRequest, 'target'>): ConsumeFailedResult {
    return reportConsumeFailed(this.writer(), checkOnce(typeof a === 'string' ? { ...opts!, target: a } : a, checkConsumeFailed));
  }

  /** Executions with an intent or start and no terminal outcome since (`ledger pending`). */
  pending(opts: { op?: string; now?: number; head?: Head } = {}): PendingEntry[] {
    if (opts.op !== undefined) checkOp(opts.op);
    return findPending(this.paths, opts.head ?? this.head(), opts.now ?? this.clock().getTime(), opts.op);
  }

  /**
   * `ledger pending` in full, from one pass: the pending executions, and the ambiguous and
   * timed-out outcomes no later success or cancel resolved (causal/pending.ts).
   */
  pendingReport(opts: { op?: string; now?: number; head?: Head } = {}): PendingReport {
    if (opts.op !== undefined) checkOp(opts.op);
    return scanPending(this.paths, opts.head ?? this.head(), opts.now ?? this.clock().getTime(), opts.op);
  }

  /** `ledger audit` of this ledger: see auditLedger. */
  audit(opts: LedgerAuditOptions): Promise<AuditReport> {
    return auditLedger({ ...opts, dir: this.paths.dir });
  }

  /** Every published record in order (never bytes past HEAD). */
  *records(head: Head = this.head()): Generator<RecordAt> {
    yield* readRecords(this.paths, head, 0, 0, this.store.ops);
  }

  /**
   * A record by full id (`sha256:…`) or seq; null when the ledger has no such record. A seq costs
   * O(log n) short reads, an id what the derived index needs (store/ids.ts).
   */
  get(ref: string | number): RecordAt | null {
    const head = this.head();
    // Every read verb finds an edit in place (issue 13 finding 9), not only one in the record it
    // shows: the chain check believes the memo, so this costs the new bytes only.
    const checked = assertPublishedChain(this.store.ops!, this.paths, head);
    if (typeof ref === 'number') return recordAtSeq(this.paths, head, ref, this.store.ops, checked);
    return recordById(this.paths, head, ref, { ops: this.store.ops, locate: this.locator(head), checked });
  }

  /**
   * The record a person names (SPEC 10): a seq, `HEAD`, a full id, or a unique id prefix of at
   * least 8 hex digits, with or without `sha256:`. Throws USAGE for another form, INPUT_NOT_FOUND,
   * or INPUT_AMBIGUOUS listing the candidates.
   */
  resolve(ref: string | RecordRef, what = 'record'): RecordAt {
    // The form first: a malformed reference is refused before anything is read.
    const r = typeof ref === 'string' ? parseRecordRef(ref, what) : ref;
    const head = this.head();
    const checked = assertPublishedChain(this.store.ops!, this.paths, head);
    return resolveRecordRef(this.paths, head, r, { ops: this.store.ops, locate: this.locator(head), checked });
  }

  /** The derived index as a locator of full ids (causal/index: it only locates; store/ids.ts checks). */
  private locator(head: Head): LocateId {
    return (id) => {
      const index = RecordIndex.open(this.paths, head, { ops: this.store.ops });
      try {
        return index.lookup(idKey(id));
      } finally {
        index.close();
      }
    };
  }

  /**
   * The full id of the record `text` names (SPEC 10): a full id as typed (the rule that uses it
   * looks it up where it decides), or the one record a seq, HEAD or unique prefix names now.
   */
  recordId(text: string, what = 'record'): string {
    const ref = parseRecordRef(text, what);
    return ref.kind === 'id' ? ref.id : this.resolve(ref, what).id;
  }

  /** Records matching the filter, newest first, at most `limit` (default 20). */
  log(req: LogFilter = {}): RecordAt[] {
    const filter = checkOnce(req, checkLog);
    const limit = filter.limit ?? 20;
    const out: RecordAt[] = [];
    if (limit <= 0) return out;
    // Backwards from HEAD's tail (store/read-back.ts): reads back only to the limit-th match,
    // once the whole chain checks (finding 9; the memo makes that the new bytes only).
    const head = this.head();
    const checked = assertPublishedChain(this.store.ops!, this.paths, head);
    for (const r of recordsBackward(this.paths, head, this.store.ops, checked)) {
      if (filter.kind && r.record.kind !== filter.kind) continue;
      if (filter.op && (r.record as { logical_operation_id?: string }).logical_operation_id !== filter.op) continue;
      out.push(r);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Moves unpublished bytes past HEAD into quarantine/ (dryRun: only reports them), on a HEAD a
   * writer may build on: signed by the ledger's key if it was opened with one, else pinned in
   * the trust file, and not below any mark of this user (SPEC 5).
   */
  recover(opts: { dryRun?: boolean } = {}): RecoverReport {
    return recoverLedger(this.store, opts.dryRun ?? false, this.keyOpt === undefined ? null : this.signer().publicKey);
  }
}

/**
 * Audits a ledger (SPEC 8) with the independent auditor (audit/): `threads` 1 on this thread,
 * 'auto' (default) or more over worker threads when there is enough to check. With `advance`,
 * after a pass the floor file is replaced by the new HEAD (only when it moved), durably: the
 * auditor only reads, so the floor is written here. With `env` (whose state directory and
 * LEDGER_NO_CACHE apply), a floor file in SPEC 8's five fields gets this user's kept tree edge.
 */
export async function auditLedger(opts: Omit<AuditOptions, 'now'> & { now?: number | Date; env?: Env }): Promise<AuditReport> {
  // A floor that --advance would replace must be one it may replace (fs/durable.ts): a symbolic
  // link is refused before anything is read or written, not found out after the audit.
  if (opts.advance && opts.floorPath) assertReplaceable(realFileOps, resolve(opts.floorPath));
  // With `env` (the CLI's): a floor file in SPEC 8's five fields carries no tree edge, so this
  // user's kept one at that very floor is used and kept, as the gate does (store/user-floor.ts);
  // without it every audit from that floor hashes the whole tree for the checkpoint's root.
  const { env, ...audit } = opts;
  const state = env && opts.floorPath && cacheOn(cachesOff(env), 'floor') ? { dir: opts.dir, stateDir: stateDirFrom(env) } : null;
  const named = state ? namedFloorTree(state, opts.floorPath!, null, opts.trust) : null;
  const full = await runAudit({ ...audit, now: opts.now ?? Date.now(), ...(named ? { floorTree: named.tree, reportFloorTree: true } : {}) });
  const { floor_tree: edge, ...report } = full;
  if (named && edge && report.ok && report.floor) keepFloorTree(state!, named.path, report.floor, edge);
  if (report.advanced && opts.floorPath && !(report.floor && canonicalJson(report.floor) === canonicalJson(report.advanced))) keepFloor(opts.floorPath, report.advanced);
  return named && !opts.reportFloorTree ? report : full;
}

/**
 * After `ledger audit` without `--floor` passed: keeps `floor` (the report's `next_floor`) as this
 * user's floor for the ledger at `dir`, under `trust` (store/user-floor.ts), unless `env` turns the
 * `floor` cache off. Never throws: a floor not kept costs the next gate time, never an answer.
 */
export function keepAuditFloor(dir: string, env: Env, trust: Trust, floor: TrustFloor): void {
  if (!cacheOn(cachesOff(env), 'floor')) return;
  const paths = { dir, stateDir: stateDirFrom(env) };
  keepUserFloor(paths, userFloorPath(paths, floor.genesis, trust), floor);
}

/** Replaces the floor file by the durable recipe (fs/durable.ts): a crash leaves the old floor or the new. */
export function keepFloor(path: string, floor: TrustFloor): void {
  const abs = resolve(path);
  try {
    replaceFileDurable(realFileOps, dirname(abs), basename(abs), Buffer.from(canonicalLine(floor)));
  } catch (e) {
    throw ioError(e, 'write floor file', path);
  }
}

