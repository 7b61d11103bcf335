// The implementation of release, note, status, and resume without a slug (issue 14; registered in
// ./handoff.ts): flags -> the Ledger (src/handoff/release.ts, note.ts, status.ts) -> output.
// Every flag is checked before anything is written, with the workflow's own rules (exit 2).
import { Ledger } from '../../ledger.js';
import { checkSlug } from '../../handoff/workflow.js';
import { formatStatus, statusOf, type StatusReport } from '../../handoff/status.js';
import { readFolds } from '../../handoff/fold-memo.js';
import { openItems } from '../../handoff/workitems.js';
import { agentName, emit, flag, keyPath, ledgerDir, waitMs, type CliIO, type Opts } from './common.js';
import { remoteLine, remoteOpts } from './remote-opts.js';
import { askingAgent, optionalText, emitResume, viewsDir, warn } from './handoff-verbs.js';
import { LedgerError } from '../../errors.js';

type Verb = 'release' | 'note' | 'status' | 'resume';

/** `resume` arrives here only without a slug (with one, handoff-verbs.ts runs it). */
export async function runOwnershipVerb(verb: Verb, io: CliIO, slug: string | undefined, opts: Opts): Promise<number> {
  if (verb === 'status') return runStatus(io, opts);
  if (verb === 'resume') return runResumeOwn(io, opts);
  const item = checkSlug(slug === undefined ? undefined : String(slug));
  return verb === 'release' ? runRelease(io, item, opts) : runNote(io, item, opts);
}

export async function runRelease(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = agentName(io, opts);
  const note = optionalText(opts, 'note', 'what the next one should know');
  const views = viewsDir(io, opts, dir);
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...remoteOpts(io, opts) });
  const res = await ledger.release({ slug, agent, ...(note !== undefined ? { note } : {}), views, adoptViews: flag(opts, 'adoptViews') });
  warn(io, res.warnings);
  const rec = res.record;
  const lines = [
    `released ${slug} (execution ${rec.record.execution_id}); it stays open, unowned: the next \`ledger start ${slug}\` takes it without --takeover`,
    `record seq ${rec.seq} ${rec.id}`,
  ];
  emit(io, opts, { ok: true, kind: 'release', slug, id: rec.id, seq: rec.seq, execution_id: rec.record.execution_id, note: rec.record.note ?? null, views: res.views, warnings: res.warnings }, lines);
  return 0;
}

export async function runNote(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = agentName(io, opts);
  const text = optionalText(opts, 'text', 'the note');
  if (text === undefined) throw new LedgerError('USAGE', '--text is required (the note)');
  const views = viewsDir(io, opts, dir);
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...remoteOpts(io, opts) });
  const res = await ledger.note({ slug, agent, text, views, adoptViews: flag(opts, 'adoptViews') });
  warn(io, res.warnings);
  const rec = res.record;
  emit(io, opts, { ok: true, kind: 'note', slug, id: rec.id, seq: rec.seq, views: res.views, warnings: res.warnings }, [`noted on ${slug} by ${agent}, record seq ${rec.seq} ${rec.id}`]);
  return 0;
}

export async function runStatus(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = askingAgent(io, opts);
  // Policy: `now` is the real clock, read once, before the records (a lease that lapses while
  // they are read is reported as it was then).
  const now = new Date();
  const ledger = Ledger.open({ dir, env: io.env });
  const report = ledger.status({ ...(agent !== null ? { agent } : {}), now });
  const remote = ledger.remote();
  emit(io, opts, remote ? { ...report, remote } : report, remote ? [remoteLine(remote), ...formatStatus(report)] : formatStatus(report));
  return 0;
}

/**
 * `ledger resume` without a slug (SPEC 10): the asker's own open item when there is exactly one;
 * otherwise (no asker, none, several) the status, led by a line that says why. One pass over the
 * records serves both. --json: the resume report or the status report, told apart by `mode`.
 */
export async function runResumeOwn(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = askingAgent(io, opts);
  const now = new Date();
  const ledger = Ledger.open({ dir, env: io.env });
  const remote = ledger.remote();
  const { log, outcomes } = readFolds(ledger.paths, ledger.head());
  const own = agent === null ? [] : openItems(log).filter((i) => i.owner === agent).map((i) => i.slug);
  if (own.length === 1) return emitResume(io, opts, ledger, log, own[0], now, [`${agent}'s open item: ${own[0]}`, ...(remote ? [remoteLine(remote)] : [])]);
  const why = agent === null
    ? { reason: 'no-agent', line: 'no --agent or $LEDGER_AGENT, so no item of yours to resume; the status instead (`ledger resume SLUG` reads one item):' }
    : own.length === 0
      ? { reason: 'none', line: `${agent} owns no open item; the status instead (\`ledger resume SLUG\` reads one item):` }
      : { reason: 'several', line: `${agent} owns ${own.length} open items (${own.join(', ')}); \`ledger resume SLUG\` reads one. The status:` };
  const report: StatusReport = statusOf(log, outcomes, agent, now);
  emit(io, opts, { ...report, mode: 'status', reason: why.reason, own, ...(remote ? { remote } : {}) }, [why.line, ...(remote ? [remoteLine(remote)] : []), ...formatStatus(report)]);
  return 0;
}
