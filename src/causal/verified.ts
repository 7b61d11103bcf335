// Reading one record that a decision relies on, and verifying it from its bytes alone: the
// index (or anyone else) only says where to look. Issue 4: "with a floor, the records the
// decision relies on are still verified individually: hash, signature, pin, link".
//
//   hash       the line is canonical JSON of a schema-valid record at the expected seq, and its id
//              is recomputed (SPEC 4)
//   signature  strict Ed25519 by its own sig.key over its id (SPEC 4)
//   pin        that key may sign this agent's records at this seq in the trust file (SPEC 7)
//   link       its prev_tail_hash is the id of the line before it, and the line after it (or
//              HEAD's tail, for the last record) links back to it (SPEC 4, SPEC 5)
//
// Attacker-controlled input: every byte read here comes from records.jsonl.
import { LineProblem, decodeRecordLine } from '../record-line.js';
import { lineEndingAt, linesForward, openToRead } from '../fs/lines.js';
import { realFileOps, type FileOps } from '../fs/ops.js';
import type { Trust } from '../keys/trust.js';
import { acceptProblem, pinOf, type Grants } from '../keys/grants.js';
import { grantsAt } from '../store/grants.js';
import type { Head, LedgerRecord } from '../record.js';
import { verifySig, type KeyMemo } from '../sign.js';
import type { LedgerPaths } from '../store/paths.js';

export interface VerifiedRecord {
  seq: number;
  offset: number;
  id: string;
  record: LedgerRecord;
}

/** A record that failed verification: a finding, never an exception the CLI reports as a crash. */
export class RecordProblem extends Error {
  constructor(readonly seq: number, readonly offset: number, reason: string) {
    super(reason);
    this.name = 'RecordProblem';
  }
}

/** A line read from records.jsonl: its bytes (without the newline), where it starts and ends. */
interface Line { bytes: Buffer; start: number; end: number }

// Records are usually well under 4 KiB: the first read of a line is that long, then grows.
const FIRST_READ = 4096;

export class RecordReader {
  private fd: number | null = null;
  // What this reader verified, for the one HEAD it reads at: working memory of one decision,
  // dropped with the reader (not a cache: ../cache/README.md).
  private readonly cache = new Map<number, VerifiedRecord>();
  private readonly keys: KeyMemo = new Map();
  private grants: Grants | null = null;

  constructor(
    private readonly paths: LedgerPaths,
    readonly head: Head,
    /** null: skip the pin check (a writer checking its own ledger for retries, not a gate). */
    private readonly trust: Trust | null,
    private readonly ops: FileOps = realFileOps,
  ) {}

  private file(): number {
    if (this.fd === null) this.fd = openToRead(this.ops, this.paths.records);
    return this.fd;
  }

  /** The keys `key` records authorized through this HEAD, when the caller has them (the gate: its audit's). */
  useGrants(grants: Grants): void {
    this.grants = grants;
  }

  close(): void {
    if (this.fd !== null) this.ops.close(this.fd);
    this.fd = null;
  }

  /**
   * The line starting at `start`, or null when there is no whole line of at most 1 MiB there
   * within HEAD's size: the reader's refusal is this record's finding, not a crash.
   */
  private lineAt(start: number): Line | null {
    if (start < 0 || start >= this.head.size) return null;
    try {
      for (const { bytes } of linesForward(this.ops, this.file(), this.paths.records, start, this.head.size, FIRST_READ)) {
        return { bytes, start, end: start + bytes.length + 1 }; // the reader stops here: its buffer stays ours
      }
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'OP_CORRUPT') throw e;
    }
    return null;
  }

  /** The line that ends at `end` (whose newline is at end - 1), or null as for lineAt. */
  private lineBefore(end: number): Line | null {
    if (end <= 0) return null;
    try {
      const { bytes, offset } = lineEndingAt(this.ops, this.file(), this.paths.records, end);
      return { bytes, start: offset, end };
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'OP_CORRUPT') throw e;
      return null;
    }
  }

  /**
   * The id of the line before `offset`, which must be record seq - 1 (record-line.ts: UTF-8,
   * canonical). Only its id and seq matter for the link: a line that is not what it claims
   * cannot have the id the next record names.
   */
  private idBefore(offset: number, seq: number, fail: (why: string) => RecordProblem): string {
    const prevLine = this.lineBefore(offset);
    if (!prevLine) throw fail('has no line before it');
    const prev = decodeRecordLine(prevLine.bytes, { seq: seq - 1 });
    if (prev instanceof LineProblem) throw fail(`follows a line that is not record seq ${seq - 1}`);
    return prev.id;
  }

  /** Reads and verifies record `seq` whose line starts at `offset`; throws RecordProblem. */
  read(seq: number, offset: number): VerifiedRecord {
    const hit = this.cache.get(seq);
    if (hit && hit.offset === offset) return hit;
    const fail = (why: string) => new RecordProblem(seq, offset, `the record at seq ${seq} ${why}`);
    if (seq > this.head.seq) throw fail(`is past HEAD (seq ${this.head.seq})`);
    const line = this.lineAt(offset);
    if (!line) throw fail(`has no complete line at byte ${offset} within HEAD's size`);
    // hash: the line is canonical, schema-valid and the record at `seq`; its id is recomputed (SPEC 4).
    const decoded = decodeRecordLine(line.bytes, { seq, schema: true });
    if (decoded instanceof LineProblem) throw new RecordProblem(seq, line.start, `the record at seq ${seq} (byte ${line.start}) ${decoded.why}`);
    const { record, id } = decoded;
    // signature
    if (!verifySig('record', id, record.sig, this.keys)) throw fail(`(${id}) has a signature that does not verify`);
    // pin
    if (this.trust) {
      // SPEC 7: a key that is not pinned may be one an admin's `key` record authorized.
      if (!pinOf(this.trust, record.sig.key)) this.grants ??= grantsAt(this.paths, this.head, this.trust, this.ops);
      const why = acceptProblem(this.trust, this.grants, record.sig.key, seq, record.agent);
      if (why) throw fail(`(${id}) fails the key pin: ${why}`);
    }
    // link, backwards
    if (seq === 0) {
      if (record.prev_tail_hash !== null || id !== this.head.genesis) throw fail('is not the genesis that HEAD names');
    } else {
      const prevId = this.cache.get(seq - 1)?.id ?? this.idBefore(offset, seq, fail);
      if (record.prev_tail_hash !== prevId) throw fail(`does not link to the record before it (prev_tail_hash is not ${prevId})`);
    }
    // link, forwards
    if (seq === this.head.seq) {
      if (id !== this.head.tail || line.end !== this.head.size) throw fail(`is HEAD's seq but not HEAD's tail ${this.head.tail}`);
    } else {
      const next = this.lineAt(line.end);
      // Policy: the line after must be a record (UTF-8, canonical: SPEC 4), not merely text that
      // decodes to one: a lossy UTF-8 twin of the next record is not a link (issue 13, 17).
      const linksBack = next !== null && !(decodeRecordLine(next.bytes, { seq: seq + 1, prev: id, needId: false }) instanceof LineProblem);
      if (!linksBack) throw fail(`(${id}) is not linked to by the record after it`);
    }
    const out = { seq, offset, id, record };
    this.cache.set(seq, out);
    return out;
  }
}
