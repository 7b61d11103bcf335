// What the causal layer asks of a ledger at one HEAD: the records of an operation, the
// revocations of a record, the consumptions of a handoff, a record by id. The index says where
// they are; each one is read and verified from its bytes before it is returned (verified.ts).
// A record that fails verification is not returned: it is kept in `problems`, and a gate that
// sees any problem holds (it cannot tell what that record said).
import { removeTreeBelow } from '../fs/ops.js';
import { LedgerError, RUN_AUDIT } from '../errors.js';
import type { Grants } from '../keys/grants.js';
import type { Trust } from '../keys/trust.js';
import type { Head, LedgerRecord } from '../record.js';
import type { LedgerPaths } from '../store/paths.js';
import { consumeKey, consumerKey, idKey, identityKey, opKey, revokeKey, workKey } from './index/keys.js';
import { RecordIndex } from './index/record-index.js';
import { IndexDamaged, type Posting } from './index/segment-format.js';
import { RecordProblem, RecordReader, type VerifiedRecord } from './verified.js';

export type { VerifiedRecord } from './verified.js';

/** The kinds filed under an operation (checkpoints are progress, not outcomes or intents). */
export const OP_KINDS = ['start', 'intent', 'handoff', 'finish'] as const;
export const TERMINAL_KINDS = ['handoff', 'finish'] as const;

export function isTerminal(r: LedgerRecord): boolean {
  return r.kind === 'handoff' || r.kind === 'finish';
}

export interface ViewOptions {
  /** The trust file for the pin check; null skips it (a writer reading its own ledger). */
  trust: Trust | null;
  /** Whether the index may write segments (default true). */
  writeIndex?: boolean;
}

export class CausalView {
  /** Records that were found but failed verification. */
  readonly problems: RecordProblem[] = [];
  private index: RecordIndex;
  private readonly reader: RecordReader;

  private constructor(private readonly paths: LedgerPaths, readonly head: Head, private readonly opts: ViewOptions) {
    this.index = CausalView.openIndex(paths, head, opts);
    this.reader = new RecordReader(paths, head, opts.trust);
  }

  /** SPEC 7: the keys records authorized through HEAD, as the audit that vouched for it folded them. */
  useGrants(grants: Grants): void {
    this.reader.useGrants(grants);
  }

  private static openIndex(paths: LedgerPaths, head: Head, opts: ViewOptions): RecordIndex {
    try {
      return RecordIndex.open(paths, head, { write: opts.writeIndex });
    } catch (e) {
      if (!(e instanceof IndexDamaged)) throw e;
      return CausalView.rebuild(paths, head, opts);
    }
  }

  /**
   * Policy: a damaged index is thrown away whole and rebuilt from records.jsonl, without reading
   * any segment on disk again (one that could not be removed is not believed either).
   */
  private static rebuild(paths: LedgerPaths, head: Head, opts: ViewOptions): RecordIndex {
    if (opts.writeIndex !== false) {
      try {
        removeTreeBelow(RecordIndex.dirOf(paths));
      } catch {
        /* a read-only index directory: the fresh index below ignores it */
      }
    }
    return RecordIndex.open(paths, head, { write: opts.writeIndex, fresh: true });
  }

  static open(paths: LedgerPaths, head: Head, opts: ViewOptions): CausalView {
    return new CausalView(paths, head, opts);
  }

  close(): void {
    this.index.close();
    this.reader.close();
  }

  private lookup(key: string): Posting[] {
    try {
      return this.index.lookup(key);
    } catch (e) {
      if (!(e instanceof IndexDamaged)) throw e;
      this.index.close();
      this.index = CausalView.rebuild(this.paths, this.head, this.opts);
      try {
        return this.index.lookup(key);
      } catch (again) {
        // Damaged again right after a rebuild: someone is writing the index under us. Refuse.
        if (!(again instanceof IndexDamaged)) throw again;
        throw new LedgerError('OP_CORRUPT', `the index of ${this.paths.dir} is damaged again after a rebuild: ${again.message}`, {}, RUN_AUDIT);
      }
    }
  }

  /** Verified records under `key` that satisfy `keep` (the key's hash may collide). */
  private fetch(key: string, keep: (r: LedgerRecord, id: string) => boolean): VerifiedRecord[] {
    const out: VerifiedRecord[] = [];
    const seen = new Set<number>();
    for (const p of this.lookup(key)) {
      if (seen.has(p.seq)) continue;
      seen.add(p.seq);
      try {
        const v = this.reader.read(p.seq, p.offset);
        if (keep(v.record, v.id)) out.push(v);
      } catch (e) {
        if (!(e instanceof RecordProblem)) throw e;
        this.problems.push(e);
      }
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The start, intent, handoff and finish records of an operation, oldest first. */
  opRecords(op: string): VerifiedRecord[] {
    return this.fetch(opKey(op), (r) => (OP_KINDS as readonly string[]).includes(r.kind) && (r as { logical_operation_id?: string }).logical_operation_id === op);
  }

  /** The records of one kind of one execution of an operation (retry identity), oldest first. */
  sameExecution(kind: 'handoff' | 'intent', op: string, exec: string): VerifiedRecord[] {
    return this.fetch(identityKey(kind, op, exec), (r) => {
      const x = r as { logical_operation_id?: string; execution_id?: string };
      return r.kind === kind && x.logical_operation_id === op && x.execution_id === exec;
    });
  }

  /** The revoke records that name `target`, oldest first. */
  revocations(target: string): VerifiedRecord[] {
    return this.fetch(revokeKey(target), (r) => r.kind === 'revoke' && r.target === target);
  }

  /** The consume records that name `handoff`, oldest first. */
  consumptions(handoff: string): VerifiedRecord[] {
    return this.fetch(consumeKey(handoff), (r) => r.kind === 'consume' && r.handoff === handoff);
  }

  /**
   * A work item's records (start, checkpoint, finish, and later kinds that name a slug), oldest
   * first: what its owner and lease are folded from (handoff/workitems.ts).
   */
  workRecords(op: string): VerifiedRecord[] {
    const notWork = new Set(['intent', 'handoff', 'consume', 'consume_failed', 'revoke', 'genesis']);
    return this.fetch(workKey(op), (r) => !notWork.has(r.kind) && (r as { logical_operation_id?: string }).logical_operation_id === op);
  }

  /** One consumer's consume and consume_failed records of an operation, oldest first. */
  consumerRecords(op: string, consumer: string): VerifiedRecord[] {
    return this.fetch(consumerKey(op, consumer), (r) => {
      const x = r as { logical_operation_id?: string; consumer?: string };
      return (r.kind === 'consume' || r.kind === 'consume_failed') && x.logical_operation_id === op && x.consumer === consumer;
    });
  }

  /** The record with this id, or null when the ledger (up to this HEAD) has none. */
  byId(id: string): VerifiedRecord | null {
    return this.fetch(idKey(id), (_r, rid) => rid === id)[0] ?? null;
  }

  /** Problems found so far among records of these seqs (or all, when none given). */
  problemsSince(count: number): RecordProblem[] {
    return this.problems.slice(count);
  }
}
