// The causal requests (SPEC 6, 9, 10): a handoff, an intent, the gate (with --consume-as), revoke,
// consume-failed and pending's operation. The CLI builds them from flags, the MCP server's gate
// tool from its arguments, a library caller by hand; each is checked once, here, before anything
// is read or written. The rules that decide (retry identity, who consumed what, what a revoke
// may name) decide again under the writer lock; the store checks the record it signs.
import { LedgerError } from '../errors.js';
import type { Trust } from '../keys/trust.js';
import { AGENT_RE, ID_RE, NAME_RE, OUTCOMES, type Evidence, type Outcome } from '../record.js';
import { parseRecordRef } from '../store/ids.js';
import { checked } from './checked.js';
import { checkAgent, checkId, checkLength, checkOutcome, parseDuration } from './fields.js';
import { checkEvidence, checkHandoffFields, type HandoffFields } from './work.js';

/** The operation a gate decides on, and `pending --op`: a logical_operation_id. */
export function checkOp(op: unknown): string {
  if (typeof op !== 'string' || !ID_RE.test(op)) throw new LedgerError('USAGE', `OP must be a logical_operation_id, 1-128 chars of [A-Za-z0-9._:-], got "${String(op)}"`);
  return op;
}

/** The consumer a consume record names (`--consume-as`). */
export function checkConsumer(consumer: unknown, flag = 'consume-as'): string {
  if (typeof consumer !== 'string' || !ID_RE.test(consumer)) throw new LedgerError('USAGE', `--${flag} must be 1-128 chars of [A-Za-z0-9._:-], got "${String(consumer)}"`);
  return consumer;
}

/** The invariants the consumer requires (`--require-invariant`), each an invariant name. */
export function checkRequiredInvariants(names: readonly unknown[]): string[] {
  for (const n of names) if (typeof n !== 'string' || !NAME_RE.test(n)) throw new LedgerError('USAGE', `--require-invariant must be 1-64 chars of [A-Za-z0-9._-], got "${String(n)}"`);
  return [...(names as string[])];
}

/** --accept: outcomes, each value one or several comma-separated (`success,failure`); default success. */
export function checkAccept(values: readonly unknown[] | undefined): Outcome[] {
  if (values !== undefined && !Array.isArray(values)) throw new LedgerError('USAGE', `--accept expects a list of outcomes, got ${typeof values}`);
  if (values === undefined || values.length === 0) return ['success'];
  const out: Outcome[] = [];
  for (const v of values) {
    for (const o of String(v).split(',')) {
      if (!(OUTCOMES as readonly string[]).includes(o)) throw new LedgerError('USAGE', `--accept takes outcomes from ${OUTCOMES.join(', ')}, comma-separated; got "${o}" in "${String(v)}"`);
      if (!out.includes(o as Outcome)) out.push(o as Outcome);
    }
  }
  return out;
}

/** May a consumer act on `op` now (SPEC 9)? What `ledger gate OP` and the gate tool ask. */
export interface GateRequest {
  op: string;
  /**
   * The trust file's keys; the chain must audit clean under them. Read from `trustPath` when not
   * given, else the ledger's own trust file (Ledger.open's `trust`).
   */
  trust?: Trust;
  trustPath?: string;
  /** Outcomes accepted (default success); a value may list several, comma-separated. */
  accept?: readonly string[];
  requireInvariants?: readonly string[];
  /** The handoff may be at most this old, as typed ("24h"), or in ms; null or unset: any age. */
  maxAge?: string;
  maxAgeMs?: number | null;
  /** --floor: audit only above it; the records relied on are verified one by one regardless. */
  floorPath?: string | null;
  /** Count bare sha256: evidence as current. */
  allowOpaque?: boolean;
  /** Hold unless this is still the operation's latest handoff: a full id, or a seq, HEAD or unique id prefix (SPEC 10). */
  expectHandoff?: string | null;
  /** If the gate passes, record under the writer lock that this consumer acted on the handoff. */
  consumeAs?: string;
  /** Who writes the consume record; default the consumer, when that is a valid agent name. */
  agent?: string;
  /** The one reference time of the command (ms since the epoch); default: when the gate is asked. */
  now?: number;
}

export interface GateChecked {
  op: string;
  trust?: Trust;
  trustPath?: string;
  accept: Outcome[];
  requireInvariants: string[];
  maxAgeMs: number | null;
  floorPath: string | null;
  allowOpaque: boolean;
  expectHandoff: string | null;
  /** With its writer: the consumer and the agent that writes the consume record. */
  consume: { consumer: string; agent: string } | null;
  now?: number;
}

export function checkGate(req: GateRequest): GateChecked {
  const op = checkOp(req.op);
  const accept = checkAccept(req.accept);
  const requireInvariants = checkRequiredInvariants(req.requireInvariants ?? []);
  let maxAgeMs: number | null = null;
  if (req.maxAge !== undefined) {
    maxAgeMs = parseDuration(req.maxAge, 'max-age');
    if (maxAgeMs === 0) throw new LedgerError('USAGE', '--max-age must be more than 0 (a handoff is never younger than that)');
  } else if (req.maxAgeMs !== undefined && req.maxAgeMs !== null) {
    if (!(Number.isSafeInteger(req.maxAgeMs) && req.maxAgeMs > 0)) throw new LedgerError('USAGE', `--max-age must be more than 0 ms, got ${String(req.maxAgeMs)}`);
    maxAgeMs = req.maxAgeMs;
  }
  const consumer = req.consumeAs === undefined ? null : checkConsumer(req.consumeAs);
  const expectHandoff = req.expectHandoff === undefined || req.expectHandoff === null ? null : req.expectHandoff;
  if (expectHandoff !== null) parseRecordRef(expectHandoff, '--handoff');
  if (req.now !== undefined && !Number.isFinite(req.now)) throw new LedgerError('USAGE', `"now" expected a time in ms, got ${String(req.now)}`);
  // Policy: the agent defaults to the consumer's name when that is a valid agent name (the
  // consumer is who acts).
  const consume = consumer === null ? null : { consumer, agent: checkAgent(req.agent ?? (AGENT_RE.test(consumer) ? consumer : undefined)) };
  return checked({
    op, ...(req.trust !== undefined ? { trust: req.trust } : {}), ...(req.trustPath !== undefined ? { trustPath: req.trustPath } : {}),
    accept, requireInvariants, maxAgeMs, floorPath: req.floorPath ?? null, allowOpaque: req.allowOpaque === true, expectHandoff, consume,
    ...(req.now !== undefined ? { now: req.now } : {}),
  });
}

/** The consumer's report that the action it took on a consumed handoff failed (`ledger consume-failed`). */
export interface ConsumeFailedRequest {
  /** A consume or handoff/finish record (seq, HEAD, id or 8+ hex prefix), or a logical_operation_id. */
  target: string;
  consumer: string;
  /** Who reports (default the consumer, when that is a valid agent name): the agent that wrote the consume record. */
  agent?: string;
  reason: string;
}

function recordRefOf(target: string): boolean {
  try {
    parseRecordRef(target, 'consume-failed');
    return true;
  } catch {
    return false;
  }
}

/** The forms consume-failed takes (SPEC 10): a record as people type it, or an operation id. */
export function checkConsumeFailedTarget(target: unknown): string {
  if (typeof target === 'string' && (recordRefOf(target) || (ID_RE.test(target) && !target.startsWith('sha256:')))) return target;
  throw new LedgerError('USAGE', `consume-failed names a record (a seq, HEAD, a record id or its first 8+ hex digits) or an operation id, got "${String(target)}"`, { target: String(target) });
}

export function checkConsumeFailed(req: ConsumeFailedRequest): Readonly<Required<ConsumeFailedRequest>> {
  const target = checkConsumeFailedTarget(req.target);
  if (req.consumer === undefined) throw new LedgerError('USAGE', '--consumer is required (the consumer that consumed it)');
  const consumer = checkConsumer(req.consumer, 'consumer');
  if (typeof req.reason !== 'string' || req.reason === '') throw new LedgerError('USAGE', '--reason is required (what failed)');
  checkLength(req.reason, 'reason', 4096);
  // Policy: the agent defaults to the consumer's name when that is a valid agent name, as for gate.
  const agent = checkAgent(req.agent ?? (AGENT_RE.test(consumer) ? consumer : undefined));
  return checked({ target, consumer, agent, reason: req.reason });
}

/** `ledger revoke RECORD_ID --reason TEXT`: a gate on that handoff holds from then on. */
export interface RevokeRequest {
  /** The handoff or finish: a full id, or a seq, HEAD or unique id prefix (SPEC 10). */
  target: string;
  /** Why (1-4096 characters). */
  reason: string;
  agent: string;
}

export function checkRevoke(req: RevokeRequest): Readonly<RevokeRequest> {
  if (typeof req.target !== 'string') throw new LedgerError('USAGE', `revoke expects a record, got ${typeof req.target}`);
  parseRecordRef(req.target, 'revoke');
  if (typeof req.reason !== 'string' || req.reason === '') throw new LedgerError('USAGE', '--reason is required (why the handoff is revoked)');
  checkLength(req.reason, 'reason', 4096);
  const agent = checkAgent(req.agent);
  return checked({ target: req.target, reason: req.reason, agent });
}

/** `ledger append handoff`: one handoff of an operation's execution (SPEC 6), written with retry identity. */
export interface HandoffRequest extends HandoffFields {
  agent: string;
  /** logical_operation_id: the intent, stable across retries. */
  op: string;
  /** execution_id: this one attempt. */
  exec: string;
  /** Evidence: a source to digest now, or one already digested (as a checkpoint's: work.ts). */
  evidence?: Record<string, Evidence | string>;
  /** Where a relative evidence path starts (default: the working directory). */
  cwd?: string;
}

export type HandoffChecked = Readonly<Omit<HandoffRequest, 'outcome' | 'invariants' | 'depends_on' | 'evidence'> & Required<Pick<HandoffRequest, 'outcome' | 'invariants' | 'depends_on' | 'evidence'>>>;

/** A required flag's value, or its refusal. */
function present(v: unknown, flag: string, what: string): string {
  if (v === undefined) throw new LedgerError('USAGE', `--${flag} is required (${what})`);
  if (typeof v !== 'string') throw new LedgerError('USAGE', `--${flag} must be text (${what}), got ${typeof v}`);
  return v;
}

export function checkHandoff(req: HandoffRequest): HandoffChecked {
  const agent = checkAgent(req.agent);
  const op = checkId(present(req.op, 'op', 'the logical_operation_id'), 'op');
  const exec = checkId(present(req.exec, 'exec', 'the execution_id of this attempt'), 'exec');
  const outcome = checkOutcome(present(req.outcome, 'outcome', 'success, failure, timeout, ambiguous or cancelled'));
  const evidence = checkEvidence('handoff', req.evidence);
  const fields = checkHandoffFields('handoff', { ...req, outcome });
  return checked({ agent, op, exec, evidence, ...fields, ...(req.cwd !== undefined ? { cwd: req.cwd } : {}) });
}

/** `ledger append intent`: the external side effect an execution is about to have (SPEC 6). */
export interface IntentRequest {
  agent: string;
  op: string;
  exec: string;
  /** The side effect about to happen (1-1024 characters). */
  action: string;
  note?: string;
}

export function checkIntent(req: IntentRequest): Readonly<IntentRequest> {
  const agent = checkAgent(req.agent);
  const action = checkLength(present(req.action, 'action', 'the external side effect about to happen'), 'action', 1024);
  const op = checkId(present(req.op, 'op', 'the logical_operation_id'), 'op');
  const exec = checkId(present(req.exec, 'exec', 'the execution_id of this attempt'), 'exec');
  const note = req.note === undefined ? undefined : checkLength(req.note, 'note', 4096);
  return checked({ agent, op, exec, action, ...(note !== undefined ? { note } : {}) });
}
