// One owner per work item: the decisions of start, checkpoint and finish, as pure functions of
// the folded state and the command's captured `now`. The workflow (workflow.ts) calls them twice: once before
// any slow work (a test run) to fail fast, and again inside the store's transact, under the writer lock on
// the current HEAD, where the answer is final (two processes racing to start a slug cannot both
// win, because the second one decides on a HEAD that already holds the first one's start).
//
// Refusals are LedgerErrors (exit 2, nothing written), each stating what was wrong, with what to do
// as its hint:
//   INPUT_CONFLICT   another agent owns the item (its lease is live, or it lapsed and --takeover
//                    was not given); a live lease can never be taken over
//   INPUT_NOT_FOUND  checkpoint/finish of a slug that was never started
//   INPUT_REFUSED    checkpoint/finish of a finished item; --takeover with nothing to take over
import { LedgerError } from '../errors.js';
import type { StartPayload } from '../record.js';
import { describeLease, leaseLive, leaseUntil } from './lease.js';
import type { WorkItem } from './workitems.js';

/**
 * Execution ids: `<agent>-<seq>`, where seq is the seq of the start record that opens the
 * execution and `@` in the agent becomes `_` (an id string has no `@`). Deterministic (no
 * randomness, so the record is a function of the ledger and the flags), unique in the ledger
 * (seqs are), and readable: `codex-12` says who and when.
 */
export function executionIdFor(agent: string, startSeq: number): string {
  return `${agent.replace(/@/g, '_')}-${startSeq}`;
}

export interface StartRequest {
  slug: string;
  agent: string;
  summary: string;
  leaseMs: number;
  takeover: boolean;
  now: Date;
  /** The seq the start record will get (HEAD's seq + 1, known under the lock). */
  seq: number;
}

/** Decides a start; returns its payload or throws the refusal. */
export function decideStart(item: WorkItem | undefined, req: StartRequest): StartPayload {
  const payload: StartPayload = {
    logical_operation_id: req.slug,
    execution_id: executionIdFor(req.agent, req.seq),
    summary: req.summary,
    lease_until: leaseUntil(req.now, req.leaseMs),
  };
  if (item === undefined || item.status === 'finished') {
    if (req.takeover) {
      const why = item === undefined ? `${req.slug} has never been started` : `${req.slug} was finished (${item.outcome}) by ${item.owner}`;
      const hint = item === undefined ? 'start it without --takeover' : `read \`ledger resume ${req.slug}\` first; start it without --takeover`;
      throw new LedgerError('INPUT_REFUSED', `nothing to take over: ${why}`, { slug: req.slug, status: item?.status ?? 'none' }, hint);
    }
    return payload;
  }
  const previous = { agent: item.owner, execution_id: item.execution_id, lease_until: item.lease_until! };
  // Policy: an agent re-starting an item it owns (a new session after a context or usage limit)
  // is allowed, live lease or not, without --takeover: the agent name is the owner. The start
  // still opens a new execution and records the one it replaces in `takeover`, so the trail
  // shows that the earlier session ended without a finish.
  if (item.owner === req.agent) return { ...payload, takeover: previous };
  if (leaseLive(item.lease_until!, req.now)) {
    throw new LedgerError(
      'INPUT_CONFLICT',
      `slug ${req.slug} is owned by ${item.owner} until ${item.lease_until}`,
      { slug: req.slug, owner: item.owner, execution_id: item.execution_id, lease_until: item.lease_until, takeover_requested: req.takeover },
      `wait, or ask ${item.owner} to finish it (takeover is possible only after the lease lapses: --takeover)`,
    );
  }
  if (!req.takeover) {
    throw new LedgerError(
      'INPUT_CONFLICT',
      `slug ${req.slug} is owned by ${item.owner} (execution ${item.execution_id}), whose lease ${describeLease(item.lease_until!, req.now)}`,
      { slug: req.slug, owner: item.owner, execution_id: item.execution_id, lease_until: item.lease_until },
      `read \`ledger resume ${req.slug}\`, then start it with --takeover to take it over`,
    );
  }
  return { ...payload, takeover: previous };
}

export interface WriteRequest {
  slug: string;
  agent: string;
  kind: 'checkpoint' | 'finish';
  now: Date;
}

export interface WriteDecision {
  execution_id: string;
  /** Set when the writer's own lease had lapsed (nobody took over): the write renews/ends it. */
  lapsedAt: string | null;
}

/** Decides whether `agent` may checkpoint or finish `slug`; throws the refusal. */
export function decideWrite(item: WorkItem | undefined, req: WriteRequest): WriteDecision {
  if (item === undefined) {
    throw new LedgerError('INPUT_NOT_FOUND', `no work item ${req.slug} in this ledger`, { slug: req.slug }, `take it first: \`ledger start ${req.slug} --agent ${req.agent} --summary ...\``);
  }
  if (item.status === 'finished') {
    throw new LedgerError(
      'INPUT_REFUSED',
      `work item ${req.slug} was finished (${item.outcome}) by ${item.owner}; a ${req.kind} needs an open item`,
      { slug: req.slug, status: 'finished', owner: item.owner, outcome: item.outcome },
      `\`ledger start ${req.slug}\` reopens it`,
    );
  }
  const live = leaseLive(item.lease_until!, req.now);
  if (item.owner !== req.agent) {
    const what = live
      ? `wait, or ask ${item.owner} to finish it`
      : `the lease has lapsed: to continue it yourself, \`ledger start ${req.slug} --agent ${req.agent} --takeover --summary ...\` first`;
    // The old owner after a takeover is told so, not just that someone else owns the item.
    const takenFrom = item.entries.findLast((e) => e.record.kind === 'start' && e.record.takeover?.agent === req.agent && e.record.agent !== req.agent);
    const taken = takenFrom?.record.kind === 'start' && takenFrom.record.takeover
      ? ` (your execution ${takenFrom.record.takeover.execution_id} was taken over by ${takenFrom.record.agent} at ${takenFrom.record.ts})`
      : '';
    throw new LedgerError(
      'INPUT_CONFLICT',
      `only the owner may ${req.kind} ${req.slug}: it is owned by ${item.owner} (execution ${item.execution_id}), lease ${describeLease(item.lease_until!, req.now)}, not by ${req.agent}${taken}`,
      { slug: req.slug, owner: item.owner, execution_id: item.execution_id, lease_until: item.lease_until, agent: req.agent },
      what,
    );
  }
  // Policy: an owner whose lease lapsed but whom nobody took over is still the owner; its
  // checkpoint renews the lease and its finish closes the item (with a warning on stderr).
  return { execution_id: item.execution_id, lapsedAt: live ? null : item.lease_until };
}
