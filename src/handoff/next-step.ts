// The one next step for whoever reads a work item (issue 24.4): said the same way by `status`,
// `resume`, the MCP tools and the hooks, as the exact call for the caller: the command line's
// flags (`cli`), or an MCP tool's arguments (`mcp`). When the owner is gone (its own latest
// record is its hook's session-end or interrupted note, or its lease lapsed), the next step is
// the takeover; an item another agent finished is never offered for reopening to the agent it
// was taken from. Record text in it is quoted and attributed (SPEC 12: annotations.ts `quoted`).
import { oneLine } from '../text/lines.js';
import { quoted } from './annotations.js';
import { span } from './lease.js';
import type { OwnerGone } from './workitems.js';

export type Caller = 'cli' | 'mcp';

/** A call of `start`, as either caller writes it. */
export interface StartCall { slug: string; takeover?: boolean; force?: boolean; reason?: string }

const shq = (s: string) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function renderStart(c: StartCall, caller: Caller): string {
  if (caller === 'mcp') {
    const args: Record<string, unknown> = { slug: c.slug, summary: '<what you will do>' };
    if (c.takeover) args.takeover = true;
    if (c.force) args.force = true;
    if (c.reason !== undefined) args.reason = c.reason;
    return `call start with ${JSON.stringify(args)}`;
  }
  return ['ledger', 'start', shq(c.slug), '--summary', "'<what you will do>'", ...(c.takeover ? ['--takeover'] : []), ...(c.force ? ['--force'] : []), ...(c.reason !== undefined ? ['--reason', shq(c.reason)] : [])].join(' ');
}

/** Why the owner is gone, in words (its hook's note quoted). */
export function goneWords(owner: string, g: OwnerGone, now: Date): string {
  const ago = `${span(now.getTime() - Date.parse(g.at))} ago`;
  if (g.why === 'lease-lapsed') return `${owner}'s lease lapsed ${ago} (${g.at})`;
  const what = g.why === 'interrupted' ? 'was interrupted' : 'ended';
  return `${owner}'s session ${what} ${ago} (its hook's note, seq ${g.seq}${g.detail ? `: ${quoted(oneLine(g.detail, 160))}` : ''})`;
}

/** The takeover call for an item whose owner is gone: force and a reason while the lease is still live. */
export function takeoverCall(slug: string, owner: string, g: OwnerGone): StartCall {
  const reason = g.why === 'lease-lapsed'
    ? `${owner}'s lease lapsed at ${g.at}`
    : `${owner}'s session ${g.why === 'interrupted' ? 'was interrupted' : 'ended'} at ${g.at} (note seq ${g.seq}); continuing its work`;
  return g.live ? { slug, takeover: true, force: true, reason } : { slug, takeover: true, reason };
}

/** "take it over: <call>" for an item whose owner is gone. */
export function takeoverStep(slug: string, owner: string, g: OwnerGone, now: Date, caller: Caller): string {
  return `${goneWords(owner, g, now)}: take it over: ${renderStart(takeoverCall(slug, owner, g), caller)}`;
}

/** What `resumeStep` reads of a resume report (resume.ts ResumeReport). */
export interface ResumeFacts {
  slug: string;
  status: 'open' | 'finished';
  owner: string | null;
  outcome: string | null;
  lease: { until: string | null; live: boolean };
  taken_over: { agent: string; by: string; at: string } | null;
  owner_gone: OwnerGone | null;
  /** The latest checkpoint's or finish's next action and who recorded it when (null: none yet). */
  latest: { next: string; agent: string; ts: string; seq: number } | null;
}

/** The one next step after reading an item (resume's first line of advice, the MCP next_action). */
export function resumeStep(r: ResumeFacts, asker: string | null, now: Date, caller: Caller): string {
  const recorded = r.latest ? `${r.latest.agent === asker ? 'your' : `${r.latest.agent}'s`} last checkpoint's next step (seq ${r.latest.seq}, ${span(now.getTime() - Date.parse(r.latest.ts))} ago): ${quoted(oneLine(r.latest.next, 200))}` : null;
  const takenFromAsker = asker !== null && r.taken_over !== null && r.taken_over.agent === asker && r.owner !== asker;
  if (r.status === 'finished') {
    if (takenFromAsker || (asker !== null && r.owner !== asker)) {
      return `${r.slug} is finished (${r.outcome}) by ${r.owner}${takenFromAsker ? `, who took it over from you at ${r.taken_over!.at}` : ''}: nothing is left to do on it; do not checkpoint or restart it (call status for other work)`;
    }
    return `${r.slug} is finished (${r.outcome}); start it again only if more work is needed on it`;
  }
  if (r.owner === null) return `${r.slug} was released: take it (no takeover needed): ${renderStart({ slug: r.slug }, caller)}`;
  if (r.owner === asker) return recorded ? `continue it; ${recorded}` : `continue ${r.slug} and checkpoint after the first verified milestone`;
  if (takenFromAsker) return `${r.slug} was taken over from you by ${r.owner} at ${r.taken_over!.at}: it is ${r.owner}'s now; do not checkpoint it (call status for other work)`;
  if (r.owner_gone) return `${takeoverStep(r.slug, r.owner, r.owner_gone, now, caller)}${recorded ? `; then ${recorded}` : ''}`;
  return `${r.slug} is ${r.owner}'s while its lease is live (until ${r.lease.until}): pick another item, or add a note`;
}
