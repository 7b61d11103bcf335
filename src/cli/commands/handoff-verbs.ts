// The handoff-log verbs' implementation (registered in ./handoff.ts): the flags, typed, become the
// verb's request (../../requests/), checked once before anything is read, run or written; the
// Ledger runs it (the workflow: ownership and leases decided again under the writer lock, the
// test command, the views); the result is printed. Policy: `now` is the real clock, read by the
// workflow once per step, right before the decision that writes.
import { relative, resolve } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import type { Outcome } from '../../record.js';
import { Ledger, formatStatus, type ResumeAnswer } from '../../index.js';
import { checkResume, checkStatus } from '../../requests/read.js';
import { checkCheckpoint, checkFinish, checkNote, checkRelease, checkStart, type MilestoneChecked, type TestsRequest } from '../../requests/work.js';
import type { FlagSet, Flags } from '../flags.js';
import { agentOf, emit, ledgerDir, terminalWidth, waitMs, type CliIO, type Global } from './common.js';
import { fitLines } from '../../text/lines.js';
import { dependsOnOf, evidenceSources, invariantsOf } from './handoff-flags.js';
import type { ASKER, CHECKPOINT, FINISH, MILESTONE, NOTE, RELEASE, RENDER, START } from './handoff.js';
import { currentRead, remoteLine, writerOptions } from './remote-opts.js';

type F<S extends FlagSet> = Flags<S> & Global;

export function warn(io: CliIO, warnings: string[]): void {
  for (const w of warnings) io.stderr(`ledger: warning: ${w}\n`);
}

/** --views as typed, from the working directory (unset: the ledger's default, beside it). */
const viewsOf = (io: CliIO, f: { views?: string }) => (f.views === undefined ? {} : { views: resolve(io.cwd, f.views) });

export async function runStart(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof START>>): Promise<number> {
  const req = checkStart({
    slug: slug as string, agent: agentOf(io, f) as string, summary: f.summary as string,
    ...(f.lease !== undefined ? { lease: f.lease } : {}),
    takeover: f.takeover, force: f.force, newItem: f.newItem,
    ...(f.reason !== undefined ? { reason: f.reason } : {}),
    cwd: io.cwd,
    ...viewsOf(io, f), adoptViews: f.adoptViews,
  });
  const res = await Ledger.open(writerOptions(io, f)).start(req);
  const rec = res.record;
  const r = rec.record;
  warn(io, res.warnings);
  const lines = [`started ${req.slug} as ${req.agent}, execution ${r.execution_id}, lease until ${r.lease_until}`, `record seq ${rec.seq} ${rec.id}`];
  const t = r.takeover;
  if (t) {
    const why = t.reason !== undefined ? `: ${t.reason}` : '';
    lines.push(t.agent === req.agent
      ? `replaces your earlier execution ${t.execution_id}${why}`
      : t.forced
        ? `TAKEN OVER from ${t.agent} by ${req.agent} while its lease was live (until ${t.lease_until}; execution ${t.execution_id})${why}`
        : `took over from ${t.agent} (execution ${t.execution_id}, lease lapsed at ${t.lease_until})${why}`);
  }
  emit(io, f, { ok: true, kind: 'start', slug: req.slug, id: rec.id, seq: rec.seq, execution_id: r.execution_id, lease_until: r.lease_until, takeover: r.takeover ?? null, views: res.views, warnings: res.warnings }, lines);
  return 0;
}

/**
 * The fields a checkpoint and a finish read alike, as their request takes them. A flag that is
 * unset where the request needs it is left unset: the request's check says it is required.
 */
function milestoneOf(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof MILESTONE>>) {
  // --tests-cmd runs from the project root (workflow.ts testsDir), or in --tests-cwd, as the
  // caller (SUDO_UID etc. are read from io.env only). Flags the check refuses together (--tests
  // with --tests-cmd, --tests-timeout or --tests-cwd without it) go in together.
  const given = f.testsCmd !== undefined || f.tests !== undefined || f.testsTimeout !== undefined || f.testsCwd !== undefined;
  const tests = given ? ({
    ...(f.testsCmd !== undefined ? { command: f.testsCmd, env: { ...process.env, ...io.env }, callerEnv: io.env } : {}),
    ...(f.testsCwd !== undefined ? { cwd: f.testsCwd === '' ? '' : resolve(io.cwd, f.testsCwd) } : {}),
    ...(f.tests !== undefined ? { text: f.tests } : {}),
    ...(f.testsTimeout !== undefined ? { timeout: f.testsTimeout } : {}),
  } as TestsRequest) : undefined;
  return {
    slug: slug as string, agent: agentOf(io, f) as string, done: f.done as string, state: f.state as string, next: f.next.length === 1 ? f.next[0] : f.next,
    verified: f.verified, attempted: f.attempted, blockers: f.blocker,
    ...(tests !== undefined ? { tests } : {}),
    evidence: evidenceSources(f.evidence), cwd: io.cwd,
    ...viewsOf(io, f), adoptViews: f.adoptViews,
  };
}

export async function runCheckpoint(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof CHECKPOINT>>): Promise<number> {
  const req = checkCheckpoint({ ...milestoneOf(io, slug, f), ...(f.lease !== undefined ? { lease: f.lease } : {}) });
  const res = await Ledger.open(writerOptions(io, f)).checkpoint(req);
  return printMilestone(io, f, req, res);
}

export async function runFinish(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof FINISH>>): Promise<number> {
  const req = checkFinish({
    ...milestoneOf(io, slug, f),
    ...(f.outcome !== undefined ? { outcome: f.outcome as Outcome } : {}),
    invariants: invariantsOf(f.invariant),
    depends_on: dependsOnOf(f.dependsOn),
    ...(f.supersedes.length ? { supersedes: f.supersedes } : {}),
    ...(f.note !== undefined ? { note: f.note } : {}),
  });
  const res = await Ledger.open(writerOptions(io, f)).finish(req);
  return printMilestone(io, f, req, res);
}

function printMilestone(io: CliIO, f: Global, req: MilestoneChecked, res: Awaited<ReturnType<Ledger['checkpoint']>> | Awaited<ReturnType<Ledger['finish']>>): number {
  const rec = res.record;
  warn(io, res.warnings);
  const r = rec.record;
  const kind = r.kind;
  const lines = [`${kind} ${req.slug} by ${req.agent}, execution ${r.execution_id}, record seq ${rec.seq} ${rec.id}`];
  if (r.kind === 'checkpoint') lines.push(`lease until ${r.lease_until}`);
  else lines.push(`outcome ${r.outcome}; ${req.slug} is closed`);
  const captured = res.tests;
  if (captured) {
    const t = captured.tests;
    const where = relative(io.cwd, captured.blob.path) || captured.blob.path;
    const ran = t.workdir ? ` in ${t.workdir.path}` : '';
    lines.push(t.command !== undefined ? `tests: \`${t.command}\` exited ${t.exit_code}${ran}; ${t.bytes} bytes of output, ${t.digest} (${where})` : `tests: ${t.bytes} bytes as reported, ${t.digest} (${where})`);
    if (t.nothing_tested) lines.push(`tests: NOTHING WAS TESTED: ${t.nothing_tested}`);
  }
  emit(io, f, {
    ok: true, kind, slug: req.slug, id: rec.id, seq: rec.seq, execution_id: r.execution_id,
    lease_until: r.kind === 'checkpoint' ? r.lease_until : null,
    outcome: r.kind === 'finish' ? r.outcome : null,
    tests: captured ? { ...captured.tests, blob: captured.blob.path } : null,
    views: res.views, warnings: res.warnings,
  }, lines);
  return 0;
}

export async function runRelease(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof RELEASE>>): Promise<number> {
  const req = checkRelease({ slug: slug as string, agent: agentOf(io, f) as string, ...(f.note !== undefined ? { note: f.note } : {}), ...viewsOf(io, f), adoptViews: f.adoptViews });
  const res = await Ledger.open(writerOptions(io, f, false)).release(req);
  warn(io, res.warnings);
  const rec = res.record;
  const lines = [
    `released ${req.slug} (execution ${rec.record.execution_id}); it stays open, unowned: the next \`ledger start ${req.slug}\` takes it without --takeover`,
    `record seq ${rec.seq} ${rec.id}`,
  ];
  emit(io, f, { ok: true, kind: 'release', slug: req.slug, id: rec.id, seq: rec.seq, execution_id: rec.record.execution_id, note: rec.record.note ?? null, views: res.views, warnings: res.warnings }, lines);
  return 0;
}

export async function runNote(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof NOTE>>): Promise<number> {
  const req = checkNote({ slug: slug as string, agent: agentOf(io, f) as string, text: f.text as string, ...viewsOf(io, f), adoptViews: f.adoptViews });
  const res = await Ledger.open(writerOptions(io, f, false)).note(req);
  warn(io, res.warnings);
  const rec = res.record;
  emit(io, f, { ok: true, kind: 'note', slug: req.slug, id: rec.id, seq: rec.seq, views: res.views, warnings: res.warnings }, [`noted on ${req.slug} by ${req.agent}, record seq ${rec.seq} ${rec.id}`]);
  return 0;
}

/** Lines fitted to a terminal's width (text/lines.ts fitLines), or as they are. */
const fitTo = (lines: string[], width: number | undefined) => (width === undefined ? lines : fitLines(lines, width));

export async function runStatus(io: CliIO, f: F<ReturnType<typeof ASKER>>): Promise<number> {
  // Policy: `now` is the real clock, read once, before the records (a lease that lapses while
  // they are read is reported as it was then).
  const req = checkStatus({ agent: agentOf(io, f) ?? null, now: new Date() });
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const cur = await currentRead(io, ledger);
  const report = ledger.status(req);
  const remote = ledger.remote();
  // SPEC 13: a witness that did not cosign this machine's last publication is said (it delayed nothing).
  const away = remote?.witnessesAway ? [`witness ${remote.witnessesAway.names.join(', ')} did not cosign the publication of seq ${remote.witnessesAway.seq} (${remote.witnessesAway.at}); \`ledger doctor\` says why`] : [];
  const width = terminalWidth(io);
  emit(io, f, remote ? { ...report, remote, ...cur.json } : report, () => (remote ? [...fitTo([...cur.lead, ...away], width), ...formatStatus(report, width)] : formatStatus(report, width)));
  return 0;
}

/**
 * `ledger resume [SLUG]` (SPEC 10): one item; without a slug, the asker's own open item when
 * there is exactly one, otherwise (no asker, none, several) the status, led by a line that says
 * why. --json: the resume report or the status report, told apart by `mode`.
 */
export async function runResume(io: CliIO, slug: string | undefined, f: F<ReturnType<typeof ASKER>>): Promise<number> {
  // The asker is checked (a bad --agent exits 2) though a slug was given.
  const req = checkResume({ ...(slug !== undefined ? { slug } : {}), agent: agentOf(io, f) ?? null, now: new Date() });
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const cur = await currentRead(io, ledger);
  const remote = ledger.remote();
  const lead = cur.lead;
  const r: ResumeAnswer = await ledger.resume(req, lead);
  const width = terminalWidth(io);
  if (r.mode === 'resume') {
    emit(io, f, { ok: true, mode: 'resume', ...r.report, ...cur.json }, () => fitTo(r.lines, width));
    return 0;
  }
  const agent = req.agent;
  const line = r.reason === 'no-agent'
    ? 'no --agent or $LEDGER_AGENT, so no item of yours to resume; the status instead (`ledger resume SLUG` reads one item):'
    : r.reason === 'none'
      ? `${agent} owns no open item; the status instead (\`ledger resume SLUG\` reads one item):`
      : `${agent} owns ${r.own.length} open items (${r.own.join(', ')}); \`ledger resume SLUG\` reads one. The status:`;
  emit(io, f, { ...r.report, mode: 'status', reason: r.reason, own: r.own, ...(remote ? { remote } : {}), ...cur.json }, () => [...fitTo([line, ...lead], width), ...formatStatus(r.report, width)]);
  return 0;
}

export async function runRender(io: CliIO, f: F<ReturnType<typeof RENDER>>): Promise<number> {
  const views = f.views === undefined ? undefined : resolve(io.cwd, f.views);
  if (f.check) {
    if (f.adoptViews) throw new LedgerError('USAGE', '--adopt-views applies to a render that writes, not to --check');
    const result = await Ledger.open({ dir: ledgerDir(io, f), env: io.env }).checkViews({ ...(views !== undefined ? { views } : {}) });
    const lines = result.views.map((v) => `${v.status.padEnd(7)} ${v.file}${v.status === 'stale' ? ` (rendered through seq ${v.through_seq}; the ledger's work log and its operations are through seq ${result.through?.seq})` : ''}`);
    if (!result.ok) lines.push('run `ledger render` to rewrite the views from the ledger');
    emit(io, f, { ...result, exit_code: result.ok ? EXIT.ok : EXIT.viewsDiffer }, lines);
    return result.ok ? EXIT.ok : EXIT.viewsDiffer;
  }
  const { warnings, ...written } = await Ledger.open({ dir: ledgerDir(io, f), env: io.env }).renderViews({ ...(views !== undefined ? { views } : {}), adopt: f.adoptViews, waitMs: waitMs(f) });
  warn(io, warnings);
  emit(io, f, { ok: true, ...written }, [`rewrote ${written.files.join(' and ')} through seq ${written.through?.seq ?? 0}`]);
  return 0;
}
