// Running the gate against a ledger on disk: one HEAD, the chain audit (audit/, the independent
// reader) up to that HEAD, the verified view, and for `--consume-as` the same evaluation again
// under the writer lock with the consume record appended in the same critical section. The
// Ledger (src/ledger.ts) calls it with itself as the reader or writer; nothing here imports it.
import { dirname } from 'node:path';
import { runAuditSyncInternal } from '../../audit/index.js';
import { LedgerError } from '../errors.js';
import type { Trust } from '../keys/trust.js';
import type { Draft, Head } from '../record.js';
import { transact, type LockedView } from '../store/append.js';
import type { LedgerWriter } from './retry.js';
import { emptyFindings, evaluateGate, type ChainVerdict, type GateOptions, type GateResult } from './gate/index.js';
import { collectGateInputs } from './gate/inputs.js';
import { keptManifests } from './evidence/manifest.js';
import { CausalView } from './view.js';
import { reportProgress } from '../progress.js';
import { keepFloorTree, keepUserFloor, namedFloorTree, userFloorPath, userFloorState } from '../store/user-floor.js';

// The gate verb loads everything it needs through this one module (one dynamic import).
export { readTrust } from '../keys/trust-file.js';
export { formatGateText } from './gate/index.js';

export interface GateRunOptions extends Omit<GateOptions, 'evidence' | 'consumer'> {
  trust: Trust;
  trustPath?: string;
  /** --floor: audit only above it; the records relied on are verified one by one regardless. */
  floorPath?: string | null;
  /** Without --floor: start from this user's own floor and keep it after a pass (../store/user-floor.ts). Default true. */
  userFloor?: boolean;
}

export interface ConsumeOutcome {
  consumer: string;
  /** The consume record appended, or null when the gate held. */
  id: string | null;
  seq: number | null;
}

export type GateRun = GateResult & { chain: ChainVerdict & { floor_seq: number | null; checked: number; warnings: string[] }; consume?: ConsumeOutcome };

/** What the gate reads through: the ledger's paths and its checked HEAD. */
export type LedgerReader = Pick<LedgerWriter, 'paths' | 'head' | 'workItem'>;

/** The chain audit through exactly `head`. */
function auditThrough(ledger: LedgerReader, o: GateRunOptions, head: Head, view?: CausalView): GateRun['chain'] & { moved: boolean } {
  // Policy (issue 26): without --floor, this user's own floor (kept after their last passing
  // gate on this ledger, under this trust) is where the audit starts, as the read verbs start
  // from this user's verified-chain memo; a full audit of 200,000 records takes a minute.
  const own = !o.floorPath && o.userFloor !== false && ledger.paths.cache?.on('floor') ? userFloorPath(ledger.paths, head.genesis, o.trust) : null;
  const ownState = own ? userFloorState(own) : 'none';
  const floorPath = o.floorPath ?? (ownState === 'usable' ? own : null);
  // A floor the caller names in SPEC 8's five fields carries no tree edge: this user's kept one
  // at that very floor, if any (store/user-floor.ts floorTreePath).
  const named = o.floorPath && ledger.paths.cache?.on('floor') ? namedFloorTree(ledger.paths, o.floorPath, head.genesis, o.trust) : null;
  const report = runAuditSyncInternal({ dir: ledger.paths.dir, trust: o.trust, trustPath: o.trustPath, floorPath, now: o.now, reportFloor: own !== null, floorTree: named?.tree, reportFloorTree: named !== null, onProgress: (n, total) => reportProgress('auditing the chain', n, total) });
  const kept = report.floor_tree;
  if (named && kept && report.floor) keepFloorTree(ledger.paths, named.path, report.floor, kept);
  // SPEC 7: the records the decision relies on are checked against the keys this audit folded
  // (from the floor when one held), so the gate stays proportional to what is new.
  view?.useGrants(new Map(report.keys.map((k) => [k.key, k])));
  // This user's floor is theirs to keep: a missing one is the first gate, not a warning.
  const warnings = own ? report.warnings.filter((w) => !w.startsWith(`no floor at ${own}`)) : report.warnings;
  if (typeof ownState === 'object') warnings.push(`this user's floor ${own} was not used (${ownState.damaged}): audited from the genesis; a pass replaces it`);
  const base = { floor_seq: report.floor?.seq ?? null, checked: report.checked, warnings };
  if (!report.ok) return { ...base, ok: false, moved: false, reason: `the chain does not audit clean: ${report.verdict}` };
  // The audit read HEAD itself: it must be the HEAD this decision is about.
  if (!report.head || report.head.tail !== head.tail || report.head.seq !== head.seq) {
    return { ...base, ok: false, moved: true, reason: `the ledger moved during the check (audited HEAD seq ${report.head?.seq ?? '?'}, evaluated seq ${head.seq})` };
  }
  const next = report.next_floor;
  // Rewritten when HEAD moved, or to add the tree's edge a floor from before SPEC 13 lacks.
  const same = report.floor && report.floor.seq === next?.seq && report.floor.id === next.id && (report.floor.tree !== undefined || next.tree === undefined);
  if (own && next && !same) keepUserFloor(ledger.paths, own, next);
  const whose = o.floorPath ? 'the floor' : "this user's floor";
  const from = report.floor
    ? ` (${report.checked} records above ${whose} at seq ${report.floor.seq}; the records relied on verified one by one)`
    : own ? ' (audited from the genesis; this user now keeps a floor here, so their next gate audits only what is new; `--floor FILE` keeps one of your own)' : '';
  return { ...base, ok: true, moved: false, reason: `the chain audits clean through HEAD seq ${head.seq}${from}` };
}

function evaluateAt(ledger: LedgerReader, o: GateRunOptions, op: string, head: Head, consumer: string | null): GateRun & { moved: boolean } {
  const paths = ledger.paths;
  const view = CausalView.open(paths, head, { trust: o.trust });
  try {
    const { moved, ...chain } = auditThrough(ledger, o, head, view);
    const result = evaluateGate(collectGateInputs(view, chain, op, { ...o, consumer, workItem: ledger.workItem, evidence: { root: dirname(paths.dir), ledgerDir: paths.dir, manifests: keptManifests(paths.dir) } }));
    return { ...result, chain, moved };
  } finally {
    view.close();
  }
}

/**
 * Policy: a ledger the gate cannot read (HEAD or records.jsonl damaged) is a hold with the
 * auditor's reason, not an operational error: the answer to "may I act?" is still no, and a
 * script that tells 0 from 20 gets it in the form it expects.
 */
function heldOnCorrupt(ledger: LedgerReader, o: GateRunOptions, op: string, err: LedgerError): GateRun {
  let chainReason = `the ledger cannot be read: ${err.message}`;
  let extra = { floor_seq: null as number | null, checked: 0, warnings: [] as string[] };
  try {
    const report = runAuditSyncInternal({ dir: ledger.paths.dir, trust: o.trust, trustPath: o.trustPath, floorPath: o.floorPath ?? null, now: o.now });
    if (!report.ok) chainReason = `the chain does not audit clean: ${report.verdict}`;
    extra = { floor_seq: report.floor?.seq ?? null, checked: report.checked, warnings: report.warnings };
  } catch {
    /* keep the reader's reason */
  }
  const why = 'cannot be evaluated on a ledger that cannot be read';
  return {
    ok: false,
    failed_term: 'handoff_valid',
    terms: { handoff_valid: false, outcome_accepted: false, invariants_satisfied: false, state_current: false, dependencies_true: false },
    reason: `handoff_valid: ${chainReason}`,
    reasons: { handoff_valid: [chainReason, err.message], outcome_accepted: [why], invariants_satisfied: [why], state_current: [why], dependencies_true: [why] },
    op,
    handoff: null,
    head: { seq: -1, tail: '' },
    ...emptyFindings(),
    chain: { ok: false, reason: chainReason, ...extra },
  };
}

const isCorrupt = (e: unknown): e is LedgerError => e instanceof LedgerError && e.code === 'OP_CORRUPT';

/**
 * Policy: a gate whose consumption could not be published holds, under handoff_valid (where a
 * consumption already made holds too): exactly once means every machine sees the consume
 * before anyone acts on it, so a consume that exists only here (queued, --offline) is none.
 */
function heldUnpublished(run: GateRun, why: string): GateRun {
  const reason = `the consumption could not be published: ${why}`;
  return { ...run, ok: false, failed_term: 'handoff_valid', terms: { ...run.terms, handoff_valid: false }, reason: `handoff_valid: ${reason}`, reasons: { ...run.reasons, handoff_valid: [reason] } };
}

/** `ledger gate OP`: evaluates on the current HEAD without taking the writer lock. */
export function runGate(ledger: LedgerReader, o: GateRunOptions, op: string): GateRun {
  let last: GateRun | null = null;
  try {
    // A writer may append between our HEAD and the audit's; evaluate again on the new HEAD.
    for (let attempt = 0; attempt < 3; attempt++) {
      const head = ledger.head();
      const { moved, ...run } = evaluateAt(ledger, o, op, head, null);
      last = run;
      if (!moved) return last;
    }
  } catch (e) {
    if (isCorrupt(e)) return heldOnCorrupt(ledger, o, op, e);
    throw e;
  }
  return last!;
}

/**
 * `ledger gate OP --consume-as C`: under the writer lock, evaluates the gate on the locked HEAD
 * (duplicate delivery included) and, only if it passes, appends the consume record in the same
 * critical section. Two consumers racing for one handoff are serialised by the lock: each sees
 * the other's consume record or none, never half of one.
 */
export function runGateAndConsume(writer: LedgerWriter, o: GateRunOptions & { agent: string }, op: string, consumer: string): GateRun {
  const paths = writer.paths;
  let result: GateRun | null = null;
  const decide = (view: LockedView): Draft[] => {
    // Under the lock nothing can move: the audit sees this very HEAD.
    const { moved: _moved, ...run } = evaluateAt(writer, o, op, view.head, consumer);
    result = run;
    if (!result.ok) return [];
    return [{ kind: 'consume', agent: o.agent, logical_operation_id: op, consumer, handoff: result.handoff!.id, seen_head: { seq: view.head.seq, tail: view.head.tail } } as Draft];
  };
  let appended: { id: string; seq: number } | undefined;
  try {
    // Bring the index up to date before the lock, so the critical section reads only what is new.
    CausalView.open(paths, writer.head(), { trust: null }).close();
    // The consume draft is built by decide, so transact validates it like any other. It must be
    // published (a joined ledger): never queued by --offline.
    appended = transact({ ...writer.store, mustPublish: true }, writer.signer(), decide).records[0];
  } catch (e) {
    if (isCorrupt(e)) return { ...heldOnCorrupt(writer, o, op, e), consume: { consumer, id: null, seq: null } };
    const unpublished = e instanceof LedgerError && e.code === 'OP_REMOTE_UNREACHABLE' && e.data.not_queued === true;
    if (unpublished && result !== null) return { ...heldUnpublished(result, e.message), consume: { consumer, id: null, seq: null } };
    throw e;
  }
  if (!result) throw new LedgerError('INTERNAL', 'the gate was not evaluated under the lock');
  return { ...(result as GateRun), consume: { consumer, id: appended?.id ?? null, seq: appended?.seq ?? null } };
}
