// Record and HEAD types, the envelope, and the strict schema of every kind. Pure: no I/O.
// SPEC 4 (envelope), SPEC 5 (HEAD), SPEC 6 (payloads). Validation collects every bad field path
// before it reports, so one run names everything that is wrong with a payload.
import type { Sig } from './sign.js';
import { DIGEST_RE, fromBase64url } from './canonical.js';

export const RECORD_VERSION = 1;
/** SPEC 4: a record line is at most 1 MiB, its newline included. */
export const MAX_LINE_BYTES = 1024 * 1024;

export const KINDS = [
  'genesis', 'start', 'checkpoint', 'finish', 'intent', 'handoff', 'revoke', 'consume',
  'release', 'note', // the handoff log's hand-back and annotation (issue 14)
  'consume_failed',
  'key', // SPEC 7: an admin authorizes or revokes a machine's key inside the ledger
] as const;
export type Kind = (typeof KINDS)[number];
export const OUTCOMES = ['success', 'failure', 'timeout', 'ambiguous', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface Envelope {
  v: 1;
  seq: number;
  prev_tail_hash: string | null;
  ts: string;
  kind: Kind;
  agent: string;
  sig: Sig;
}

export interface Evidence { digest: string; source: string }
export interface Invariant { ok: boolean; detail: string }
export interface Dependency { logical_operation_id: string; outcome: Outcome }
export interface TestsRun {
  excerpt: string;
  digest: string;
  command?: string;
  exit_code?: number;
  bytes?: number;
  /** Where a `--tests-cmd` ran (issue 14.6); absent for output as reported. */
  workdir?: TestsWorkdir;
  /** Why the run tested nothing, as the ledger read its exit code and output (issue 26). */
  nothing_tested?: string;
}
/** The caller's working directory of a test run and what git said of it then (null: not a git work tree). */
export interface TestsWorkdir {
  path: string;
  /** commit null: no commit yet; branch null: a detached HEAD; clean: no change outside the ledger's own files and views. */
  git: { commit: string | null; branch: string | null; clean: boolean } | null;
}

/**
 * Where the code of a work item was when a start, checkpoint or finish was written (issue 24.5,
 * handoff/code-place.ts): the machine and work tree, the branch and commit, the remote-tracking
 * ref that holds the commit (null: only on that machine), whether the tree had changes, and a
 * digest of the tree's content (what the stop hook compares). git null: not a git work tree.
 */
export interface CodePlace {
  machine: string;
  path: string;
  git: { branch: string | null; commit: string | null; pushed_to: string | null; dirty: boolean; content?: string } | null;
}

export interface GenesisPayload { nonce: string; name?: string }
export interface HandoffPayload {
  logical_operation_id: string;
  execution_id: string;
  outcome: Outcome;
  evidence: Record<string, Evidence>;
  invariants: Record<string, Invariant>;
  depends_on: Dependency[];
  supersedes?: string[];
  note?: string;
}
export interface IntentPayload { logical_operation_id: string; execution_id: string; action: string; note?: string }
export interface RevokePayload { target: string; reason: string }
export interface ConsumePayload {
  logical_operation_id: string;
  consumer: string;
  handoff: string;
  seen_head: { seq: number; tail: string };
}
/** A consumer's report that the action it took on a consumed handoff failed (`ledger consume-failed`). */
export interface ConsumeFailedPayload {
  logical_operation_id: string;
  consumer: string;
  /** The consume record whose action failed. */
  consume: string;
  /** The handoff that consume record acted on. */
  handoff: string;
  reason: string;
}
export interface StartPayload {
  logical_operation_id: string;
  execution_id: string;
  summary: string;
  lease_until: string;
  takeover?: Takeover;
  code?: CodePlace;
}
/** The execution a start replaces. `forced` and `reason`: issue 14 (a live lease taken over). */
export interface Takeover {
  agent: string;
  execution_id: string;
  lease_until: string;
  /** Present (true) only when the lease was live when it was taken over (`--takeover --force`). */
  forced?: true;
  /** Why (`--reason`); required with `forced`. */
  reason?: string;
}
/** The owner hands an unfinished item back: it stays open, unowned (`ledger release`). */
export interface ReleasePayload { logical_operation_id: string; execution_id: string; note?: string }
/** Anyone's note on a work item; takes no ownership (`ledger note`). */
export interface NotePayload {
  logical_operation_id: string;
  text: string;
  /** A note a hook wrote for its agent when its session ended with work unrecorded, or was
   *  interrupted (an API error: a usage or rate limit); whoever comes next may take the item over. */
  event?: NoteEvent;
}
export const NOTE_EVENTS = ['session-end', 'interrupted'] as const;
export type NoteEvent = (typeof NOTE_EVENTS)[number];
export interface CheckpointPayload {
  logical_operation_id: string;
  execution_id: string;
  done: string;
  state: string;
  next: string;
  verified: string[];
  attempted: string[];
  blockers: string[];
  tests?: TestsRun;
  code?: CodePlace;
  /** What the work relied on so far, digested when the checkpoint was written (resume re-digests it). */
  evidence?: Record<string, Evidence>;
  lease_until: string;
}
/** A checkpoint that closes its work item, with the handoff's causal fields (SPEC 6). */
export type FinishPayload = Omit<CheckpointPayload, 'lease_until' | 'evidence'> & Omit<HandoffPayload, 'logical_operation_id' | 'execution_id'>;

/** SPEC 7: a `key` record, written by a trust-file admin key. */
export interface KeyPayload { action: 'add' | 'revoke'; name: string; alg: 'ed25519'; key: string; agents: string[]; reason: string }
export const KEY_ACTIONS = ['add', 'revoke'] as const;
export interface PayloadByKind {
  genesis: GenesisPayload;
  start: StartPayload;
  checkpoint: CheckpointPayload;
  finish: FinishPayload;
  intent: IntentPayload;
  handoff: HandoffPayload;
  revoke: RevokePayload;
  consume: ConsumePayload;
  release: ReleasePayload;
  note: NotePayload;
  consume_failed: ConsumeFailedPayload;
  key: KeyPayload;
}

export type LedgerRecord<K extends Kind = Kind> = K extends Kind ? Envelope & { kind: K } & PayloadByKind[K] : never;
/** A record before it is placed in the chain: kind, agent and the kind's payload. */
export type Draft<K extends Kind = Kind> = K extends Kind ? { kind: K; agent: string } & PayloadByKind[K] : never;

export interface Head {
  v: 1;
  genesis: string;
  seq: number;
  tail: string;
  size: number;
  ts: string;
  sig: Sig;
}

export const ENVELOPE_FIELDS = ['v', 'seq', 'prev_tail_hash', 'ts', 'kind', 'agent', 'sig'] as const;

// ---------------------------------------------------------------------------------------------
// A small checker vocabulary. Each check pushes "path: expected X, got Y" into `errs`.

type Check = (v: unknown, path: string, errs: string[]) => void;
interface FieldSpec { check: Check; optional?: boolean }
type Shape = Record<string, FieldSpec | Check>;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'string') return charCount(v) > 40 ? `a string of ${charCount(v)} characters` : JSON.stringify(v);
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

const fail = (errs: string[], path: string, expected: string, v: unknown) => {
  errs.push(`${path}: expected ${expected}, got ${describe(v)}`);
};

export const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
export const NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;
export const AGENT_RE = /^[A-Za-z0-9._@-]{1,64}$/;
const TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function isTime(v: unknown): v is string {
  if (typeof v !== 'string' || !TIME_RE.test(v)) return false;
  const t = Date.parse(v);
  return Number.isFinite(t) && new Date(t).toISOString() === v;
}

const pattern = (re: RegExp, what: string): Check => (v, p, e) => {
  if (typeof v !== 'string' || !re.test(v)) fail(e, p, what, v);
};
/**
 * SPEC 4 and 6 count text in characters: Unicode code points, not UTF-16 units (an astral
 * character such as U+1F980 is one character, two units). The one count every text limit of
 * every kind uses, and the CLI's own flag checks with it. The 1 MiB line limit is bytes (SPEC 4).
 */
export const charCount = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
/** A string of `min`-`max` characters (code points), as SPEC counts them. */
export const isTextOf = (v: unknown, min: number, max: number): v is string => {
  if (typeof v !== 'string') return false;
  // A string has at most v.length code points and at least half as many: most decide uncounted.
  const fewest = Math.ceil(v.length / 2);
  if (v.length < min || fewest > max) return false;
  if (v.length <= max && fewest >= min) return true;
  const n = charCount(v);
  return n >= min && n <= max;
};
const text = (min: number, max: number): Check => (v, p, e) => {
  if (!isTextOf(v, min, max)) fail(e, p, `a string of ${min}-${max} characters`, v);
};
const int = (min: number): Check => (v, p, e) => {
  if (!Number.isSafeInteger(v) || (v as number) < min) fail(e, p, `an integer >= ${min}`, v);
};
const bool: Check = (v, p, e) => {
  if (typeof v !== 'boolean') fail(e, p, 'a boolean', v);
};
const literal = (x: unknown): Check => (v, p, e) => {
  if (v !== x) fail(e, p, JSON.stringify(x), v);
};
const oneOf = (xs: readonly string[]): Check => (v, p, e) => {
  if (typeof v !== 'string' || !xs.includes(v)) fail(e, p, `one of ${xs.join(', ')}`, v);
};
const time: Check = (v, p, e) => {
  if (!isTime(v)) fail(e, p, 'an RFC 3339 UTC time like 2026-11-29T17:00:00.000Z', v);
};
const digest = pattern(DIGEST_RE, '"sha256:" + 64 lowercase hex');
const idString = pattern(ID_RE, '1-128 chars of [A-Za-z0-9._:-]');
const agentString = pattern(AGENT_RE, '1-64 chars of [A-Za-z0-9._@-]');
const b64 = (len: number): Check => (v, p, e) => {
  if (fromBase64url(v, len) === null) fail(e, p, `base64url (no padding) of ${len} bytes`, v);
};

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function object(shape: Shape): Check {
  // Taken apart once, not at every check (issue 26: a batch checks 200,000 drafts).
  const fields = Object.entries(shape).map(([name, spec]) => ({ name, ...(typeof spec === 'function' ? { check: spec, optional: false } : spec) }));
  return (v, p, e) => {
    if (!isPlainObject(v)) return fail(e, p, 'an object', v);
    for (const { name, check, optional } of fields) {
      if (!Object.hasOwn(v, name)) {
        if (!optional) e.push(`${p}.${name}: missing`);
        continue;
      }
      check(v[name], `${p}.${name}`, e);
    }
    for (const name of Object.keys(v)) {
      if (!Object.hasOwn(shape, name)) e.push(`${p}.${name}: unknown field`);
    }
  };
}
const opt = (check: Check): FieldSpec => ({ check, optional: true });

function mapOf(keyRe: RegExp, keyWhat: string, value: Check, max: number): Check {
  return (v, p, e) => {
    if (!isPlainObject(v)) return fail(e, p, 'an object', v);
    const keys = Object.keys(v);
    if (keys.length > max) e.push(`${p}: expected at most ${max} entries, got ${keys.length}`);
    for (const k of keys) {
      if (!keyRe.test(k)) e.push(`${p}: key ${JSON.stringify(k)} is not ${keyWhat}`);
      value(v[k], `${p}.${k}`, e);
    }
  };
}
function arrayOf(item: Check, max: number): Check {
  return (v, p, e) => {
    if (!Array.isArray(v)) return fail(e, p, 'an array', v);
    if (v.length > max) e.push(`${p}: expected at most ${max} items, got ${v.length}`);
    v.forEach((x, i) => item(x, `${p}[${i}]`, e));
  };
}

function nonEmpty(check: Check): Check {
  return (v, p, e) => {
    check(v, p, e);
    if (Array.isArray(v) && v.length === 0) e.push(`${p}: expected at least one item, got an empty array`);
  };
}

// ---------------------------------------------------------------------------------------------
// The schemas.

const SIG_SHAPE: Shape = { alg: literal('ed25519'), key: b64(32), value: b64(64) };
const sigCheck = object(SIG_SHAPE);

const ENVELOPE_SHAPE: Shape = {
  v: literal(RECORD_VERSION),
  seq: int(0),
  prev_tail_hash: (v, p, e) => {
    if (v !== null) digest(v, p, e);
  },
  ts: time,
  kind: oneOf(KINDS),
  agent: agentString,
  sig: sigCheck,
};

const evidence = mapOf(NAME_RE, '1-64 chars of [A-Za-z0-9._-]', object({ digest, source: text(1, 1024) }), 256);
const invariants = mapOf(NAME_RE, '1-64 chars of [A-Za-z0-9._-]', object({ ok: bool, detail: text(0, 4096) }), 256);
const dependsOn = arrayOf(object({ logical_operation_id: idString, outcome: oneOf(OUTCOMES) }), 64);
const item = text(1, 1024);
const orNull = (check: Check): Check => (v, p, e) => {
  if (v !== null) check(v, p, e);
};
const COMMIT_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const testsWorkdir = object({
  path: text(1, 4096),
  git: orNull(object({ commit: orNull(pattern(COMMIT_RE, 'a commit id (40 or 64 lowercase hex)')), branch: orNull(text(1, 4096)), clean: bool })),
});
const codePlace = object({
  machine: text(1, 255),
  path: text(1, 4096),
  git: orNull(object({
    branch: orNull(text(1, 4096)),
    commit: orNull(pattern(COMMIT_RE, 'a commit id (40 or 64 lowercase hex)')),
    pushed_to: orNull(text(1, 4096)),
    dirty: bool,
    content: opt(digest),
  })),
});
const tests = object({
  excerpt: text(0, 16384),
  digest,
  command: opt(text(1, 4096)),
  exit_code: opt(int(0)),
  bytes: opt(int(0)),
  workdir: opt(testsWorkdir), // issue 14.6: where a --tests-cmd ran
  nothing_tested: opt(text(1, 1024)), // issue 26: "the command was not found (exit 127)"
});

const takeoverShape = object({
  agent: agentString,
  execution_id: idString,
  lease_until: time,
  forced: opt(literal(true)),
  reason: opt(text(1, 4096)),
});
/** Policy: a forced takeover always says why (SPEC 10: `--force` without `--reason` exits 2). */
const takeoverCheck: Check = (v, p, e) => {
  takeoverShape(v, p, e);
  if (isPlainObject(v) && v.forced === true && !Object.hasOwn(v, 'reason')) e.push(`${p}.reason: missing (a forced takeover records why)`);
};

const HANDOFF_FIELDS: Shape = {
  outcome: oneOf(OUTCOMES),
  evidence,
  invariants,
  depends_on: dependsOn,
  supersedes: opt(arrayOf(digest, 64)),
  note: opt(text(0, 4096)),
};
const CHECKPOINT_FIELDS: Shape = {
  logical_operation_id: idString,
  execution_id: idString,
  done: text(1, 4096),
  state: text(1, 4096),
  next: text(1, 4096),
  verified: arrayOf(item, 64),
  attempted: arrayOf(item, 64),
  blockers: arrayOf(item, 64),
  tests: opt(tests),
  code: opt(codePlace), // issue 24.5: where the code is
};

/** The payload fields of each kind (SPEC 6; the kinds beyond `handoff` are ours, see docs/formats.md). */
export const PAYLOAD_SHAPES: Record<Kind, Shape> = {
  genesis: { nonce: b64(16), name: opt(text(1, 128)) },
  handoff: { logical_operation_id: idString, execution_id: idString, ...HANDOFF_FIELDS },
  intent: { logical_operation_id: idString, execution_id: idString, action: text(1, 1024), note: opt(text(0, 4096)) },
  revoke: { target: digest, reason: text(1, 4096) },
  consume: {
    logical_operation_id: idString,
    consumer: idString,
    handoff: digest,
    seen_head: object({ seq: int(0), tail: digest }),
  },
  consume_failed: { logical_operation_id: idString, consumer: idString, consume: digest, handoff: digest, reason: text(1, 4096) },
  start: {
    logical_operation_id: idString,
    execution_id: idString,
    summary: text(1, 4096),
    lease_until: time,
    takeover: opt(takeoverCheck),
    code: opt(codePlace),
  },
  release: { logical_operation_id: idString, execution_id: idString, note: opt(text(1, 4096)) },
  note: { logical_operation_id: idString, text: text(1, 4096), event: opt(oneOf(NOTE_EVENTS)) },
  // Policy: a checkpoint may carry evidence (optional, unlike finish) so that `resume` can tell
  // what changed since it was written; finish carries it as the handoff does.
  checkpoint: { ...CHECKPOINT_FIELDS, evidence: opt(evidence), lease_until: time },
  finish: { ...CHECKPOINT_FIELDS, ...HANDOFF_FIELDS },
  // SPEC 7. Policy: `agents` are agent names only, 1 to 64 of them: "*" (any agent) is never
  // given through a record, and there is no `admin` field (an unknown field is a schema fault):
  // delegation is one level, and only the trust file names admins.
  key: { action: oneOf(KEY_ACTIONS), name: pattern(/^[A-Za-z0-9._@-]{1,64}$/, '1-64 chars of [A-Za-z0-9._@-]'), alg: literal('ed25519'), key: b64(32), agents: nonEmpty(arrayOf(agentString, 64)), reason: text(1, 4096) },
};

// Speed: each kind's whole check (the envelope's fields spread with its payload's) is made when a
// record of that kind is first checked, not all 13 (and the 13 draft checks) at every start of
// every verb, most of which check one or two kinds or none.
const recordChecks: Partial<Record<Kind, Check>> = {};
const recordCheck = (k: Kind): Check => (recordChecks[k] ??= object({ ...ENVELOPE_SHAPE, ...PAYLOAD_SHAPES[k] }));
const ENVELOPE_ONLY = object(ENVELOPE_SHAPE);

/** Every schema problem of a parsed record line, or [] (SPEC 4, SPEC 6). */
export function recordProblems(value: unknown): string[] {
  const errs: string[] = [];
  if (!isPlainObject(value)) {
    fail(errs, '$', 'an object', value);
    return errs;
  }
  const kind = value.kind;
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    // Still report the envelope's other problems, with the unknown kind among them.
    ENVELOPE_ONLY(Object.fromEntries(Object.entries(value).filter(([k]) => (ENVELOPE_FIELDS as readonly string[]).includes(k))), '$', errs);
    return errs;
  }
  recordCheck(kind as Kind)(value, '$', errs);
  return errs;
}

const draftChecks: Partial<Record<Kind, Check>> = {};
const draftCheck = (k: Kind): Check => (draftChecks[k] ??= object({ kind: literal(k), agent: agentString, ...PAYLOAD_SHAPES[k] }));

/** Every problem of a draft (kind, agent, payload), or []: what the writer checks before it signs. */
export function draftProblems(value: unknown): string[] {
  const errs: string[] = [];
  if (!isPlainObject(value)) {
    fail(errs, '$', 'an object', value);
    return errs;
  }
  const kind = value.kind;
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    fail(errs, '$.kind', `one of ${KINDS.join(', ')}`, kind);
    return errs;
  }
  draftCheck(kind as Kind)(value, '$', errs);
  return errs;
}

const HEAD_CHECK = object({
  v: literal(RECORD_VERSION),
  genesis: digest,
  seq: int(0),
  tail: digest,
  size: int(1),
  ts: time,
  sig: sigCheck,
});

/** Every schema problem of a parsed HEAD, or [] (SPEC 5). */
export function headProblems(value: unknown): string[] {
  const errs: string[] = [];
  HEAD_CHECK(value, '$', errs);
  return errs;
}

/**
 * A key authorized by a `key` record (SPEC 7), as a floor carries it: accepted for `agents` from
 * `added_at_seq + 1` through `revoked_at_seq` (null: not revoked); `added_by` / `revoked_by` are
 * the ids of the records that did it.
 */
export interface FloorKey { name: string; key: string; agents: string[]; added_at_seq: number; added_by: string; revoked_at_seq: number | null; revoked_by: string | null }
/**
 * A trust floor (SPEC 8): {"v":1,"genesis","seq","id","offset"}, and `keys` (SPEC 7: the keys
 * authorized by records at or below its seq) when there are any, so an audit from the floor
 * reads only the records after it.
 */
/**
 * SPEC 8's floor, carrying what an audit from it needs (SPEC 7): the keys accepted at its `seq`,
 * and the RFC 6962 tree's right edge over records 0..seq (SPEC 13; one base64url hash per set bit
 * of seq + 1, largest subtree first), so the checkpoint's root is checked from it.
 */
export interface TrustFloor { v: 1; genesis: string; seq: number; id: string; offset: number; keys?: FloorKey[]; tree?: string[] }
const FLOOR_KEY = object({
  name: pattern(/^[A-Za-z0-9._@-]{1,64}$/, '1-64 chars of [A-Za-z0-9._@-]'),
  key: b64(32),
  agents: nonEmpty(arrayOf(agentString, 64)),
  added_at_seq: int(0),
  added_by: digest,
  revoked_at_seq: orNull(int(0)),
  revoked_by: orNull(digest),
});
const FLOOR_CHECK = object({ v: literal(1), genesis: digest, seq: int(0), id: digest, offset: int(0), keys: opt(arrayOf(FLOOR_KEY, 100_000)), tree: opt(arrayOf(b64(32), 64)) });
export function floorProblems(value: unknown): string[] {
  const errs: string[] = [];
  FLOOR_CHECK(value, '$', errs);
  return errs;
}

/**
 * Every problem of one payload field of a `kind` as the schema checks it, or []: a request's
 * structured fields (evidence, invariants, depends_on, supersedes) are checked by the store's own
 * rules before anything runs (src/requests/work.ts).
 */
export function payloadFieldProblems(kind: Kind, field: string, value: unknown): string[] {
  const errs: string[] = [];
  const spec = PAYLOAD_SHAPES[kind][field];
  if (spec === undefined) return [`$.${field}: unknown field`];
  (typeof spec === 'function' ? spec : spec.check)(value, `$.${field}`, errs);
  return errs;
}
