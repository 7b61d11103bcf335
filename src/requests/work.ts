// The handoff log's requests (SPEC 10): start, checkpoint, finish, release and note. The CLI
// builds them from flags, the MCP server from tool arguments, a library caller by hand; each is
// checked once, by the function here, before anything runs or is written (issue 13 finding 16),
// and the workflow (../handoff/) takes it as checked. The authoritative rules (ownership, leases,
// --supersedes of this item) are decided again under the writer lock; the store checks the
// record it signs.
//
// Durations come as typed (`lease: "45m"`, from a flag or a tool argument) or in ms (`leaseMs`,
// from a library caller); either way the refusal shows the value as it was given.
import { LedgerError } from '../errors.js';
import { NOTE_EVENTS, type NoteEvent } from '../record.js';
import type { CheckpointPayload, Dependency, Evidence, Invariant, Kind, Outcome } from '../record.js';
import { charCount, payloadFieldProblems } from '../record.js';
import { parseRecordRef } from '../store/ids.js';
import { checked } from './checked.js';
import { checkAgent, checkId, checkItems, checkLength, checkName, checkNext, checkOutcome, checkSlug, checkSpan, checkText } from './fields.js';

/** Policy: a lease is at most 30 days; a longer one would only lock others out of a slug. */
export const MAX_LEASE_MS = 30 * 86_400_000;
/** A timer longer than 2^31-1 ms fires at once in Node; 24 days is far beyond any suite. */
export const MAX_TESTS_TIMEOUT_MS = 24 * 86_400_000;

/** Where a writing verb rewrites HANDOFF.md and HANDOFF.yml. */
export interface ViewsTarget {
  /** The folder; false: not at all. Default: the folder that holds the ledger directory. */
  views?: string | false;
  /** Rewrite views that another ledger (another genesis) rendered; without it they are refused. */
  adoptViews?: boolean;
}

export interface StartRequest extends ViewsTarget {
  slug: string;
  agent: string;
  /** What the agent is about to do (1-4096 chars). */
  summary: string;
  /** How long the item is held without a checkpoint, as typed ("45m"); default 60 minutes, at most 30 days. */
  lease?: string;
  /** The same in ms (give one of the two). */
  leaseMs?: number;
  /** Take over an item whose owner's lease has lapsed; with `force` and `reason`, a live one. */
  takeover?: boolean;
  /** With takeover: take over a live lease (the owner's session died at its usage limit). */
  force?: boolean;
  /** Why it is taken over (1-4096 characters); required with force, recorded in the start. */
  reason?: string;
  /** Start SLUG as a new item even when an open item's slug is a typo away (otherwise refused, "did you mean"). */
  newItem?: boolean;
  /** The caller's working directory: where the code is (its work tree, branch and commit) is recorded from it (default: process.cwd()). */
  cwd?: string;
}

export interface StartChecked extends ViewsTarget {
  slug: string;
  agent: string;
  summary: string;
  /** Unset: the default lease (../handoff/lease.ts). */
  leaseMs?: number;
  takeover: boolean;
  force: boolean;
  reason: string | null;
  newItem: boolean;
  cwd?: string;
}

/** Test output for a checkpoint or finish: run by the ledger (`command`), or as reported (`text`). */
export type TestsRequest =
  | { text: string }
  | {
      /** Run with /bin/sh in `cwd`, as the caller (fs/boundary.ts), never with the key's privileges. */
      command: string;
      /** Where it runs (default: the top of the git work tree that holds the request's `cwd`,
       * else the project root when `cwd` is inside it, else `cwd`; ../handoff/workflow.ts
       * testsDir). It, its git commit, branch and clean state are recorded as `tests.workdir`. */
      cwd?: string;
      /** Default 30 minutes, at most 24 days; then the run is stopped and recorded as exit code 124. */
      timeout?: string;
      /** The same in ms (give one of the two). */
      timeoutMs?: number;
      /** The environment of the run (default: this process's), less every LEDGER_* variable and
       * anything naming the key (tests-cmd.ts testsEnv). */
      env?: NodeJS.ProcessEnv;
      /** What says who the caller is: SUDO_UID, SUDO_GID, LEDGER_TESTS_USER (default: `env`). */
      callerEnv?: Record<string, string | undefined>;
      /** How the timeout is named in the warning when it fires (default: as given). */
      timeoutLabel?: string;
    };

export type TestsChecked =
  | { text: string }
  | { command: string; cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; callerEnv?: Record<string, string | undefined>; timeoutLabel?: string };

export interface CheckpointRequest extends ViewsTarget {
  slug: string;
  agent: string;
  done: string;
  state: string;
  /** Exactly one concrete next action (a list, as a repeated --next gives, is refused unless it holds one). */
  next: string | readonly string[];
  verified?: string[];
  attempted?: string[];
  blockers?: string[];
  tests?: TestsRequest;
  /**
   * Evidence: a source to digest now (`PATH`, `file:PATH`, `dir:PATH`, `git:REV`, `sha256:HEX`,
   * as `--evidence NAME=SOURCE` takes it), or one already digested (../causal/evidence.ts digestSource).
   */
  evidence?: Record<string, Evidence | string>;
  /** Where a relative evidence path starts: the caller's working directory (default: process.cwd()). */
  cwd?: string;
  /** The renewed lease, as typed; default 60 minutes. */
  lease?: string;
  leaseMs?: number;
}

export interface FinishRequest extends Omit<CheckpointRequest, 'lease' | 'leaseMs'>, HandoffFields {}

/** The fields a finish and a handoff share (SPEC 6), as a request gives them. */
export interface HandoffFields {
  /** Default success. */
  outcome?: Outcome;
  invariants?: Record<string, Invariant>;
  depends_on?: Dependency[];
  /** Earlier handoff or finish records of this operation that this one replaces: each a full id,
   * or a seq, HEAD or unique id prefix (SPEC 10), resolved when the request is written. */
  supersedes?: string[];
  note?: string;
}

/** A checkpoint's or finish's fields as checked; evidence still as given (the workflow digests sources). */
export interface MilestoneChecked extends ViewsTarget, Pick<CheckpointPayload, 'done' | 'state' | 'next' | 'verified' | 'attempted' | 'blockers'> {
  slug: string;
  agent: string;
  tests?: TestsChecked;
  evidence: Readonly<Record<string, Evidence | string>>;
  cwd?: string;
}
export interface CheckpointChecked extends MilestoneChecked { leaseMs?: number }
export interface FinishChecked extends MilestoneChecked {
  outcome: Outcome;
  invariants: Record<string, Invariant>;
  depends_on: Dependency[];
  supersedes?: string[];
  note?: string;
}

export interface ReleaseRequest extends ViewsTarget {
  slug: string;
  agent: string;
  /** Why, or what the next one should know (1-4096 characters). */
  note?: string;
}

export interface NoteRequest extends ViewsTarget {
  slug: string;
  /** Who writes the note: any agent name, owner or not. */
  agent: string;
  /** 1-4096 characters, not blank. */
  text: string;
  /** A hook's note for its own agent: its session ended with work unrecorded, or was interrupted (issue 24). */
  event?: NoteEvent;
}

const viewsOf = (req: ViewsTarget): ViewsTarget => ({
  ...(req.views !== undefined ? { views: req.views } : {}),
  ...(req.adoptViews !== undefined ? { adoptViews: req.adoptViews === true } : {}),
});

/** The flag rules of a takeover (SPEC 10): --force only with --takeover, and never without --reason. */
export function checkTakeoverFlags(req: { takeover: boolean; force: boolean; reason: string | null }): void {
  if (req.force && !req.takeover) throw new LedgerError('USAGE', '--force applies only with --takeover (--takeover --force --reason TEXT takes over a live lease)');
  if (req.force && req.reason === null) throw new LedgerError('USAGE', '--takeover --force needs --reason TEXT: a forced takeover records why (the owner hit its usage limit, its session died, ...)');
  if (req.reason !== null && !req.takeover) throw new LedgerError('USAGE', '--reason applies only with --takeover: it records why the item was taken over');
}

export function checkStart(req: StartRequest): StartChecked {
  const slug = checkSlug(req.slug);
  const agent = checkAgent(req.agent);
  const summary = checkText(req.summary, 'summary', 'what you are about to do');
  const leaseMs = checkSpan({ text: req.lease, ms: req.leaseMs }, 'lease', MAX_LEASE_MS, '30d');
  const takeover = req.takeover === true;
  const force = req.force === true;
  const reason = req.reason === undefined ? null : checkText(req.reason, 'reason', 'why the item is taken over');
  checkTakeoverFlags({ takeover, force, reason });
  const newItem = req.newItem === true;
  if (req.newItem !== undefined && typeof req.newItem !== 'boolean') throw new LedgerError('USAGE', '--new-item is a switch: give it alone, or true or false');
  if (newItem && takeover) throw new LedgerError('USAGE', '--new-item starts an item the ledger does not hold and --takeover takes one it does; pass one');
  if (req.cwd !== undefined && (typeof req.cwd !== 'string' || req.cwd === '')) throw new LedgerError('USAGE', 'cwd expects a directory, as text');
  return checked({ slug, agent, summary, ...(leaseMs !== undefined ? { leaseMs } : {}), takeover, force, reason, newItem, ...(req.cwd !== undefined ? { cwd: req.cwd } : {}), ...viewsOf(req) });
}

export function checkTestsCommand(command: unknown): string {
  if (typeof command !== 'string' || command === '') throw new LedgerError('USAGE', '--tests-cmd expects a command, as text');
  return checkLength(command, 'tests-cmd', 4096);
}

function checkTests(tests: TestsRequest | undefined): TestsChecked | undefined {
  if (tests === undefined) return undefined;
  const t = tests as { text?: unknown; command?: unknown; timeout?: unknown; timeoutMs?: unknown; cwd?: unknown };
  if (t.text !== undefined && t.command !== undefined) throw new LedgerError('USAGE', '--tests and --tests-cmd both give test output; pass one (--tests-cmd has the ledger run it)');
  if (t.command === undefined) {
    if (t.timeout !== undefined || t.timeoutMs !== undefined) {
      checkSpan({ text: t.timeout, ms: t.timeoutMs }, 'tests-timeout', MAX_TESTS_TIMEOUT_MS, '24d');
      throw new LedgerError('USAGE', '--tests-timeout applies only with --tests-cmd');
    }
    if (t.cwd !== undefined) throw new LedgerError('USAGE', '--tests-cwd applies only with --tests-cmd');
    if (typeof t.text !== 'string') throw new LedgerError('USAGE', '--tests expects the test output as text');
    return { text: t.text };
  }
  const c = tests as Extract<TestsRequest, { command: string }>;
  const command = checkTestsCommand(t.command);
  const timeoutMs = checkSpan({ text: t.timeout, ms: t.timeoutMs }, 'tests-timeout', MAX_TESTS_TIMEOUT_MS, '24d');
  if (t.cwd !== undefined && (typeof t.cwd !== 'string' || t.cwd === '')) throw new LedgerError('USAGE', '--tests-cwd expects a directory, as text');
  const label = c.timeoutLabel ?? c.timeout;
  return {
    command,
    ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(c.env !== undefined ? { env: c.env } : {}),
    ...(c.callerEnv !== undefined ? { callerEnv: c.callerEnv } : {}),
    ...(label !== undefined ? { timeoutLabel: label } : {}),
  };
}

/** One structured field by the store's own schema (the first problem, and how many more). */
export function schemaField(kind: Kind, field: string, value: unknown): void {
  const bad = payloadFieldProblems(kind, field, value);
  if (bad.length) throw new LedgerError('INPUT_SCHEMA', `${bad[0]}${bad.length > 1 ? ` (and ${bad.length - 1} more problem${bad.length > 2 ? 's' : ''})` : ''}`, { problems: bad });
}

/** A placeholder digest: a source is digested only when the request is written. */
const NO_DIGEST = `sha256:${'0'.repeat(64)}`;

/**
 * Evidence: each name, then the whole map by the schema, a source standing in as a placeholder
 * entry (the source itself is checked when it is digested: ../causal/evidence.ts).
 */
export function checkEvidence(kind: 'checkpoint' | 'finish' | 'handoff', evidence: unknown): Record<string, Evidence | string> {
  if (evidence === undefined) return {};
  if (typeof evidence !== 'object' || evidence === null || Array.isArray(evidence)) throw new LedgerError('USAGE', '--evidence expects { name: source }');
  const out: Record<string, Evidence | string> = {};
  const asDigested: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(evidence)) {
    checkName(name, 'evidence');
    out[name] = v as Evidence | string;
    asDigested[name] = typeof v === 'string' ? { digest: NO_DIGEST, source: 'x' } : v;
  }
  schemaField(kind, 'evidence', asDigested);
  return out;
}

function checkMilestone(kind: 'checkpoint' | 'finish', req: CheckpointRequest | FinishRequest): MilestoneChecked {
  const slug = checkSlug(req.slug);
  const agent = checkAgent(req.agent);
  const done = checkText(req.done, 'done', 'what was just done');
  const state = checkText(req.state, 'state', 'the state now, in plain words');
  const next = checkNext(req.next);
  const verified = checkItems(req.verified, 'verified');
  const attempted = checkItems(req.attempted, 'attempted');
  const blockers = checkItems(req.blockers, 'blocker');
  const tests = checkTests(req.tests);
  if (req.cwd !== undefined && (typeof req.cwd !== 'string' || req.cwd === '')) throw new LedgerError('USAGE', 'cwd expects a directory, as text');
  return {
    slug, agent, done, state, next, verified, attempted, blockers,
    ...(tests !== undefined ? { tests } : {}),
    evidence: {},
    ...(req.cwd !== undefined ? { cwd: req.cwd } : {}),
    ...viewsOf(req),
  };
}

export function checkCheckpoint(req: CheckpointRequest): CheckpointChecked {
  const m = checkMilestone('checkpoint', req);
  const leaseMs = checkSpan({ text: req.lease, ms: req.leaseMs }, 'lease', MAX_LEASE_MS, '30d');
  return checked({ ...m, evidence: checkEvidence('checkpoint', req.evidence), ...(leaseMs !== undefined ? { leaseMs } : {}) });
}

/**
 * --invariant: names and details, then the whole map by the schema, with the `tests` invariant
 * a run of `tests.command` adds when the caller gave none (../handoff/workflow.ts).
 */
function checkInvariants(kind: 'finish' | 'handoff', invariants: unknown, observed: boolean): Record<string, Invariant> {
  if (invariants !== undefined && (typeof invariants !== 'object' || invariants === null || Array.isArray(invariants))) throw new LedgerError('USAGE', '--invariant expects { name: { ok, detail } }');
  const out: Record<string, Invariant> = {};
  for (const [name, v] of Object.entries((invariants ?? {}) as Record<string, Invariant>)) {
    checkName(name, 'invariant');
    if (typeof v?.detail === 'string' && charCount(v.detail) > 4096) throw new LedgerError('USAGE', `--invariant ${name}: detail is over 4096 characters`);
    out[name] = v;
  }
  schemaField(kind, 'invariants', observed && !Object.hasOwn(out, 'tests') ? { ...out, tests: { ok: true, detail: '' } } : out);
  return out;
}

function checkDependsOn(kind: 'finish' | 'handoff', deps: unknown): Dependency[] {
  if (deps === undefined) return [];
  if (Array.isArray(deps)) for (const d of deps) if (typeof d?.logical_operation_id === 'string') checkId(d.logical_operation_id, 'depends-on');
  schemaField(kind, 'depends_on', deps);
  return [...(deps as Dependency[])];
}

/** --supersedes: each a record as people type it (SPEC 10); at most 64. */
function checkSupersedes(refs: unknown): string[] {
  if (!Array.isArray(refs)) throw new LedgerError('USAGE', '--supersedes expects a list of record ids');
  for (const r of refs) {
    if (typeof r !== 'string') throw new LedgerError('USAGE', `--supersedes expects a record id, got ${typeof r}`);
    parseRecordRef(r, '--supersedes');
  }
  if (refs.length > 64) schemaField('finish', 'supersedes', refs);
  return [...(refs as string[])];
}


/**
 * The fields a finish and a handoff share, checked in their flags' order: the outcome (default
 * success), invariants, depends_on, supersedes and note. `observed`: a test run will add its
 * `tests` invariant unless one is given (counted against the schema's limit).
 */
export function checkHandoffFields(kind: 'finish' | 'handoff', req: HandoffFields, observed = false): Required<Pick<HandoffFields, 'outcome' | 'invariants' | 'depends_on'>> & Pick<HandoffFields, 'supersedes' | 'note'> {
  const outcome = req.outcome === undefined ? 'success' : checkOutcome(req.outcome);
  const invariants = checkInvariants(kind, req.invariants, observed);
  const depends_on = checkDependsOn(kind, req.depends_on);
  const supersedes = req.supersedes === undefined ? undefined : checkSupersedes(req.supersedes);
  if (req.note !== undefined && typeof req.note !== 'string') throw new LedgerError('USAGE', '--note expects text');
  const note = req.note === undefined ? undefined : checkLength(req.note, 'note', 4096);
  return { outcome, invariants, depends_on, ...(supersedes !== undefined ? { supersedes } : {}), ...(note !== undefined ? { note } : {}) };
}

export function checkFinish(req: FinishRequest): FinishChecked {
  const m = checkMilestone('finish', req);
  const evidence = checkEvidence('finish', req.evidence);
  return checked({ ...m, evidence, ...checkHandoffFields('finish', req, m.tests !== undefined && 'command' in m.tests) });
}

export function checkRelease(req: ReleaseRequest): Readonly<ReleaseRequest> {
  const slug = checkSlug(req.slug);
  const agent = checkAgent(req.agent);
  const note = req.note === undefined ? undefined : checkText(req.note, 'note', 'what the next one should know');
  return checked({ slug, agent, ...(note !== undefined ? { note } : {}), ...viewsOf(req) });
}

export function checkNote(req: NoteRequest): Readonly<NoteRequest> {
  const slug = checkSlug(req.slug);
  const agent = checkAgent(req.agent);
  const text = checkText(req.text, 'text', 'the note');
  if (req.event !== undefined && !(NOTE_EVENTS as readonly unknown[]).includes(req.event)) throw new LedgerError('USAGE', `a note's event is ${NOTE_EVENTS.join(' or ')}, got ${JSON.stringify(req.event)}`);
  return checked({ slug, agent, text, ...(req.event !== undefined ? { event: req.event } : {}), ...viewsOf(req) });
}
