// `ledger resume SLUG`: the short, bounded read for whoever takes a work item over (at most 80
// lines): owner and lease, the latest checkpoint in full, the trail, the evidence that changed
// since that checkpoint, what was committed since its last test run (changes-since.ts), and what
// git says. Built as data first (the --json output), then shaped
// into lines under the budget.
import { relative } from 'node:path';
import { LedgerError } from '../errors.js';
import { redigestSource } from '../causal/evidence.js';
import type { Evidence } from '../record.js';
import { blobPath } from './blobs.js';
import type { GitFacts } from './git.js';
import { changesSince, changesSinceLines, type ChangesSince } from './changes-since.js';
import { describeLease, leaseLive } from './lease.js';
import { entryData, trailLine, TRAIL_LENGTH } from './render-yml.js';
import { clipLines, oneLine, textLines } from '../text/lines.js';
import { excerptWithin } from './excerpt.js';
import { quoted, releaseLine, takeoverLine } from './annotations.js';
import { latestCheckpoint, ownerGone, type Entry, type OwnerGone, type WorkItem, type WorkLog } from './workitems.js';
import { resumeStep, type Caller } from './next-step.js';
import type { CodePlace } from '../record.js';
import { existsSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';

export const RESUME_MAX_LINES = 80;

export interface EvidenceReport {
  /** The seq of the checkpoint the digests are compared with (null: none recorded yet). */
  as_of_seq: number | null;
  unchanged: string[];
  changed: { name: string; source: string; recorded: string; now: string }[];
  gone: { name: string; source: string; reason: string }[];
  /** Evidence given as a bare digest: there is nothing to digest again. */
  unverifiable: { name: string; source: string }[];
}

/** The work item's own fields as they are, then what `resume` adds (the JSON of `ledger resume`). */
export interface ResumeReport extends Pick<WorkItem, 'slug' | 'status' | 'owner' | 'execution_id' | 'summary' | 'started_at'> {
  lease: { until: string | null; live: boolean };
  outcome: string | null;
  latest: Record<string, unknown> | null;
  trail: string[];
  evidence: EvidenceReport;
  git: GitFacts | null;
  // issue 14: how the current execution got the item, its release, and anyone's notes (the last 5).
  taken_over: WorkItem['taken_over'];
  released: WorkItem['released'];
  notes: { count: number; latest: { seq: number; ts: string; agent: string; text: string }[] };
  /** Commits and files since the commit of the item's last test run (changes-since.ts). */
  changes_since: ChangesSince | null;
  /** Set when the owner is gone: the next step is to take it over (issue 24.4). */
  owner_gone: OwnerGone | null;
  /** Where the code was at the item's latest record that says (issue 24.5), and who wrote it. */
  code: (CodePlace & { seq: number; agent: string; ts: string }) | null;
}

export interface ResumeContext {
  now: Date;
  /** The project root: evidence sources resolve against it. */
  root: string;
  ledgerDir: string;
  git: GitFacts | null;
  /** Who reads it (their own items and takeovers read differently), and how they call the tools. */
  asker?: string | null;
  caller?: Caller;
}

/** The evidence as of the latest checkpoint: the newest digest per name over the item's writes. */
function recordedEvidence(item: WorkItem, upTo: Entry | null): Map<string, Evidence> {
  const out = new Map<string, Evidence>();
  if (!upTo) return out;
  for (const e of item.entries) {
    if (e.seq > upTo.seq) break;
    if (e.stray || e.record.kind === 'start') continue;
    for (const [name, ev] of Object.entries(e.record.evidence ?? {})) out.set(name, ev);
  }
  return out;
}

export function checkEvidence(recorded: Map<string, Evidence>, asOf: number | null, ctx: ResumeContext): EvidenceReport {
  const report: EvidenceReport = { as_of_seq: asOf, unchanged: [], changed: [], gone: [], unverifiable: [] };
  for (const name of [...recorded.keys()].sort()) {
    const ev = recorded.get(name)!;
    try {
      const now = redigestSource(ev.source, { root: ctx.root, ledgerDir: ctx.ledgerDir });
      if (now === null) report.unverifiable.push({ name, source: ev.source });
      else if (now === ev.digest) report.unchanged.push(name);
      else report.changed.push({ name, source: ev.source, recorded: ev.digest, now });
    } catch (e) {
      report.gone.push({ name, source: ev.source, reason: (e as Error).message });
    }
  }
  return report;
}

export function buildResume(log: WorkLog, slug: string, ctx: ResumeContext): ResumeReport {
  const item = log.items.get(slug);
  if (!item) {
    throw new LedgerError('INPUT_NOT_FOUND', `no work item ${slug} in this ledger (no start record)`, { slug }, `\`ledger start ${slug} --agent NAME --summary TEXT\` opens it`);
  }
  const latest = latestCheckpoint(item);
  const before = item.entries.filter((e) => e !== latest).slice(-TRAIL_LENGTH).reverse();
  return {
    slug,
    status: item.status,
    owner: item.owner,
    execution_id: item.execution_id,
    summary: item.summary,
    started_at: item.started_at,
    lease: { until: item.lease_until, live: item.lease_until !== null && leaseLive(item.lease_until, ctx.now) },
    outcome: item.outcome,
    latest: latest ? entryData(latest) : null,
    trail: before.map(trailLine),
    evidence: checkEvidence(recordedEvidence(item, latest), latest?.seq ?? null, ctx),
    git: ctx.git,
    taken_over: item.taken_over,
    released: item.released,
    notes: { count: item.notes.length, latest: item.notes.slice(-5).map((n) => ({ seq: n.seq, ts: n.ts, agent: n.agent, text: n.text })) },
    changes_since: changesSince(item, ctx),
    owner_gone: ownerGone(item, ctx.now, leaseLive),
    code: latestCode(item),
  };
}

/** The latest record of the item (of any execution) that says where the code was. */
function latestCode(item: WorkItem): ResumeReport['code'] {
  for (let i = item.entries.length - 1; i >= 0; i--) {
    const e = item.entries[i];
    const code = (e.record as { code?: CodePlace }).code;
    if (code) return { ...code, seq: e.seq, agent: e.record.agent, ts: e.record.ts };
  }
  return null;
}

/** How to get the code from here (issue 24.5): the same work tree, a pushed commit, or it cannot be had. */
export function codeLines(c: NonNullable<ResumeReport['code']>, root: string): string[] {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const here = c.machine === hostname() && c.path === real(root);
  const where = `${c.machine}:${c.path}`;
  if (!c.git) return [`code: as of seq ${c.seq} (${c.agent}) in ${where}, not a git work tree${here ? ' (this one)' : ': it cannot be had from here'}`];
  const g = c.git;
  const at = `${g.branch ? `branch ${g.branch}` : 'a detached HEAD'}${g.commit ? ` at ${g.commit.slice(0, 12)}` : ' (no commit yet)'}`;
  const out = [`code: as of seq ${c.seq} (${c.agent}, ${c.ts}): ${at} in ${where}${g.dirty ? ', with uncommitted changes' : ''}`];
  if (here) out.push('  that is this work tree');
  else if (g.commit && g.pushed_to) {
    const remote = g.pushed_to.split('/')[0];
    out.push(`  pushed to ${g.pushed_to}: get it with \`git fetch ${remote} && git checkout ${g.branch && g.pushed_to === `${remote}/${g.branch}` ? g.branch : g.commit.slice(0, 12)}\`${g.dirty ? '; the uncommitted changes stayed on that machine and cannot be had from here' : ''}`);
  } else out.push(`  NOT pushed: ${g.commit ? `commit ${g.commit.slice(0, 12)}` : 'the work'} exists only on ${c.machine}; it cannot be had from here until ${c.agent}'s machine pushes it`);
  return out;
}

interface Caps { text: number; items: number; excerpt: number; evidence: number; notes: number }

function shape(r: ResumeReport, ctx: ResumeContext, caps: Caps): string[] {
  const out: string[] = [];
  const lease = r.lease.until === null ? 'released' : `lease ${describeLease(r.lease.until, ctx.now)}`;
  out.push(r.status === 'finished'
    ? `${r.slug}: finished (${r.outcome}) by ${r.owner} (execution ${r.execution_id}); start it again to reopen`
    : r.released
      ? `${r.slug}: open, ${releaseLine(r.released, 200)}`
      : `${r.slug}: open, owned by ${r.owner} (execution ${r.execution_id}), ${lease}`);
  if (r.taken_over) out.push(takeoverLine(r.taken_over, 200, undefined, quoted));
  const l0 = r.latest;
  out.push(`next step: ${resumeStep({ ...r, latest: l0 && l0.kind !== 'start' ? { next: String(l0.next), agent: String(l0.agent), ts: String(l0.ts), seq: Number(l0.seq) } : null }, ctx.asker ?? null, ctx.now, ctx.caller ?? 'cli')}`);
  out.push(`summary (${r.owner ?? 'its last owner'}'s, at its start): ${quoted(oneLine(r.summary, 200))}`);
  if (r.notes.count) {
    const shown = r.notes.latest.slice(-caps.notes);
    out.push(`notes (${r.notes.count}${r.notes.count > shown.length ? `, the last ${shown.length}` : ''}):`);
    for (const n of shown) out.push(`  ${n.ts} ${n.agent}: ${quoted(oneLine(n.text, 200))}`);
  }
  // Record text is quoted (SPEC 12): one line as a JSON string, several as quoted lines.
  const text = (label: string, v: unknown) => {
    const lines = clipLines(String(v), caps.text);
    if (lines.length === 1) out.push(`  ${label}: ${quoted(lines[0])}`);
    else out.push(`  ${label}:`, ...lines.map((l) => `    > ${l}`));
  };
  const items = (label: string, v: unknown, none: string) => {
    const xs = v as string[];
    if (xs.length === 0) return out.push(`  ${label}: ${none}`);
    out.push(`  ${label}:`);
    const keep = xs.length > caps.items ? caps.items - 1 : xs.length;
    for (const x of xs.slice(0, keep)) out.push(`    - ${quoted(oneLine(x, 200))}`);
    if (keep < xs.length) out.push(`    … (${xs.length - keep} more: \`ledger show ${String(r.latest?.seq)}\`)`);
  };
  const l = r.latest;
  if (!l) out.push(`latest checkpoint: none yet (started ${r.started_at})`);
  else {
    out.push(`latest ${String(l.kind)}: seq ${String(l.seq)}, ${String(l.ts)}, by ${String(l.agent)}${l.outcome ? `, outcome ${String(l.outcome)}` : ''} (${String(l.agent)}'s words, quoted):`);
    text('done', l.done);
    text('state', l.state);
    items('verified', l.verified, 'nothing claimed');
    items('attempted, not verified', l.attempted, 'none');
    items('blockers', l.blockers, 'none open');
    const t = l.tests as { excerpt: string; digest: string; command?: string; exit_code?: number; bytes?: number; nothing_tested?: string } | undefined;
    if (!t) out.push('  tests: no test output recorded');
    else {
      const who = t.command !== undefined ? `\`${oneLine(t.command, 120)}\` exit ${t.exit_code ?? '?'}` : 'output as reported (not run by the ledger)';
      out.push(`  tests: ${who}, ${t.bytes ?? '?'} bytes, ${t.digest}`);
      if (t.nothing_tested) out.push(`  NOTHING WAS TESTED: ${oneLine(t.nothing_tested, 200)}`);
      const whole = blobPath(ctx.ledgerDir, t.digest);
      out.push(existsSync(whole) ? `    whole output: ${relative(ctx.root, whole) || '.'}` : '    whole output: not on this machine (the writer\'s ledger did not publish it); only the excerpt below');
      for (const line of excerptWithin(textLines(t.excerpt), caps.excerpt)) out.push(`    | ${line}`);
    }
    text('next', l.next);
  }
  if (r.code) out.push(...codeLines(r.code, ctx.root));
  out.push(r.trail.length ? 'trail (newest first):' : 'trail: nothing before this');
  for (const t of r.trail) out.push(`  ${t}`);
  const ev = r.evidence;
  const total = ev.unchanged.length + ev.changed.length + ev.gone.length + ev.unverifiable.length;
  if (total === 0) out.push('evidence: none recorded by the checkpoints');
  else {
    out.push(`evidence since the last checkpoint (seq ${ev.as_of_seq}): ${ev.changed.length} changed, ${ev.gone.length} gone, ${ev.unchanged.length} unchanged, ${ev.unverifiable.length} not re-checkable`);
    const lines = [
      ...ev.changed.map((c) => `  changed ${c.name} (${oneLine(c.source, 200)}): was ${c.recorded.slice(0, 19)}…, now ${c.now.slice(0, 19)}…`),
      ...ev.gone.map((g) => `  gone ${g.name} (${oneLine(g.source, 200)}): ${oneLine(g.reason, 120)}`),
    ];
    out.push(...lines.slice(0, caps.evidence));
    if (lines.length > caps.evidence) out.push(`  … (${lines.length - caps.evidence} more; --json lists all)`);
  }
  out.push(...changesSinceLines(r.changes_since, caps.evidence));
  if (r.git) {
    out.push(`git: branch ${oneLine(r.git.branch, 100)}, ${r.git.changed_files} changed file${r.git.changed_files === 1 ? '' : 's'}`);
    if (r.git.last_commits.length === 0) out.push('  no commits yet');
    for (const c of r.git.last_commits) out.push(`  ${c.oid} ${oneLine(c.subject, 100)}`);
  } else out.push('git: not a git work tree');
  return out;
}

/** Policy: the other parts shrink only when the test excerpt would get fewer lines than this. */
export const RESUME_MIN_EXCERPT = 12;

/**
 * The text form, at most RESUME_MAX_LINES lines. The test excerpt gets every line the other
 * parts leave (a failing test is what the next session needs most); the other parts' caps
 * shrink, step by step, only while that would be fewer than RESUME_MIN_EXCERPT lines.
 */
export function formatResume(r: ResumeReport, ctx: ResumeContext): string[] {
  const steps: Omit<Caps, 'excerpt'>[] = [
    { text: 6, items: 8, evidence: 8, notes: 5 },
    { text: 4, items: 5, evidence: 6, notes: 3 },
    { text: 3, items: 4, evidence: 4, notes: 2 },
    { text: 2, items: 3, evidence: 3, notes: 1 },
    { text: 1, items: 2, evidence: 2, notes: 1 },
  ];
  const excerpt = (r.latest?.tests as { excerpt?: string } | undefined)?.excerpt;
  const excerptLines = excerpt ? textLines(excerpt).length : 0;
  let lines: string[] = [];
  for (const [n, caps] of steps.entries()) {
    const room = RESUME_MAX_LINES - shape(r, ctx, { ...caps, excerpt: 0 }).length;
    if (room < Math.min(excerptLines, RESUME_MIN_EXCERPT) && n < steps.length - 1) continue;
    lines = shape(r, ctx, { ...caps, excerpt: Math.max(0, room) });
    if (lines.length <= RESUME_MAX_LINES) return lines;
  }
  // Unreachable with the tightest caps (about 40 lines at most); kept as the hard bound.
  return [...lines.slice(0, RESUME_MAX_LINES - 1), `… (${lines.length - RESUME_MAX_LINES + 1} more lines; --json has everything)`];
}
