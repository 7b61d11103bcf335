// Builds valid ledgers of any size straight from the pure modules (canonical, sign), without the
// store: fast, deterministic (keys and nonces come from labels), and easy to bend into tampered
// variants. Used by the audit tests, the fixtures script and the benchmarks; other suites may use
// it too.
//
//   const led = buildLedger({ count: 10 });          // in memory: lines, head, trust
//   writeLedgerFiles(dir, serializeLedger(led));     // records.jsonl, HEAD, trust.json
//   streamLedger(dir, { count: 1_000_000 });         // straight to disk, constant memory
//
// Tampered variants: `edit` changes a record before it is signed (so its signature still
// verifies: the break is in linkage, pins or time), `signerFor` signs a record with another key,
// `headEdit` bends HEAD before it is signed; byte-level damage is done on `serializeLedger`'s
// buffers. `resignRecord` / `resignHead` re-sign anything by hand.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson, canonicalLine, digestOf, recordId, sha256Hex, toBase64url } from '../../src/canonical.js';
import type { Head } from '../../src/record.js';
import { createSigner, makeSig, type Signer } from '../../src/sign.js';
import type { Trust, TrustKey } from '../../src/keys/trust.js';

export type Json = Record<string, unknown>;

/** A 32-byte seed derived from a label: the same label always gives the same key. */
export function seedFrom(label: string): Uint8Array {
  return new Uint8Array(Buffer.from(sha256Hex(`handoff-ledger test key ${label}`), 'hex'));
}

const signerCache = new Map<string, Signer>();
/** The signer for a label (cached: building a node:crypto key object is not free). */
export function signerFor(label: string): Signer {
  let s = signerCache.get(label);
  if (!s) {
    s = createSigner(seedFrom(label));
    signerCache.set(label, s);
  }
  return s;
}

export interface KeySpec {
  /** The key's label: its seed is derived from it, and it is the trust entry's name. */
  name: string;
  /** First seq it signs (and its `valid_from_seq`); default 0. */
  fromSeq?: number;
  /** Trust entry `agents`; default ["*"]. */
  agents?: string[];
  /** Trust entry `revoked_at_seq`; default: the next key's fromSeq (a rotation done right). */
  revokedAtSeq?: number | null;
  /** Leave this key out of the trust file (an unpinned signer). */
  unpinned?: boolean;
}

export type PayloadKind = 'handoff' | 'checkpoint' | 'start' | 'finish' | 'intent' | 'revoke' | 'consume';

export interface LedgerSpec {
  /** Records in total, genesis included (>= 1). */
  count: number;
  /** Signing keys; a record is signed by the last key whose fromSeq <= seq. Default one "harness" key. */
  keys?: KeySpec[];
  /** The agent of each record; default "agent-1". */
  agent?: string | ((seq: number) => string);
  /** Payload kinds after genesis, cycled in order; default a workflow mix. */
  kinds?: readonly PayloadKind[];
  /** Genesis `ts`; default 2026-11-29T12:00:00.000Z. */
  start?: string;
  /** Milliseconds between consecutive records; default 1000. */
  stepMs?: number;
  /** Genesis `name`; default none. */
  name?: string;
  /** Label for the genesis nonce; default "nonce". */
  nonce?: string;
  /** HEAD's `ts`; default the last record's. */
  headTs?: string;
  /** Changes a record (without `sig`) before its id is computed and it is signed. */
  edit?: (unsigned: Json, seq: number) => Json;
  /** Signs record `seq` with another signer than its key's (or null to use the key's). */
  signerFor?: (seq: number) => Signer | null;
  /** Changes HEAD (without `sig`) before it is signed. */
  headEdit?: (unsigned: Json) => Json;
  /** Signs HEAD with another signer. */
  headSigner?: Signer;
}

export const DEFAULT_KINDS: readonly PayloadKind[] = ['start', 'checkpoint', 'handoff', 'intent', 'finish'];
export const DEFAULT_START = '2026-11-29T12:00:00.000Z';

interface ResolvedKey { name: string; fromSeq: number; agents: string[]; revokedAtSeq: number | null; unpinned: boolean }
interface Resolved {
  keys: ResolvedKey[];
  agent: (seq: number) => string;
  kinds: readonly PayloadKind[];
  startMs: number;
  stepMs: number;
}

function resolveSpec(spec: LedgerSpec): Resolved {
  if (!Number.isSafeInteger(spec.count) || spec.count < 1) throw new RangeError(`"count" expected an integer >= 1, got ${spec.count}`);
  const keys = (spec.keys ?? [{ name: 'harness' }]).map((k) => ({
    name: k.name,
    fromSeq: k.fromSeq ?? 0,
    agents: k.agents ?? ['*'],
    revokedAtSeq: k.revokedAtSeq,
    unpinned: k.unpinned ?? false,
  }));
  keys.sort((a, b) => a.fromSeq - b.fromSeq);
  const resolved = keys.map((k, i): ResolvedKey => ({
    ...k,
    revokedAtSeq: k.revokedAtSeq !== undefined ? k.revokedAtSeq : i + 1 < keys.length ? keys[i + 1].fromSeq : null,
  }));
  const agent = spec.agent ?? 'agent-1';
  return {
    keys: resolved,
    agent: typeof agent === 'function' ? agent : () => agent,
    kinds: spec.kinds ?? DEFAULT_KINDS,
    startMs: Date.parse(spec.start ?? DEFAULT_START),
    stepMs: spec.stepMs ?? 1000,
  };
}

function keyAt(r: Resolved, seq: number) {
  let key = r.keys[0];
  for (const k of r.keys) if (k.fromSeq <= seq) key = k;
  return key;
}

/** The trust file that pins the spec's keys (SPEC 7). */
export function trustFor(spec: LedgerSpec): Trust {
  const r = resolveSpec(spec);
  const keys: TrustKey[] = r.keys
    .filter((k) => !k.unpinned)
    .map((k) => ({ name: k.name, alg: 'ed25519', key: signerFor(k.name).publicKey, agents: k.agents, valid_from_seq: k.fromSeq, revoked_at_seq: k.revokedAtSeq }));
  return { v: 1, keys };
}

const h = (label: string) => digestOf(label);

/** A valid payload of `kind` for record `seq` (SPEC 6 and the project's kinds). */
export function payloadFor(kind: PayloadKind, seq: number, ts: string): Json {
  const op = `op-${Math.floor(seq / 5)}`;
  const exec = `exec-${seq}`;
  const lease = new Date(Date.parse(ts) + 3_600_000).toISOString();
  switch (kind) {
    case 'handoff':
      return {
        logical_operation_id: op,
        execution_id: exec,
        outcome: 'success',
        evidence: { schema: { digest: h(`schema ${seq}`), source: 'file:db/schema.sql' }, tests: { digest: h(`tests ${seq}`), source: 'file:test/out.log' } },
        invariants: { migrated: { ok: true, detail: 'all rows carried over' }, tests_pass: { ok: true, detail: '212 passed' } },
        depends_on: seq > 5 ? [{ logical_operation_id: `op-${Math.floor(seq / 5) - 1}`, outcome: 'success' }] : [],
      };
    case 'checkpoint':
      return {
        logical_operation_id: op,
        execution_id: exec,
        done: 'wrote the migration and its test',
        state: 'migration applies on a copy of production',
        next: 'run the migration on staging',
        verified: ['npm test: 212 passed'],
        attempted: ['load test (timed out)'],
        blockers: [],
        lease_until: lease,
      };
    case 'start':
      return { logical_operation_id: op, execution_id: exec, summary: 'take over the schema migration', lease_until: lease };
    case 'finish':
      return {
        logical_operation_id: op,
        execution_id: exec,
        done: 'migration applied',
        state: 'schema 17 live',
        next: 'drop the old column next week',
        verified: ['npm test: 212 passed'],
        attempted: [],
        blockers: [],
        outcome: 'success',
        evidence: { schema: { digest: h(`schema ${seq}`), source: 'file:db/schema.sql' } },
        invariants: { migrated: { ok: true, detail: 'all rows carried over' } },
        depends_on: [],
      };
    case 'intent':
      return { logical_operation_id: op, execution_id: exec, action: 'apply migration 17 to staging' };
    case 'revoke':
      return { target: h(`target ${seq}`), reason: 'evidence was stale' };
    case 'consume':
      return { logical_operation_id: op, consumer: 'deployer', handoff: h(`handoff ${seq}`), seen_head: { seq: Math.max(0, seq - 1), tail: h(`tail ${seq}`) } };
  }
}

/** Signs a record (without `sig`): returns the record with `sig`, its id and its line. */
export function resignRecord(unsigned: Json, signer: Signer): { record: Json; id: string; line: string } {
  const { sig: _drop, ...rest } = unsigned;
  const id = recordId(rest);
  const record = { ...rest, sig: makeSig('record', id, signer) };
  return { record, id, line: canonicalLine(record) };
}

/** Signs HEAD (without `sig`) and returns it with its canonical line. */
export function resignHead(unsigned: Json, signer: Signer): { head: Head; line: string } {
  const { sig: _drop, ...rest } = unsigned;
  const head = { ...rest, sig: makeSig('head', digestOf(canonicalJson(rest)), signer) } as unknown as Head;
  return { head, line: canonicalLine(head) };
}

export interface GeneratedRecord {
  seq: number;
  id: string;
  line: string;
  /** Byte length of `line` (UTF-8). */
  bytes: number;
  ts: string;
}

/** Every record of the spec, in order, one at a time (constant memory). */
export function* generateRecords(spec: LedgerSpec): Generator<GeneratedRecord> {
  const r = resolveSpec(spec);
  let prev: string | null = null;
  for (let seq = 0; seq < spec.count; seq++) {
    const ts = new Date(r.startMs + seq * r.stepMs).toISOString();
    const payload =
      seq === 0
        ? { nonce: toBase64url(Buffer.from(sha256Hex(`nonce ${spec.nonce ?? 'nonce'}`), 'hex').subarray(0, 16)), ...(spec.name !== undefined ? { name: spec.name } : {}) }
        : payloadFor(r.kinds[(seq - 1) % r.kinds.length], seq, ts);
    let unsigned: Json = { ...payload, v: 1, seq, prev_tail_hash: prev, ts, kind: seq === 0 ? 'genesis' : r.kinds[(seq - 1) % r.kinds.length], agent: r.agent(seq) };
    if (spec.edit) unsigned = spec.edit(unsigned, seq);
    const signer = spec.signerFor?.(seq) ?? signerFor(keyAt(r, seq).name);
    const { id, line } = resignRecord(unsigned, signer);
    prev = id;
    yield { seq, id, line, bytes: Buffer.byteLength(line), ts: typeof unsigned.ts === 'string' ? unsigned.ts : ts };
  }
}

function headFor(spec: LedgerSpec, r: Resolved, genesis: string, last: GeneratedRecord, size: number): { head: Head; line: string } {
  let unsigned: Json = { v: 1, genesis, seq: last.seq, tail: last.id, size, ts: spec.headTs ?? last.ts };
  if (spec.headEdit) unsigned = spec.headEdit(unsigned);
  return resignHead(unsigned, spec.headSigner ?? signerFor(keyAt(r, last.seq).name));
}

export interface BuiltLedger {
  lines: string[];
  ids: string[];
  /** Byte offset where each line starts. */
  offsets: number[];
  head: Head;
  headLine: string;
  trust: Trust;
}

/** A whole ledger in memory (for small ledgers and tampering). */
export function buildLedger(spec: LedgerSpec): BuiltLedger {
  const r = resolveSpec(spec);
  const lines: string[] = [];
  const ids: string[] = [];
  const offsets: number[] = [];
  let size = 0;
  let last: GeneratedRecord | null = null;
  for (const rec of generateRecords(spec)) {
    lines.push(rec.line);
    ids.push(rec.id);
    offsets.push(size);
    size += rec.bytes;
    last = rec;
  }
  const { head, line } = headFor(spec, r, ids[0], last!, size);
  return { lines, ids, offsets, head, headLine: line, trust: trustFor(spec) };
}

export interface LedgerFiles {
  records: Buffer;
  head: Buffer;
  trust: string;
}

export function serializeLedger(led: BuiltLedger): LedgerFiles {
  return { records: Buffer.from(led.lines.join('')), head: Buffer.from(led.headLine), trust: JSON.stringify(led.trust, null, 2) + '\n' };
}

/** Writes records.jsonl and HEAD into `dir` and trust.json beside them (or at `trustPath`). */
export function writeLedgerFiles(dir: string, files: LedgerFiles, trustPath = join(dir, 'trust.json')): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'records.jsonl'), files.records);
  writeFileSync(join(dir, 'HEAD'), files.head);
  writeFileSync(trustPath, files.trust);
}

export interface StreamedLedger {
  head: Head;
  trust: Trust;
  /** The last record's seq, id and line offset: what a floor at HEAD holds. */
  last: { seq: number; id: string; offset: number };
  size: number;
}

/** Writes a ledger of any size straight to `dir` (records.jsonl, HEAD, trust.json), in batches. */
export function streamLedger(dir: string, spec: LedgerSpec): StreamedLedger {
  const r = resolveSpec(spec);
  mkdirSync(dir, { recursive: true });
  const fd = openSync(join(dir, 'records.jsonl'), 'w');
  let size = 0;
  let genesis = '';
  let last: GeneratedRecord | null = null;
  let lastOffset = 0;
  let batch: string[] = [];
  try {
    for (const rec of generateRecords(spec)) {
      if (rec.seq === 0) genesis = rec.id;
      batch.push(rec.line);
      lastOffset = size;
      size += rec.bytes;
      last = rec;
      if (batch.length >= 4096) {
        writeSync(fd, batch.join(''));
        batch = [];
      }
    }
    if (batch.length) writeSync(fd, batch.join(''));
  } finally {
    closeSync(fd);
  }
  const { head, line } = headFor(spec, r, genesis, last!, size);
  writeFileSync(join(dir, 'HEAD'), line);
  const trust = trustFor(spec);
  writeFileSync(join(dir, 'trust.json'), JSON.stringify(trust, null, 2) + '\n');
  return { head, trust, last: { seq: last!.seq, id: last!.id, offset: lastOffset }, size };
}

/** The floor (SPEC 8) of record `seq` of a built ledger. */
export function floorOf(led: BuiltLedger, seq: number): Json {
  return { v: 1, genesis: led.ids[0], seq, id: led.ids[seq], offset: led.offsets[seq] };
}

// ---------------------------------------------------------------------------------------------
// Tampering: small edits on built ledgers, each leaving every other part valid.

/** The parsed record of a line (without touching its bytes). */
export function parseLine(line: string): Json {
  return JSON.parse(line) as Json;
}

/**
 * A fresh, validly signed HEAD over `lines` as they now are (after lines were removed, added or
 * re-encoded), so that the only fault left is the one the test put in. Genesis, seq and tail come
 * from the first and last lines as parsed.
 */
export function headForLines(lines: readonly string[], signer: Signer, ts?: string): { head: Head; line: string } {
  const first = parseLine(lines[0]);
  const last = parseLine(lines[lines.length - 1]);
  const size = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  return resignHead({ v: 1, genesis: recordId(first), seq: last.seq, tail: recordId(last), size, ts: ts ?? (last.ts as string) }, signer);
}

/** A line with one top-level member changed and re-signed by `signer` (a valid record otherwise). */
export function editLine(line: string, change: (r: Json) => Json, signer: Signer): string {
  return resignRecord(change(parseLine(line)), signer).line;
}

/** A line whose `sig` is replaced as given, kept canonical (the signature no longer matches). */
export function withSig(line: string, sig: { alg?: string; key?: string; value?: string }): string {
  const r = parseLine(line);
  return canonicalLine({ ...r, sig: { ...(r.sig as object), ...sig } });
}
