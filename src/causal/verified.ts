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
import { closeSync, openSync, readSync } from 'node:fs';
import { canonicalLine } from '../canonical.js';
import { lineId } from './record-index.js';
import type { Trust } from '../keys/trust.js';
import { pinProblem } from '../keys/trust.js';
import { MAX_LINE_BYTES, recordProblems, type Head, type LedgerRecord } from '../record.js';
import { verifySig } from '../sign.js';
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

interface Line { text: string; start: number; end: number }

export class RecordReader {
  private fd: number | null = null;
  private readonly cache = new Map<number, VerifiedRecord>();

  constructor(
    private readonly paths: LedgerPaths,
    readonly head: Head,
    /** null: skip the pin check (a writer checking its own ledger for retries, not a gate). */
    private readonly trust: Trust | null,
  ) {}

  private file(): number {
    if (this.fd === null) this.fd = openSync(this.paths.records, 'r');
    return this.fd;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** The line starting at `start` (without its newline), or null when it does not end by HEAD's size. */
  private lineAt(start: number): Line | null {
    if (start < 0 || start >= this.head.size) return null;
    // Records are usually well under 4 KiB; a longer one is read again at its full bound.
    for (const max of [4096, MAX_LINE_BYTES]) {
      const len = Math.min(max, this.head.size - start);
      const buf = Buffer.allocUnsafe(len);
      const n = readSync(this.file(), buf, 0, len, start);
      const nl = buf.subarray(0, n).indexOf(0x0a);
      if (nl >= 0) return { text: buf.toString('utf8', 0, nl), start, end: start + nl + 1 };
      if (n < len || len < max) return null;
    }
    return null;
  }

  /** The line that ends just before `end` (whose newline is at end - 1). */
  private lineBefore(end: number): Line | null {
    if (end <= 0) return null;
    // Read a window before `end`, growing it until it holds the previous newline (or byte 0).
    for (let win = 4096; ; win *= 4) {
      const lo = Math.max(0, end - 1 - win);
      const buf = Buffer.allocUnsafe(end - 1 - lo);
      const n = readSync(this.file(), buf, 0, buf.length, lo);
      if (n !== buf.length) return null;
      const nl = buf.lastIndexOf(0x0a);
      if (nl >= 0 || lo === 0) {
        const start = nl >= 0 ? lo + nl + 1 : 0;
        return { text: buf.toString('utf8', start - lo), start, end };
      }
      if (win > MAX_LINE_BYTES) return null;
    }
  }

  private parse(line: Line, seq: number): LedgerRecord {
    const fail = (why: string) => new RecordProblem(seq, line.start, `the record at seq ${seq} (byte ${line.start}) ${why}`);
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch {
      throw fail('is not JSON');
    }
    const problems = recordProblems(value);
    if (problems.length) throw fail(`is not a valid record (${problems[0]})`);
    if (canonicalLine(value) !== line.text + '\n') throw fail('is not canonical JSON');
    const rec = value as LedgerRecord;
    if (rec.seq !== seq) throw fail(`says seq ${rec.seq}`);
    return rec;
  }

  /**
   * The id of the line before `offset`, which must be record seq - 1. Only its id and seq matter
   * for the link: a line that is not what it claims cannot have the id the next record names.
   */
  private idBefore(offset: number, seq: number, fail: (why: string) => RecordProblem): string {
    const prevLine = this.lineBefore(offset);
    if (!prevLine) throw fail('has no line before it');
    let prev: unknown;
    try {
      prev = JSON.parse(prevLine.text);
    } catch {
      prev = null;
    }
    if (prev === null || typeof prev !== 'object' || (prev as { seq?: unknown }).seq !== seq - 1) throw fail(`follows a line that is not record seq ${seq - 1}`);
    try {
      return lineId(prevLine.text, prev);
    } catch {
      throw fail(`follows a line that is not record seq ${seq - 1}`);
    }
  }

  /** Reads and verifies record `seq` whose line starts at `offset`; throws RecordProblem. */
  read(seq: number, offset: number): VerifiedRecord {
    const hit = this.cache.get(seq);
    if (hit && hit.offset === offset) return hit;
    const fail = (why: string) => new RecordProblem(seq, offset, `the record at seq ${seq} ${why}`);
    if (seq > this.head.seq) throw fail(`is past HEAD (seq ${this.head.seq})`);
    const line = this.lineAt(offset);
    if (!line) throw fail(`has no complete line at byte ${offset} within HEAD's size`);
    const record = this.parse(line, seq);
    // hash: the line is canonical and schema-valid (parse), so its id is the digest of the line
    // without its sig member (lineId), the same value recordId computes, without a second JCS pass.
    const id = lineId(line.text, record);
    // signature
    if (!verifySig('record', id, record.sig)) throw fail(`(${id}) has a signature that does not verify`);
    // pin
    if (this.trust) {
      const why = pinProblem(this.trust, record.sig.key, seq, record.agent);
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
      let linksBack = false;
      try {
        const v = next ? (JSON.parse(next.text) as { seq?: unknown; prev_tail_hash?: unknown }) : null;
        linksBack = v !== null && v.seq === seq + 1 && v.prev_tail_hash === id;
      } catch {
        linksBack = false;
      }
      if (!linksBack) throw fail(`(${id}) is not linked to by the record after it`);
    }
    const out = { seq, offset, id, record };
    this.cache.set(seq, out);
    return out;
  }
}
