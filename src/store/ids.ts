// Record ids as people type them (SPEC 10, issue 14.8): wherever a record id is taken, a seq
// number, `HEAD`, a full id, or a unique id prefix of at least 8 hex digits (with or without
// `sha256:`) names a record. The one resolver: every verb and the library go through it.
//
// What each form costs (a ledger may hold hundreds of thousands of records):
// - a seq or HEAD: O(log n) short reads, never the whole file: records.jsonl holds seq 0, 1, 2,
//   ... in order, so the line at a seq is found by bisecting byte offsets (`recordAtSeq`);
// - a full id: where a locator (the derived index, passed in by the caller) can say, the lines it
//   names; else one scan;
// - a prefix: one scan. Policy: the derived index files a record under a 64-bit hash of its whole
//   id (causal/index/keys.ts), so it cannot answer "which ids start with ..."; a prefix is typed
//   by a person, at a prompt, and a scan of records.jsonl is what it costs.
// Whatever located a record, it is shown only after it is read and checked from its bytes:
// canonical, its id recomputed, its seq the one expected, and linked: the next line's
// prev_tail_hash (or HEAD's tail, for the last record) names its id (SPEC 4, 5).
import { LedgerError, RUN_AUDIT } from '../errors.js';
import { MAX_LINE_BYTES, type Head } from '../record.js';
import { LineProblem, decodeRecordLine, lineError, readRecordLine } from '../record-line.js';
import { lineEndingAt, linesForward, openToRead } from '../fs/lines.js';
import { realFileOps, type FileOps, type FileStat } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';
import { assertTailIsLastLine, isCheckedFile, readRecords, type RecordAt } from './read.js';

/** A record reference as typed, checked for form only (nothing read yet). */
export type RecordRef =
  | { kind: 'seq'; seq: number; text: string }
  | { kind: 'head'; text: string }
  | { kind: 'id'; id: string; text: string }
  | { kind: 'prefix'; prefix: string; text: string };

/** The shortest prefix taken: 8 hex digits (32 bits) make an accidental match rare in any ledger. */
export const MIN_PREFIX_HEX = 8;
/** How many candidates an ambiguous prefix lists (the scan stops after one more). */
export const MAX_CANDIDATES = 10;

/** Where records with this full id may be (seq and line offset): a locator, never believed. */
export type LocateId = (id: string) => readonly { seq: number; offset: number }[];

const SEQ_RE = /^(0|[1-9][0-9]*)$/;
const HEX_RE = /^[0-9a-f]+$/;

/**
 * Reads the form of a reference. `what` names it in errors ("show", "--supersedes").
 * Policy: decimal digits without a leading zero are a seq (`show 12`), even when they are also 8+
 * hex digits; a prefix that happens to be all digits is written with `sha256:` in front. A trailing "…" or
 * "..." is dropped, since the short ids that outputs print end in one and are copied with it.
 * Hex is lowercase, as every id is printed. `HEAD` (so spelt, as in git) is the published tail.
 */
export function parseRecordRef(text: string, what: string): RecordRef {
  const t = text.endsWith('…') ? text.slice(0, -1) : text.endsWith('...') ? text.slice(0, -3) : text;
  if (t === 'HEAD') return { kind: 'head', text };
  if (SEQ_RE.test(t)) {
    if (!Number.isSafeInteger(Number(t))) throw new LedgerError('USAGE', `${what} expects a record; seq ${t} is past any ledger (seqs are safe integers)`, { ref: text });
    return { kind: 'seq', seq: Number(t), text };
  }
  const hex = t.startsWith('sha256:') ? t.slice(7) : t;
  if (HEX_RE.test(hex) && hex.length >= MIN_PREFIX_HEX && hex.length <= 64) {
    return hex.length === 64 ? { kind: 'id', id: `sha256:${hex}`, text } : { kind: 'prefix', prefix: `sha256:${hex}`, text };
  }
  const why = HEX_RE.test(hex) && hex.length < MIN_PREFIX_HEX ? `; an id prefix needs at least ${MIN_PREFIX_HEX} hex digits` : /[A-F]/.test(hex) && /^[0-9a-fA-F]+$/.test(hex) ? '; ids are lowercase hex' : '';
  throw new LedgerError('USAGE', `${what} expects a record: a seq number, HEAD, or a record id ("sha256:" + 64 lowercase hex) or its first ${MIN_PREFIX_HEX}+ hex digits; got "${text}"${why}`, { ref: text });
}

export interface ResolveOptions {
  ops?: FileOps;
  /** The derived index's answer for a full id; without it a full id costs a scan. */
  locate?: LocateId;
  /** The file's identity as the caller's chain check left it (read.ts isCheckedFile). */
  checked?: FileStat | null;
}

/** The one published record that `ref` names; INPUT_NOT_FOUND, or INPUT_AMBIGUOUS for a prefix of several. */
export function resolveRecordRef(paths: LedgerPaths, head: Head, ref: RecordRef, opts: ResolveOptions = {}): RecordAt {
  const ops = opts.ops ?? realFileOps;
  switch (ref.kind) {
    case 'head':
      return recordAtSeq(paths, head, head.seq, ops, opts.checked)!;
    case 'seq': {
      const r = recordAtSeq(paths, head, ref.seq, ops, opts.checked);
      if (r) return r;
      const prefixHint = ref.text.length >= MIN_PREFIX_HEX ? `; for an id prefix of only digits, write sha256:${ref.text}` : '';
      throw new LedgerError('INPUT_NOT_FOUND', `no published record at seq ${ref.seq} (HEAD is at seq ${head.seq})${prefixHint}`, { seq: ref.seq, head_seq: head.seq });
    }
    case 'id': {
      const r = recordById(paths, head, ref.id, opts);
      if (r) return r;
      throw new LedgerError('INPUT_NOT_FOUND', `no published record ${ref.id} in this ledger`, { id: ref.id });
    }
    case 'prefix': {
      const found = recordsByPrefix(paths, head, ref.prefix, ops);
      if (found.length === 1) return found[0];
      if (found.length === 0) throw new LedgerError('INPUT_NOT_FOUND', `no published record id starts with ${ref.prefix}`, { prefix: ref.prefix });
      const shown = found.slice(0, MAX_CANDIDATES);
      const more = found.length > MAX_CANDIDATES ? ', ...' : '';
      const candidates = shown.map((r) => ({ id: r.id, seq: r.seq, kind: r.record.kind }));
      throw new LedgerError(
        'INPUT_AMBIGUOUS',
        `${ref.prefix} is ambiguous: it starts ${found.length > MAX_CANDIDATES ? `more than ${MAX_CANDIDATES}` : found.length} record ids: ${candidates.map((c) => `${c.id.slice(0, Math.max(19, ref.prefix.length + 4))}… (seq ${c.seq}, ${c.kind})`).join(', ')}${more}`,
        { prefix: ref.prefix, candidates },
        'type more digits of the id, or give its seq',
      );
    }
  }
}

/**
 * The published record at `seq`, or null when `seq` is past HEAD. Bisects records.jsonl by byte
 * offset (seq is the line's number), reading O(log n) lines. A file whose lines are not where
 * their order says is OP_CORRUPT, as is one whose tail is not HEAD's (checked first, as every
 * reader does).
 */
export function recordAtSeq(paths: LedgerPaths, head: Head, seq: number, ops: FileOps = realFileOps, checked?: FileStat | null): RecordAt | null {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > head.seq) return null;
  const fd = openToRead(ops, paths.records);
  try {
    const size = ops.size(paths.records);
    if (size < head.size) throw new LedgerError('OP_CORRUPT', `${paths.records} has ${size} bytes but HEAD publishes ${head.size}`, {}, RUN_AUDIT);
    // The file whose chain the caller checked (`checked`): ids are the links (read.ts isCheckedFile).
    const linked = isCheckedFile(ops, fd, checked);
    const tail = assertTailIsLastLine(ops, paths, head, '', fd, linked);
    if (seq === head.seq) return tail;
    // Invariant: the line of `seq` starts in [lo, hi); lo is a line start, and so is hi.
    let lo = 0;
    let hi = tail.offset;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const line = lineAround(ops, fd, paths.records, mid, hi);
      const at = probeSeq(line.bytes, paths.records, line.offset);
      if (at === seq) return checkedLine(ops, fd, paths, head, line, seq, linked);
      if (at < seq) lo = line.offset + line.bytes.length + 1;
      else hi = line.offset;
    }
    throw new LedgerError('OP_CORRUPT', `${paths.records} has no line with seq ${seq} where its order puts one`, { seq }, RUN_AUDIT);
  } finally {
    ops.close(fd);
  }
}

/** The published record with this full id, or null. The locator's lines first; else a scan. */
export function recordById(paths: LedgerPaths, head: Head, id: string, opts: ResolveOptions = {}): RecordAt | null {
  const ops = opts.ops ?? realFileOps;
  if (opts.locate) {
    // Policy: the index only locates. A line it names is checked like any other; when none of
    // them is the record, the scan below decides, so a stale or damaged index can never make a
    // published record unfindable (or a wrong one shown).
    for (const p of opts.locate(id)) {
      const r = recordAtSeq(paths, head, p.seq, ops, opts.checked);
      if (r && r.id === id) return r;
    }
  }
  for (const r of readRecords(paths, head, 0, 0, ops)) if (r.id === id) return r;
  return null;
}

/** Every published record whose id starts with `prefix` (at most MAX_CANDIDATES + 1: then it is ambiguous anyway). */
export function recordsByPrefix(paths: LedgerPaths, head: Head, prefix: string, ops: FileOps = realFileOps): RecordAt[] {
  const out: RecordAt[] = [];
  for (const r of readRecords(paths, head, 0, 0, ops)) {
    if (!r.id.startsWith(prefix)) continue;
    out.push(r);
    if (out.length > MAX_CANDIDATES) break;
  }
  return out;
}

interface Line { bytes: Buffer; offset: number }

/** The line that holds byte `pos` (< `end`, where a line starts): the newline at or after `pos`, then back to its start. */
function lineAround(ops: FileOps, fd: number, path: string, pos: number, end: number): Line {
  const buf = Buffer.allocUnsafe(4096);
  for (let at = pos; at < end && at - pos < MAX_LINE_BYTES; ) {
    const n = ops.read(fd, buf.subarray(0, Math.min(buf.length, end - at)), at);
    if (n <= 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl >= 0) return lineEndingAt(ops, fd, path, at + nl + 1);
    at += n;
  }
  throw new LedgerError('OP_CORRUPT', `${path} has no line end after byte ${pos} before byte ${end}`, { path, offset: pos }, RUN_AUDIT);
}

/** The seq a line says it has (a probe of the bisection: parsed only, the full check comes later). */
function probeSeq(bytes: Buffer, path: string, offset: number): number {
  const got = decodeRecordLine(bytes, { chained: true, needId: false });
  if (got instanceof LineProblem || !Number.isSafeInteger(got.record.seq)) throw new LedgerError('OP_CORRUPT', `${path}: the line at byte ${offset} is not a record with a seq`, { path, offset }, RUN_AUDIT);
  return got.record.seq;
}

/**
 * The found line as a record: UTF-8, canonical, the seq asked for, and named by the next line's
 * prev_tail_hash. `linked` (read.ts isCheckedFile): the chain through HEAD was checked on this
 * very file, so its id is that link, taken instead of hashed.
 */
function checkedLine(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, line: Line, seq: number, linked: boolean): RecordAt {
  const { record, id: hashed } = readRecordLine(line.bytes, paths.records, line.offset, linked ? { seq, needId: false } : { seq });
  const nextOffset = line.offset + line.bytes.length + 1;
  const next = linesForward(ops, fd, paths.records, nextOffset, head.size, 4096).next();
  // The line after it is the record at the next seq, and links to this one.
  const after = next.done ? new LineProblem('link', 'is missing') : decodeRecordLine(next.value.bytes, { seq: seq + 1, ...(linked ? {} : { prev: hashed }), needId: false });
  if (after instanceof LineProblem) throw lineError(after, paths.records, nextOffset, seq + 1);
  const id = linked ? after.record.prev_tail_hash : hashed;
  if (typeof id !== 'string') throw lineError(new LineProblem('link', 'does not link to the record before it'), paths.records, nextOffset, seq + 1);
  return { seq, offset: line.offset, id, record };
}
