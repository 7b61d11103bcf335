// One owner per work item: the decisions of start, checkpoint and finish, as pure functions of
// the folded state and the command's captured `now`. The workflow (workflow.ts) calls them twice: once before
// any slow work (a test run) to fail fast, and again inside the store's transact, under the writer lock on
// the current HEAD, where the answer is final (two processes racing to start a slug cannot both
// win, because the second one decides on a HEAD that already holds the first one's start).
//
// Refusals are LedgerErrors (exit 2, nothing written), each stating what was wrong, with what to do
// as its hint (the takeover flags themselves, --force only with --takeover and --reason, are the
// request's: ../requests/work.ts checkTakeoverFlags):
//   INPUT_CONFLICT   another agent owns the item: its lease is live and --takeover --force was not
//                    given, or it lapsed and --takeover was not given; a checkpoint, finish or
//                    release from anyone but the owner (the old owner after a takeover is told who
//                    took over, when, and why)
//   INPUT_NOT_FOUND  checkpoint/finish/release/note of a slug that was never started
//   INPUT_REFUSED    checkpoint/finish/release of a finished item or of a released one (nobody owns
//                    it: a start takes it); --takeover with nothing to take over (never started,
//                    finished, or released)
import { LedgerError } from '../errors.js';
import type { StartPayload, Takeover } from '../record.js';
import { describeLease, leaseLive, leaseUntil } from './lease.js';
import type { Entry, WorkItem } from './workitems.js';

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
  /** Take over a live lease (with takeover and reason; checked with the request, ../requests/work.ts). */
  force: boolean;
  /** Why the item is taken over; required with force. */
  reason: string | null;
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
  if (item === undefined || item.status === 'finished' || item.owner === null) {
    if (req.takeover) {
      const why = item === undefined
        ? `${req.slug} has never been started`
        : item.owner === null
          ? `${req.slug} was released by ${item.released!.agent} at ${item.released!.ts}; nobody owns it`
          : `${req.slug} was finished (${item.outcome}) by ${item.owner}`;
      const hint = item === undefined ? 'start it without --takeover' : `read \`ledger resume ${req.slug}\` first; start it without --takeover`;
      throw new LedgerError('INPUT_REFUSED', `nothing to take over: ${why}`, { slug: req.slug, status: item === undefined ? 'none' : item.owner === null ? 'released' : item.status }, hint);
    }
    return payload;
  }
  const owner = item.owner;
  const previous: Takeover = { agent: owner, execution_id: item.execution_id, lease_until: item.lease_until! };
  const why = req.reason !== null ? { reason: req.reason } : {};
  // Policy: an agent re-starting an item it owns (a new session after a context or usage limit)
  // is allowed, live lease or not, without --takeover: the agent name is the owner. The start
  // still opens a new execution and records the one it replaces in `takeover`, so the trail
  // shows that the earlier session ended without a finish.
  if (owner === req.agent) return { ...payload, takeover: { ...previous, ...why } };
  if (leaseLive(item.lease_until!, req.now)) {
    if (req.takeover && req.force) {
      // The one way past a live lease: recorded as forced, with the reason and the previous
      // owner, so the views and resume say so loudly and the old owner's writes are refused.
      return { ...payload, takeover: { ...previous, forced: true, reason: req.reason! } };
    }
    throw new LedgerError(
      'INPUT_CONFLICT',
      `slug ${req.slug} is owned by ${owner} until ${item.lease_until}${req.takeover ? '; a live lease is taken over only with --force --reason' : ''}`,
      { slug: req.slug, owner, execution_id: item.execution_id, lease_until: item.lease_until, takeover_requested: req.takeover },
      `wait, or ask ${owner} to release it (\`ledger release ${req.slug}\`); if ${owner}'s session is gone (a usage limit), \`--takeover --force --reason TEXT\` takes it over, recorded`,
    );
  }
  if (!req.takeover) {
    throw new LedgerError(
      'INPUT_CONFLICT',
      `slug ${req.slug} is owned by ${owner} (execution ${item.execution_id}), whose lease ${describeLease(item.lease_until!, req.now)}`,
      { slug: req.slug, owner, execution_id: item.execution_id, lease_until: item.lease_until },
      `read \`ledger resume ${req.slug}\`, then start it with --takeover to take it over`,
    );
  }
  // Policy: --force on a lapsed lease is an ordinary takeover (nothing live was broken), so the
  // record does not say forced; a --reason given is kept.
  return { ...payload, takeover: { ...previous, ...why } };
}

export interface WriteRequest {
  slug: string;
  agent: string;
  kind: 'checkpoint' | 'finish' | 'release';
  now: Date;
}

export interface WriteDecision {
  execution_id: string;
  /** Set when the writer's own lease had lapsed (nobody took over): the write renews/ends it. */
  lapsedAt: string | null;
}

/** Decides whether `agent` may checkpoint, finish or release `slug`; throws the refusal. */
export function decideWrite(item: WorkItem | undefined, req: WriteRequest): WriteDecision {
  if (item === undefined) {
    throw new LedgerError('INPUT_NOT_FOUND', `no work item ${req.slug} in this ledger`, { slug: req.slug }, `take it first: \`ledger start ${req.slug} --agent ${req.agent} --summary ...\``);
  }
  if (item.status === 'finished') {
    // Policy (issue 26): an agent whose work another finished is told the story and sent to
    // read it, never advised to reopen another agent's work (an agent that obeys would).
    const mine = item.owner === req.agent;
    const fin = item.entries.findLast((e) => e.record.kind === 'finish');
    const when = fin ? ` at ${fin.record.ts} (seq ${fin.seq})` : '';
    throw new LedgerError(
      'INPUT_REFUSED',
      `work item ${req.slug} was finished (${item.outcome}) by ${item.owner}${when}${mine ? '' : takenFrom(item, req.agent)}; a ${req.kind} needs an open item`,
      { slug: req.slug, status: 'finished', owner: item.owner, outcome: item.outcome, ...(mine ? {} : takenFromData(item, req.agent)) },
      mine ? `\`ledger start ${req.slug}\` reopens it` : `read \`ledger resume ${req.slug}\` for what ${item.owner} did; the item is not yours to reopen`,
    );
  }
  if (item.owner === null) {
    const r = item.released!;
    throw new LedgerError(
      'INPUT_REFUSED',
      `work item ${req.slug} was released by ${r.agent} at ${r.ts} (seq ${r.seq}); nobody owns it, and a ${req.kind} needs its owner`,
      { slug: req.slug, status: 'released', released_by: r.agent, released_at: r.ts },
      `\`ledger start ${req.slug} --agent ${req.agent} --summary ...\` takes it (no --takeover needed)`,
    );
  }
  const live = leaseLive(item.lease_until!, req.now);
  if (item.owner !== req.agent) {
    const takenFromYou = lastTakeoverFrom(item, req.agent) !== undefined;
    const what = takenFromYou
      ? `read \`ledger resume ${req.slug}\` for what ${item.owner} has done since; the item is ${item.owner}'s now`
      : live
        ? `wait, or ask ${item.owner} to finish or release it`
        : `the lease has lapsed: to continue it yourself, \`ledger start ${req.slug} --agent ${req.agent} --takeover --summary ...\` first`;
    throw new LedgerError(
      'INPUT_CONFLICT',
      `only the owner may ${req.kind} ${req.slug}: it is owned by ${item.owner} (execution ${item.execution_id}), lease ${describeLease(item.lease_until!, req.now)}, not by ${req.agent}${takenFrom(item, req.agent)}`,
      { slug: req.slug, owner: item.owner, execution_id: item.execution_id, lease_until: item.lease_until, agent: req.agent, ...takenFromData(item, req.agent) },
      what,
    );
  }
  // Policy: an owner whose lease lapsed but whom nobody took over is still the owner; its
  // checkpoint renews the lease, its finish closes the item and its release hands it back (with
  // a warning on stderr).
  return { execution_id: item.execution_id, lapsedAt: live ? null : item.lease_until };
}

/** The latest start that took the item from `agent` (the old owner is told who, when and why). */
function lastTakeoverFrom(item: WorkItem, agent: string): Entry | undefined {
  return item.entries.findLast((e) => e.record.kind === 'start' && e.record.takeover?.agent === agent && e.record.agent !== agent);
}

function takenFrom(item: WorkItem, agent: string): string {
  const e = lastTakeoverFrom(item, agent);
  if (e?.record.kind !== 'start' || !e.record.takeover) return '';
  const t = e.record.takeover;
  const how = t.forced ? ' while its lease was live' : '';
  return ` (your execution ${t.execution_id} was taken over by ${e.record.agent} at ${e.record.ts}${how}${t.reason !== undefined ? `: ${JSON.stringify(t.reason)}` : ''})`;
}

function takenFromData(item: WorkItem, agent: string): Record<string, unknown> {
  const e = lastTakeoverFrom(item, agent);
  if (e?.record.kind !== 'start' || !e.record.takeover) return {};
  const t = e.record.takeover;
  return { taken_over: { by: e.record.agent, at: e.record.ts, execution_id: t.execution_id, forced: t.forced === true, reason: t.reason ?? null } };
}

/** Policy: a note needs a work item of that slug (started at least once, open or finished), so a
 * mistyped slug is refused instead of leaving a note that no view shows; it decides nothing else. */
export function decideNote(item: WorkItem | undefined, req: { slug: string; agent: string }): void {
  if (item === undefined) {
    throw new LedgerError('INPUT_NOT_FOUND', `no work item ${req.slug} in this ledger (no start record); a note attaches to a work item`, { slug: req.slug }, '`ledger status` lists the open items');
  }
}
