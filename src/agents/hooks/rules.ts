// What the hooks say, whatever the agent (SPEC 12), as pure functions of the work log, the status
// and `now`; hooks/claude.ts and hooks/codex.ts put it in each agent's format.
//   session start (and after a compaction): the agent's own open items with their latest
//     checkpoint and next action, then what is open for others, within a small budget;
//   stop: block once, naming the command to run, when the agent owns an item with a live lease
//     and has changed the work tree since its last checkpoint, or has not checkpointed for 30
//     minutes (the essay's cadence); never when the agent says a stop hook is already active;
//   session end: a note on each such item, so the next session knows the work was left there.
import { takenFromLine, type StatusItem, type StatusReport } from '../../handoff/status.js';
import { leaseLive, span } from '../../handoff/lease.js';
import { oneLine } from '../../text/lines.js';
import { neutraliseLine } from '../../text/sanitize.js';
import type { WorkItem, WorkLog } from '../../handoff/workitems.js';
import { quoted } from '../../index.js';
import { takeoverStep } from '../../index.js';
import type { CodePlace } from '../../record.js';
import { currencyLine, type Currency } from '../../index.js';

/** SPEC 12 / the essay: checkpoint at least this often. */
export const CHECKPOINT_CADENCE_MS = 30 * 60_000;
/** Policy: the session-start context is at most this many lines and characters. */
export const CONTEXT_MAX_LINES = 30;
export const CONTEXT_MAX_CHARS = 3_000;

/** Record text reaches the agent's context on one line, quoted (SPEC 12: set apart from the
 *  hook's own words, annotations.ts `quoted`), every control, bidi or invisible code point shown
 *  as its escape (src/text/sanitize.ts, the CLI's own sinks' rule). */
const clean = (text: string, max: number) => neutraliseLine(quoted(oneLine(text, max)));

function leaseWords(i: StatusItem): string {
  if (i.lease.state === 'live') return `lease live, ${span(i.lease.ms)} left`;
  if (i.lease.state === 'lapsed') return `lease LAPSED ${span(i.lease.ms)} ago`;
  return `released ${span(i.lease.ms)} ago by ${i.released?.by ?? '?'} (start it to take it; no takeover needed)`;
}

/**
 * The additional context of a session start. `currency`: how current the copy it was read from
 * is (SPEC 11: said first; null when the ledger is not shared through a remote). Record text is
 * quoted beside who wrote it and when (SPEC 12); a next step for an item whose owner is gone is
 * the takeover, as the MCP tool's arguments.
 */
export function sessionContext(s: StatusReport, agent: string | null, currency: Currency | null = null): string {
  const mine = s.items.filter((i) => agent !== null && i.owner === agent);
  const others = s.items.filter((i) => !(agent !== null && i.owner === agent));
  const who = agent ? `you write as "${agent}"` : 'no LEDGER_AGENT is set, so no item is yours';
  const now = new Date(s.now);
  const lines = [`handoff-ledger: this project keeps a signed handoff ledger (through seq ${s.through?.seq ?? 0}); ${who}.`];
  if (currency) lines.push(currency.current ? `Shared through a git remote: ${currencyLine(currency)}.` : `${currencyLine(currency)}. Call the sync tool before acting on who owns what.`);
  for (const t of s.taken_from_you.slice(0, 3)) lines.push(`${takenFromLine(t)}.`);
  if (mine.length) {
    lines.push('Your open items (resume SLUG reads one in full):');
    for (const i of mine) {
      const cp = i.last_checkpoint;
      lines.push(`- ${i.slug}: ${leaseWords(i)}; ${cp ? `last checkpoint ${span(cp.age_ms)} ago (seq ${cp.seq})` : 'no checkpoint yet'}`);
      lines.push(cp ? `  the next step you recorded: ${clean(cp.next, 200)}` : `  your summary at its start: ${clean(i.summary, 200)}`);
    }
  } else if (agent) lines.push('You own no open item.');
  if (others.length) {
    lines.push('Open for others:');
    for (const i of others) {
      const owner = i.owner === null ? 'nobody' : i.owner;
      const cp = i.last_checkpoint;
      const said = cp ? `${cp.agent}'s recorded next step (seq ${cp.seq}, ${span(cp.age_ms)} ago): ${clean(cp.next, 100)}` : `${owner}'s summary: ${clean(i.summary, 100)}`;
      lines.push(`- ${i.slug} (${owner}; ${leaseWords(i)}): ${said}`);
      if (i.owner !== null && i.owner_gone) lines.push(`  ${neutraliseLine(takeoverStep(i.slug, i.owner, i.owner_gone, now, 'mcp'))}`);
    }
  }
  if (s.pending_intents.length || s.unresolved_outcomes.length) {
    lines.push(`Also: ${s.pending_intents.length} pending intent(s) and ${s.unresolved_outcomes.length} unresolved outcome(s); the status tool lists them.`);
  }
  lines.push('Work rule: start SLUG before substantive work; checkpoint after each verified milestone and at least every 30 minutes, with tests_cmd; finish or release before you stop.');
  return fit(lines);
}

/** Keeps the first lines and the last (the rule) within the budget, saying how many were cut. */
function fit(lines: string[]): string {
  const rule = lines[lines.length - 1];
  const body = lines.slice(0, -1);
  const size = (xs: string[]) => xs.reduce((n, l) => n + l.length + 1, 0);
  let kept = body.slice(0, CONTEXT_MAX_LINES - 2);
  while (kept.length > 1 && size(kept) + rule.length + 80 > CONTEXT_MAX_CHARS) kept = kept.slice(0, -1);
  const cut = body.length - kept.length;
  return [...kept, ...(cut ? [`… (${cut} more lines: call the status tool)`] : []), rule].join('\n');
}

/** When the current execution last wrote: its latest checkpoint, else its start, with the work tree's content it recorded. */
export function lastWrite(item: WorkItem): { ts: string; seq: number; kind: string; content: string | null } | null {
  for (let i = item.entries.length - 1; i >= 0; i--) {
    const e = item.entries[i];
    if (e.stray || e.record.execution_id !== item.execution_id || e.record.agent !== item.owner) continue;
    const code = (e.record as { code?: CodePlace }).code;
    return { ts: e.record.ts, seq: e.seq, kind: e.record.kind, content: code?.git?.content ?? null };
  }
  return null;
}

/** The agent's open items with a live lease, each with its last write's seq (the notes a session's end leaves). */
export function ownLiveItems(log: WorkLog, agent: string, now: Date): { slug: string; sinceSeq: number }[] {
  const out: { slug: string; sinceSeq: number }[] = [];
  for (const item of log.items.values()) {
    if (item.status !== 'open' || item.owner !== agent || item.lease_until === null || !leaseLive(item.lease_until, now)) continue;
    out.push({ slug: item.slug, sinceSeq: lastWrite(item)?.seq ?? -1 });
  }
  return out;
}

/** Whether the agent's hook already noted this session's end (or interruption) after its last write: notes do not pile up. */
export function alreadyNoted(item: WorkItem, agent: string, sinceSeq: number): boolean {
  return item.notes.some((n) => n.agent === agent && n.event !== null && n.seq > sinceSeq);
}

export interface Unrecorded {
  slug: string;
  lease_until: string;
  since: { ts: string; seq: number; kind: string; content: string | null };
  /** Whether the work tree changed since; null when that cannot be told. */
  changed: boolean | null;
  stale: boolean;
}

/** Whether `agent` owns an open item with a live lease: only then does a stop ask git anything. */
export function ownsLiveItem(log: WorkLog, agent: string, now: Date): boolean {
  for (const i of log.items.values()) if (i.status === 'open' && i.owner === agent && i.lease_until !== null && leaseLive(i.lease_until, now)) return true;
  return false;
}

/**
 * The agent's items with a live lease whose work is not recorded: the work tree's content
 * differs from what the last checkpoint (or the start) recorded (SPEC 12: content, not HEAD: a
 * commit of exactly the checkpointed work is not a change), or there was none for
 * CHECKPOINT_CADENCE_MS. A record that carries no content digest (an older writer, no git) is
 * compared by time: `changedSince`. `content` and `changedSince` are asked only for the agent's
 * own live items, so a stop outside any work costs no git run.
 */
export function unrecordedWork(log: WorkLog, agent: string, now: Date, changedSince: (sinceMs: number) => boolean | null, content: () => string | null = () => null): Unrecorded[] {
  const out: Unrecorded[] = [];
  for (const item of log.items.values()) {
    if (item.status !== 'open' || item.owner !== agent || item.lease_until === null || !leaseLive(item.lease_until, now)) continue;
    const since = lastWrite(item);
    if (!since) continue;
    const sinceMs = Date.parse(since.ts);
    const stale = now.getTime() - sinceMs >= CHECKPOINT_CADENCE_MS;
    const now_ = since.content !== null ? content() : null;
    const changed = since.content !== null && now_ !== null ? now_ !== since.content : changedSince(sinceMs);
    if (stale || changed === true) out.push({ slug: item.slug, lease_until: item.lease_until, since, changed, stale });
  }
  return out.sort((a, b) => (a.slug < b.slug ? -1 : 1));
}

/**
 * Whether unrecordedWork will compare any of the agent's live items by time: one whose last
 * record carries no content digest, or when the content now cannot be told. Only then is the
 * work tree's last change worth a git run (the hook asks this first; `content` is memoized).
 */
export function comparesByTime(log: WorkLog, agent: string, now: Date, content: () => string | null): boolean {
  for (const item of log.items.values()) {
    if (item.status !== 'open' || item.owner !== agent || item.lease_until === null || !leaseLive(item.lease_until, now)) continue;
    const since = lastWrite(item);
    if (since && (since.content === null || content() === null)) return true;
  }
  return false;
}

/** The stop hook's reason: what is unrecorded and the one command to run. */
export function stopReason(items: readonly Unrecorded[], now: Date): string {
  const what = items.map((u) => {
    const ago = span(now.getTime() - Date.parse(u.since.ts));
    const last = u.since.kind === 'start' ? `you started it ${ago} ago and have not checkpointed` : `your last checkpoint was ${ago} ago (seq ${u.since.seq})`;
    const why = u.changed ? 'you changed the work tree since' : `no checkpoint for ${ago}`;
    return `${u.slug} (${last}; ${why})`;
  });
  const slug = items[0].slug;
  return [
    `handoff-ledger: you own ${what.join(' and ')}, and that work is not recorded.`,
    `Before stopping, call the checkpoint tool for ${slug} (done, state, one next action, tests_cmd so the real test output is recorded), or run \`ledger checkpoint ${slug} --done TEXT --state TEXT --next TEXT --tests-cmd CMD\`;`,
    'if the work is complete, finish it instead; if you are handing it back, release it.',
  ].join(' ');
}

/** The note a session end leaves on an item whose work was not recorded. */
export function sessionEndNote(u: Unrecorded, reason: string | null, now: Date): string {
  const ago = span(now.getTime() - Date.parse(u.since.ts));
  const why = u.changed ? 'with work-tree changes after its last checkpoint' : `without a checkpoint for ${ago}`;
  return `The session ended${reason ? ` (${neutraliseLine(oneLine(reason, 40))})` : ''} ${why} (seq ${u.since.seq}, ${ago} ago); what was done since is not recorded. Resume from the work tree, not only from the last checkpoint.`;
}

/**
 * The note Claude Code's StopFailure leaves (issue 24.4): the turn ended on an API error (a usage
 * or rate limit), so the owner may not be back soon; whoever comes next sees why and may take
 * the item over. `error`: Claude Code's error type; `details`: its message, bounded.
 */
export function interruptedNote(error: string | null, details: string | null, unrecorded: Unrecorded | null, now: Date): string {
  const what = error ? `an API error (${neutraliseLine(oneLine(error, 40))}${details ? `: ${neutraliseLine(oneLine(details, 200))}` : ''})` : 'an API error';
  const left = unrecorded
    ? `, ${unrecorded.changed ? 'with work-tree changes after its last record' : `without a checkpoint for ${span(now.getTime() - Date.parse(unrecorded.since.ts))}`} (seq ${unrecorded.since.seq}): resume from the work tree, not only from the last checkpoint`
    : '';
  return `The session was interrupted by ${what}${left}. Its owner may not be back soon; whoever comes next may take this item over.`;
}
