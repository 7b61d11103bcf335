// The handoff-log verbs' implementation (registered in ./handoff.ts; release, note, status and
// resume without a slug are in ./handoff-ownership-run.ts, which uses the helpers exported here):
// flags -> the workflow
// (src/handoff/workflow.ts, through the Ledger) -> output. Each writing verb checks every flag
// first, with the workflow's own check functions (a bad one exits 2 and changes nothing); the
// workflow then applies the ownership and lease rules under the writer lock, runs or stores the
// test output, and rewrites HANDOFF.md and HANDOFF.yml. Policy: `now` is the real clock, read by
// the workflow once per step, right before the decision that writes.
import { dirname, relative, resolve } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import type { Evidence, FinishPayload } from '../../record.js';
import { checkAgent, checkItems, checkLeaseMs, checkNext, checkSlug, checkTestsCommand, checkTestsTimeoutMs, checkText, type TestsRequest } from '../../handoff/workflow.js';
import { checkTakeoverFlags } from '../../handoff/ownership.js';
import { DEFAULT_TESTS_TIMEOUT_MS } from '../../handoff/tests-cmd.js';
import { DEFAULT_LEASE_MS } from '../../handoff/lease.js';
import { checkViews, defaultViewsDir, keptNotice, readWorkLog, writeViews } from '../../handoff/views.js';
import { RESUME_MAX_LINES, buildResume, formatResume } from '../../handoff/resume.js';
import type { WorkLog } from '../../handoff/workitems.js';
import { gitFacts, type GitFacts } from '../../handoff/git.js';
import {
  agentName, durationFlag, emit, envValue, flag, guardOptions, keyPath, ledgerDir, many, one, waitMs, type CliIO, type Opts,
} from './common.js';
import { remoteLine, remoteOpts } from './remote-opts.js';
import { parseEvidence, parseHandoffTail, parseOutcome } from './handoff-flags.js';
import { recordIdsIn } from '../ids.js';

type Verb = 'start' | 'checkpoint' | 'finish' | 'resume' | 'render';

export async function runHandoffVerb(verb: Verb, io: CliIO, slug: string | undefined, opts: Opts): Promise<number> {
  if (verb === 'render') return runRender(io, opts);
  const item = checkSlug(slug === undefined ? undefined : String(slug));
  switch (verb) {
    case 'start':
      return runStart(io, item, opts);
    case 'checkpoint':
    case 'finish':
      return runWrite(io, verb, item, opts);
    case 'resume':
      return runResume(io, item, opts);
  }
}

/** The asker of a reading verb: --agent, else $LEDGER_AGENT, else nobody in particular. */
export function askingAgent(io: CliIO, opts: Opts): string | null {
  const a = one(opts, 'agent') ?? envValue(io, 'LEDGER_AGENT');
  return a === undefined ? null : checkAgent(a);
}

/** A required text flag: exactly one value, then the workflow's text rule. */
function text(opts: Opts, name: string, what: string): string {
  const v = opts[name];
  const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (values.length > 1) throw new LedgerError('USAGE', `--${name} was given ${values.length} times; it takes one value`);
  return checkText(values[0], name, what);
}

/** An optional text flag: at most one value, then the workflow's text rule. */
export function optionalText(opts: Opts, name: string, what: string): string | undefined {
  const v = opts[name];
  const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (values.length > 1) throw new LedgerError('USAGE', `--${name} was given ${values.length} times; it takes one value`);
  if (values.length === 0) return undefined;
  return checkText(typeof values[0] === 'boolean' ? '' : values[0], name, what);
}

function leaseFlag(opts: Opts): number {
  return checkLeaseMs(durationFlag(opts, 'lease', DEFAULT_LEASE_MS)!, String(one(opts, 'lease')));
}

export function viewsDir(io: CliIO, opts: Opts, dir: string): string {
  const v = one(opts, 'views');
  return v === undefined ? defaultViewsDir(dir) : resolve(io.cwd, v);
}

export function warn(io: CliIO, warnings: string[]): void {
  for (const w of warnings) io.stderr(`ledger: warning: ${w}\n`);
}

async function runStart(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = agentName(io, opts);
  const summary = text(opts, 'summary', 'what you are about to do');
  const leaseMs = leaseFlag(opts);
  const takeover = flag(opts, 'takeover');
  const force = flag(opts, 'force');
  const reason = optionalText(opts, 'reason', 'why the item is taken over');
  checkTakeoverFlags({ takeover, force, reason: reason ?? null });
  const views = viewsDir(io, opts, dir);
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts), ...remoteOpts(io, opts) });
  const res = await ledger.start({ slug, agent, summary, leaseMs, takeover, force, reason, views, adoptViews: flag(opts, 'adoptViews') });
  const rec = res.record;
  const r = rec.record;
  warn(io, res.warnings);
  const lines = [`started ${slug} as ${agent}, execution ${r.execution_id}, lease until ${r.lease_until}`, `record seq ${rec.seq} ${rec.id}`];
  const t = r.takeover;
  if (t) {
    const why = t.reason !== undefined ? `: ${t.reason}` : '';
    lines.push(t.agent === agent
      ? `replaces your earlier execution ${t.execution_id}${why}`
      : t.forced
        ? `TAKEN OVER from ${t.agent} by ${agent} while its lease was live (until ${t.lease_until}; execution ${t.execution_id})${why}`
        : `took over from ${t.agent} (execution ${t.execution_id}, lease lapsed at ${t.lease_until})${why}`);
  }
  emit(io, opts, { ok: true, kind: 'start', slug, id: rec.id, seq: rec.seq, execution_id: r.execution_id, lease_until: r.lease_until, takeover: r.takeover ?? null, views: res.views, warnings: res.warnings }, lines);
  return 0;
}

async function runWrite(io: CliIO, kind: 'checkpoint' | 'finish', slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const root = dirname(dir);
  const agent = agentName(io, opts);
  // 1. every flag, before anything runs or is written
  const done = text(opts, 'done', 'what was just done');
  const state = text(opts, 'state', 'the state now, in plain words');
  const next = checkNext(opts.next);
  const verified = checkItems(many(opts, 'verified'), 'verified');
  const attempted = checkItems(many(opts, 'attempted'), 'attempted');
  const blockers = checkItems(many(opts, 'blocker'), 'blocker');
  const testsText = one(opts, 'tests');
  const testsCmd = one(opts, 'testsCmd', 'tests-cmd');
  if (testsText !== undefined && testsCmd !== undefined) throw new LedgerError('USAGE', '--tests and --tests-cmd both give test output; pass one (--tests-cmd has the ledger run it)');
  if (testsCmd !== undefined) checkTestsCommand(testsCmd);
  const testsTimeout = checkTestsTimeoutMs(durationFlag(opts, 'testsTimeout', DEFAULT_TESTS_TIMEOUT_MS)!, String(one(opts, 'testsTimeout', 'tests-timeout')));
  if (testsCmd === undefined && opts.testsTimeout !== undefined) throw new LedgerError('USAGE', '--tests-timeout applies only with --tests-cmd');
  const leaseMs = kind === 'checkpoint' ? leaseFlag(opts) : undefined;
  const evidence: Record<string, Evidence> = parseEvidence(many(opts, 'evidence'), { root, ledgerDir: dir, cwd: io.cwd });
  let finishFields: Pick<FinishPayload, 'outcome' | 'invariants' | 'depends_on' | 'supersedes' | 'note'> | null = null;
  if (kind === 'finish') {
    finishFields = { outcome: parseOutcome(one(opts, 'outcome') ?? 'success'), ...parseHandoffTail(opts, recordIdsIn(dir)) };
  }
  const views = viewsDir(io, opts, dir);
  const tests: TestsRequest | undefined = testsCmd !== undefined
    // In the caller's working directory, as the caller (SUDO_UID etc. are read from io.env only).
    ? { command: testsCmd, cwd: io.cwd, timeoutMs: testsTimeout, env: { ...process.env, ...io.env }, callerEnv: io.env, timeoutLabel: String(opts.testsTimeout ?? '30m') }
    : testsText !== undefined ? { text: testsText } : undefined;

  // 2-5. the workflow: the advisory ownership check, the tests, the decision under the lock, the views
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts), ...remoteOpts(io, opts) });
  const req = { slug, agent, done, state, next, verified, attempted, blockers, tests, evidence, views, adoptViews: flag(opts, 'adoptViews') };
  const res = kind === 'checkpoint' ? await ledger.checkpoint({ ...req, leaseMs }) : await ledger.finish({ ...req, ...finishFields! });
  const rec = res.record;
  warn(io, res.warnings);
  const r = rec.record;
  const lines = [`${kind} ${slug} by ${agent}, execution ${r.execution_id}, record seq ${rec.seq} ${rec.id}`];
  if (r.kind === 'checkpoint') lines.push(`lease until ${r.lease_until}`);
  else lines.push(`outcome ${r.outcome}; ${slug} is released`);
  const captured = res.tests;
  if (captured) {
    const t = captured.tests;
    const where = relative(io.cwd, captured.blob.path) || captured.blob.path;
    lines.push(t.command !== undefined ? `tests: \`${t.command}\` exited ${t.exit_code}; ${t.bytes} bytes of output, ${t.digest} (${where})` : `tests: ${t.bytes} bytes as reported, ${t.digest} (${where})`);
  }
  emit(io, opts, {
    ok: true, kind, slug, id: rec.id, seq: rec.seq, execution_id: r.execution_id,
    lease_until: r.kind === 'checkpoint' ? r.lease_until : null,
    outcome: r.kind === 'finish' ? r.outcome : null,
    tests: captured ? { ...captured.tests, blob: captured.blob.path } : null,
    views: res.views, warnings: res.warnings,
  }, lines);
  return 0;
}

async function runResume(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  askingAgent(io, opts); // checked (a bad --agent exits 2) though a slug was given
  const now = new Date();
  const ledger = Ledger.open({ dir, env: io.env });
  // Speed (issue 14: `resume` <= 1.5x `node -e ''`): git's two read-only questions run beside
  // the fold. Policy: for an unknown slug their answer is dropped; the refusal is the same.
  const git = gitFacts(dirname(ledger.paths.dir));
  const log = readWorkLog(ledger.paths, ledger.head());
  const remote = ledger.remote();
  return emitResume(io, opts, ledger, log, slug, now, remote ? [remoteLine(remote)] : [], git);
}

/** Prints `resume` of one item (its text after `lead`, the reason it was chosen, if any). */
export async function emitResume(io: CliIO, opts: Opts, ledger: Ledger, log: WorkLog, slug: string, now: Date, lead: string[], git?: Promise<GitFacts | null>): Promise<number> {
  const root = dirname(ledger.paths.dir);
  // An unknown slug is refused before git's answer is waited for (or, from status, asked).
  if (!log.items.has(slug)) buildResume(log, slug, { now, root, ledgerDir: ledger.paths.dir, git: null });
  const ctx = { now, root, ledgerDir: ledger.paths.dir, git: await (git ?? gitFacts(root)) };
  const report = buildResume(log, slug, ctx);
  const text = formatResume(report, ctx);
  // The lead line takes one line of the 80-line budget: the last one goes when it would not fit.
  const lines = lead.length ? [...lead, ...text].slice(0, RESUME_MAX_LINES) : text;
  emit(io, opts, { ok: true, mode: 'resume', ...report }, lines);
  return 0;
}

async function runRender(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const vdir = viewsDir(io, opts, dir);
  if (flag(opts, 'check')) {
    if (flag(opts, 'adoptViews')) throw new LedgerError('USAGE', '--adopt-views applies to a render that writes, not to --check');
    const result = checkViews(dir, vdir);
    const lines = result.views.map((v) => `${v.status.padEnd(7)} ${v.file}${v.status === 'stale' ? ` (rendered through seq ${v.through_seq}; the ledger's work log is through seq ${result.through?.seq})` : ''}`);
    if (!result.ok) lines.push('run `ledger render` to rewrite the views from the ledger');
    emit(io, opts, { ...result, exit_code: result.ok ? EXIT.ok : EXIT.viewsDiffer }, lines);
    return result.ok ? EXIT.ok : EXIT.viewsDiffer;
  }
  const written = writeViews(dir, vdir, waitMs(opts), new Date(), flag(opts, 'adoptViews'));
  warn(io, written.kept.map(keptNotice));
  emit(io, opts, { ok: true, ...written }, [`rewrote ${written.files.join(' and ')} through seq ${written.through?.seq ?? 0}`]);
  return 0;
}
