// The library API: open a ledger, append, read, head. The CLI is a thin layer over this.
import { LedgerError } from './errors.js';
import { readSecretKey } from './keys/key-file.js';
import type { Draft, Head, Kind } from './record.js';
import { createSigner, type Signer } from './sign.js';
import { appendDrafts, initLedger, recoverLedger, transact, type AppendResult, type LockedView, type StoreOptions } from './store/append.js';
import { realFileOps, type FileOps } from './fs/ops.js';
import { readHead } from './store/head.js';
import { ledgerPaths, type LedgerPaths } from './store/paths.js';
import { readRecords, type RecordAt } from './store/read.js';
import type { RecoverReport } from './store/recover.js';

export interface OpenOptions {
  /** The ledger directory (default `.ledger`). */
  dir?: string;
  /** A secret key file path, a 32-byte seed, or a Signer; needed only to write. */
  key?: string | Uint8Array | Signer;
  /** How long a writer waits for a live lock holder, in ms (default 10 000). */
  waitMs?: number;
  now?: () => Date;
  /** The file-operation seam (tests inject faults through it). */
  ops?: FileOps;
}

export interface LogFilter { op?: string; kind?: Kind; limit?: number }

function toSigner(key: OpenOptions['key']): Signer | null {
  if (key === undefined) return null;
  if (typeof key === 'string') return createSigner(readSecretKey(key).seed);
  if (key instanceof Uint8Array) return createSigner(key);
  return key;
}

export class Ledger {
  readonly paths: LedgerPaths;
  private readonly opts: StoreOptions;
  private readonly keyOpt: OpenOptions['key'];
  private signerCache: Signer | null = null;

  private constructor(opts: OpenOptions) {
    this.paths = ledgerPaths(opts.dir ?? '.ledger');
    this.opts = { dir: this.paths.dir, ops: opts.ops ?? realFileOps, waitMs: opts.waitMs, now: opts.now };
    this.keyOpt = opts.key;
  }

  /** Opens an existing ledger. Nothing is read until a method needs it. */
  static open(opts: OpenOptions = {}): Ledger {
    return new Ledger(opts);
  }

  /** Creates a ledger with its genesis record; refuses if one exists. */
  static init(opts: OpenOptions & { agent: string; name?: string }): { ledger: Ledger; result: AppendResult } {
    const ledger = new Ledger(opts);
    const result = initLedger(ledger.opts, ledger.signer(), opts.agent, opts.name);
    return { ledger, result };
  }

  /** The signer for writes; throws USAGE when the ledger was opened without a key. */
  signer(): Signer {
    if (!this.signerCache) {
      this.signerCache = toSigner(this.keyOpt);
      if (!this.signerCache) throw new LedgerError('USAGE', 'writing needs a key: pass --key, set LEDGER_KEY, or open the ledger with { key }');
    }
    return this.signerCache;
  }

  /** The published HEAD (checked: canonical, well-formed, signature verifies). */
  head(): Head {
    const head = readHead(this.opts.ops!, this.paths);
    if (!head) throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${this.paths.dir} (no HEAD); run \`ledger init\` or pass --dir`, { dir: this.paths.dir });
    return head;
  }

  /** Appends one draft, or several as one all-or-nothing batch. */
  append(drafts: Draft | readonly Draft[]): AppendResult {
    return appendDrafts(this.opts, this.signer(), Array.isArray(drafts) ? drafts : [drafts as Draft]);
  }

  /** Decides under the writer lock what to append, and appends it in the same critical section. */
  transact(decide: (view: LockedView) => readonly Draft[]): AppendResult {
    return transact(this.opts, this.signer(), decide);
  }

  /** Every published record in order (never bytes past HEAD). */
  *records(head: Head = this.head()): Generator<RecordAt> {
    yield* readRecords(this.paths, head, 0, 0, this.opts.ops);
  }

  /** A record by id (`sha256:…`) or seq; null when the ledger has no such record. */
  get(ref: string | number): RecordAt | null {
    const head = this.head();
    if (typeof ref === 'number') {
      if (!Number.isSafeInteger(ref) || ref < 0 || ref > head.seq) return null;
      for (const r of this.records(head)) if (r.seq === ref) return r;
      return null;
    }
    for (const r of this.records(head)) if (r.id === ref) return r;
    return null;
  }

  /** Records matching the filter, newest first, at most `limit` (default 20). */
  log(filter: LogFilter = {}): RecordAt[] {
    const limit = filter.limit ?? 20;
    const out: RecordAt[] = [];
    for (const r of this.records()) {
      if (filter.kind && r.record.kind !== filter.kind) continue;
      if (filter.op && (r.record as { logical_operation_id?: string }).logical_operation_id !== filter.op) continue;
      out.push(r);
      if (out.length > limit) out.shift();
    }
    return out.reverse();
  }

  /** Moves unpublished bytes past HEAD into quarantine/ (dryRun: only reports them). */
  recover(opts: { dryRun?: boolean } = {}): RecoverReport {
    return recoverLedger(this.opts, opts.dryRun ?? false);
  }
}

/**
 * Ledger.transact for the causal layer, whose `decide` returns some of `checked`: drafts it
 * validated with assertDrafts just before, in the same synchronous call. Those are not validated
 * a second time; any other draft `decide` returns still is. Internal: src/index.ts does not
 * export it, and the package exports nothing else, so no caller outside this code can claim
 * that drafts were checked.
 */
export function transactChecked(ledger: Ledger, decide: (view: LockedView) => readonly Draft[], checked: readonly Draft[]): AppendResult {
  return transact(ledger['opts'], ledger.signer(), decide, checked);
}
