// The handoff-log verbs' implementation (registered in ./handoff.ts). Each writing verb:
//   1. reads and checks its flags (a bad one exits 2 and changes nothing)
//   2. start: decides ownership inside Ledger.transact, under the writer lock, on the current
//      HEAD; checkpoint/finish: first an advisory ownership check (so a non-owner never waits
//      for a test run), then the test command, then the same decision inside transact
//   3. rewrites HANDOFF.md and HANDOFF.yml from the ledger
// Policy: `now` is read once per command, right before the decision that writes (for a
// checkpoint with --tests-cmd that is when the tests have finished: the record says what was
// true then, and its lease runs from then). The advisory pre-check writes nothing.
import { dirname, relative, resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import { ID_RE, type CheckpointPayload, type Draft, type Evidence, type FinishPayload, type Head, type TestsRun } from '../../record.js';
import type { RecordAt } from '../../store/read.js';
import { DEFAULT_LEASE_MS } from '../../handoff/lease.js';
import { decideStart, decideWrite } from '../../handoff/ownership.js';
import { DEFAULT_TESTS_TIMEOUT_MS, runTestsCommand, storeReportedTests, type CapturedTests } from '../../handoff/tests-cmd.js';
import { checkViews, defaultViewsDir, readWorkLog, writeViews } from '../../handoff/views.js';
import { foldWorkLog } from '../../handoff/workitems.js';
import { buildResume, formatResume } from '../../handoff/resume.js';
import { gitFacts } from '../../handoff/git.js';
import {
  agentName, durationFlag, emit, flag, keyPath, ledgerDir, many, one, waitMs, type CliIO, type Opts,
} from './common.js';
import { parseEvidence, parseHandoffTail, parseOutcome } from './handoff-flags.js';

/** `render --check` exit code when a view is missing, stale or hand-edited (README). */
export const VIEWS_DIFFER_EXIT = 30;

type Verb = 'start' | 'checkpoint' | 'finish' | 'resume' | 'render';

export async function runHandoffVerb(verb: Verb, io: CliIO, slug: string | undefined, opts: Opts): Promise<number> {
  switch (verb) {
    case 'start':
      return runStart(io, checkSlug(slug), opts);
    case 'checkpoint':
    case 'finish':
      return runWrite(io, verb, checkSlug(slug), opts);
    case 'resume':
      return runResume(io, checkSlug(slug), opts);
    case 'render':
      return runRender(io, opts);
  }
}

function checkSlug(slug: string | undefined): string {
  if (slug === undefined || !ID_RE.test(String(slug))) {
    throw new LedgerError('USAGE', `SLUG must be 1-128 chars of [A-Za-z0-9._:-] (it is the work item's logical_operation_id), got "${String(slug)}"`);
  }
  return String(slug);
}

/** A required text flag: exactly one value, not blank, at most `max` chars. */
function text(opts: Opts, name: string, what: string, max = 4096): string {
  const v = opts[name];
  const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (values.length === 0) throw new LedgerError('USAGE', `--${name} is required (${what})`);
  if (values.length > 1) throw new LedgerError('USAGE', `--${name} was given ${values.length} times; it takes one value`);
  const s = values[0];
  if (typeof s !== 'string' || s.trim() === '') throw new LedgerError('USAGE', `--${name} is empty; it must say ${what}`);
  if (s.length > max) throw new LedgerError('USAGE', `--${name} is ${s.length} chars; at most ${max}`);
  return s;
}

/** The one-next-action rule (the essay's discipline, SPEC 10): exactly one --next. */
function nextAction(opts: Opts): string {
  const v = opts.next;
  const n = v === undefined ? 0 : Array.isArray(v) ? v.length : 1;
  if (n === 0) throw new LedgerError('USAGE', '--next is required: exactly one concrete next action ("fix toLocal() for -05:00"), for whoever comes next');
  if (n > 1) throw new LedgerError('USAGE', `--next was given ${n} times; a checkpoint names exactly one next action (put the rest in --state or --blocker)`);
  return text(opts, 'next', 'one concrete next action');
}

function items(opts: Opts, name: string): string[] {
  const xs = many(opts, name);
  if (xs.length > 64) throw new LedgerError('USAGE', `--${name} was given ${xs.length} times; at most 64`);
  for (const x of xs) {
    if (x.trim() === '') throw new LedgerError('USAGE', `--${name} is empty; each item must say something`);
    if (x.length > 1024) throw new LedgerError('USAGE', `--${name} "${x.slice(0, 30)}…" is ${x.length} chars; at most 1024`);
  }
  return xs;
}

/** Policy: a lease is at most 30 days; a longer one would only lock others out of a slug. */
const MAX_LEASE_MS = 30 * 86_400_000;
const MAX_TESTS_TIMEOUT_MS = 24 * 86_400_000;

function leaseFlag(opts: Opts): number {
  const ms = durationFlag(opts, 'lease', DEFAULT_LEASE_MS)!;
  if (ms <= 0 || ms > MAX_LEASE_MS) throw new LedgerError('USAGE', `--lease must be between 1ms and 30d, got "${String(one(opts, 'lease'))}"`);
  return ms;
}

function viewsDir(io: CliIO, opts: Opts, dir: string): string {
  const v = one(opts, 'views');
  return v === undefined ? defaultViewsDir(dir) : resolve(io.cwd, v);
}

/** Rewrites the views after a published write. Policy: the record is the truth and is already
 * published, so a failed view write is a warning (exit stays 0, so a script does not write the
 * record twice); `ledger render` repairs it and `render --check` catches it meanwhile. */
function refreshViews(io: CliIO, dir: string, vdir: string, wait: number, warnings: string[]): { ok: boolean; dir: string; error?: string } {
  try {
    writeViews(dir, vdir, wait);
    return { ok: true, dir: vdir };
  } catch (e) {
    const msg = `the record is published but the views in ${vdir} were not rewritten (${(e as Error).message}); run \`ledger render\``;
    warnings.push(msg);
    return { ok: false, dir: vdir, error: (e as Error).message };
  }
}

function warn(io: CliIO, warnings: string[]): void {
  for (const w of warnings) io.stderr(`ledger: warning: ${w}\n`);
}

async function runStart(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const agent = agentName(io, opts);
  const summary = text(opts, 'summary', 'what you are about to do');
  const leaseMs = leaseFlag(opts);
  const takeover = flag(opts, 'takeover');
  const vdir = viewsDir(io, opts, dir);
  const wait = waitMs(opts);
  const now = new Date();
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: wait, now: () => now });
  const res = ledger.transact((view) => {
    const item = foldWorkLog(ledger.records(view.head)).items.get(slug);
    const payload = decideStart(item, { slug, agent, summary, leaseMs, takeover, now, seq: view.head.seq + 1 });
    return [{ kind: 'start', agent, ...payload } as Draft];
  });
  const rec = res.records[0];
  const r = rec.record as Draft<'start'>;
  const warnings: string[] = [];
  if (res.recovered) warnings.push(`moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}`);
  const views = refreshViews(io, dir, vdir, wait, warnings);
  warn(io, warnings);
  const lines = [`started ${slug} as ${agent}, execution ${r.execution_id}, lease until ${r.lease_until}`, `record seq ${rec.seq} ${rec.id}`];
  if (r.takeover) lines.push(r.takeover.agent === agent ? `replaces your earlier execution ${r.takeover.execution_id}` : `took over from ${r.takeover.agent} (execution ${r.takeover.execution_id}, lease lapsed at ${r.takeover.lease_until})`);
  emit(io, opts, { ok: true, kind: 'start', slug, id: rec.id, seq: rec.seq, execution_id: r.execution_id, lease_until: r.lease_until, takeover: r.takeover ?? null, views, warnings }, lines);
  return 0;
}

async function runWrite(io: CliIO, kind: 'checkpoint' | 'finish', slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const root = dirname(dir);
  const agent = agentName(io, opts);
  // 1. every flag, before anything runs or is written
  const done = text(opts, 'done', 'what was just done');
  const state = text(opts, 'state', 'the state now, in plain words');
  const next = nextAction(opts);
  const verified = items(opts, 'verified');
  const attempted = items(opts, 'attempted');
  const blockers = items(opts, 'blocker');
  const testsText = one(opts, 'tests');
  const testsCmd = one(opts, 'testsCmd', 'tests-cmd');
  if (testsText !== undefined && testsCmd !== undefined) throw new LedgerError('USAGE', '--tests and --tests-cmd both give test output; pass one (--tests-cmd has the ledger run it)');
  if (testsCmd !== undefined && testsCmd.length > 4096) throw new LedgerError('USAGE', `--tests-cmd is ${testsCmd.length} chars; at most 4096`);
  const testsTimeout = durationFlag(opts, 'testsTimeout', DEFAULT_TESTS_TIMEOUT_MS)!;
  // A timer longer than 2^31-1 ms fires at once in Node; 24 days is far beyond any suite.
  if (testsTimeout <= 0 || testsTimeout > MAX_TESTS_TIMEOUT_MS) throw new LedgerError('USAGE', `--tests-timeout must be between 1ms and 24d, got "${String(one(opts, 'testsTimeout', 'tests-timeout'))}"`);
  if (testsCmd === undefined && opts.testsTimeout !== undefined) throw new LedgerError('USAGE', '--tests-timeout applies only with --tests-cmd');
  const leaseMs = kind === 'checkpoint' ? leaseFlag(opts) : 0;
  const evidence: Record<string, Evidence> = parseEvidence(many(opts, 'evidence'), { root, ledgerDir: dir, cwd: io.cwd });
  let finishFields: Pick<FinishPayload, 'outcome' | 'invariants' | 'depends_on' | 'supersedes' | 'note'> | null = null;
  if (kind === 'finish') {
    finishFields = { outcome: parseOutcome(one(opts, 'outcome') ?? 'success'), ...parseHandoffTail(opts) };
  }
  const vdir = viewsDir(io, opts, dir);
  const wait = waitMs(opts);

  // 2. advisory: a non-owner is refused before a test suite runs for nothing
  const reader = Ledger.open({ dir });
  decideWrite(readWorkLog(reader).items.get(slug), { slug, agent, kind, now: new Date() });

  // 3. test output: run by the ledger, or as reported
  let captured: CapturedTests | null = null;
  if (testsCmd !== undefined) {
    captured = await runTestsCommand(testsCmd, { cwd: root, ledgerDir: reader.paths.dir, timeoutMs: testsTimeout, env: { ...process.env, ...io.env } });
  } else if (testsText !== undefined) {
    captured = storeReportedTests(testsText, reader.paths.dir);
  }

  // 4. the decision that counts, under the writer lock
  const now = new Date();
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: wait, now: () => now });
  let lapsedAt: string | null = null;
  const res = ledger.transact((view) => {
    const decision = decideWrite(foldWorkLog(ledger.records(view.head)).items.get(slug), { slug, agent, kind, now });
    if (finishFields?.supersedes) checkSupersedes(ledger, view.head, slug, finishFields.supersedes);
    lapsedAt = decision.lapsedAt;
    const common = {
      logical_operation_id: slug,
      execution_id: decision.execution_id,
      done,
      state,
      next,
      verified,
      attempted,
      blockers,
      ...(captured ? { tests: captured.tests as TestsRun } : {}),
    };
    if (kind === 'checkpoint') {
      const payload: CheckpointPayload = {
        ...common,
        ...(Object.keys(evidence).length ? { evidence } : {}),
        lease_until: new Date(now.getTime() + leaseMs).toISOString(),
      };
      return [{ kind, agent, ...payload } as Draft];
    }
    const payload: FinishPayload = { ...common, ...finishFields!, evidence };
    return [{ kind, agent, ...payload } as Draft];
  });
  const rec = res.records[0];

  // 5. warnings, views, result
  const warnings: string[] = [];
  if (res.recovered) warnings.push(`moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}`);
  if (lapsedAt) warnings.push(`your lease on ${slug} had lapsed at ${lapsedAt} (nobody took over); this ${kind} ${kind === 'checkpoint' ? 'renews it' : 'closes the item'}`);
  if (verified.length && !captured) warnings.push(`${verified.length} item${verified.length === 1 ? '' : 's'} claimed as verified, but no test output recorded (--tests-cmd CMD, or --tests TEXT): the next session will read them as claims`);
  if (verified.length && captured?.tests.exit_code !== undefined && captured.tests.exit_code !== 0) warnings.push(`items claimed as verified while the test command exited ${captured.tests.exit_code}`);
  if (captured?.timedOut) warnings.push(`--tests-cmd was stopped after ${opts.testsTimeout ?? '30m'}; recorded as exit code 124`);
  if (kind === 'finish' && finishFields!.outcome === 'success' && blockers.length) warnings.push(`finished with outcome success while ${blockers.length} blocker${blockers.length === 1 ? ' is' : 's are'} open`);
  const views = refreshViews(io, dir, vdir, wait, warnings);
  warn(io, warnings);
  const r = rec.record as Draft<'checkpoint'> | Draft<'finish'>;
  const lines = [`${kind} ${slug} by ${agent}, execution ${r.execution_id}, record seq ${rec.seq} ${rec.id}`];
  if (r.kind === 'checkpoint') lines.push(`lease until ${r.lease_until}`);
  else lines.push(`outcome ${r.outcome}; ${slug} is released`);
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
    views, warnings,
  }, lines);
  return 0;
}

/** --supersedes may name only earlier handoff or finish records of the same operation (SPEC 6). */
function checkSupersedes(ledger: Ledger, head: Head, slug: string, ids: string[]): void {
  const wanted = new Set(ids);
  const found = new Map<string, RecordAt>();
  for (const r of ledger.records(head)) if (wanted.has(r.id)) found.set(r.id, r);
  for (const id of ids) {
    const r = found.get(id);
    const rec = r?.record as { kind?: string; logical_operation_id?: string } | undefined;
    if (!r || (rec?.kind !== 'handoff' && rec?.kind !== 'finish') || rec.logical_operation_id !== slug) {
      throw new LedgerError('INPUT_REFUSED', `--supersedes ${id.slice(0, 19)}… is not a handoff or finish of ${slug} in this ledger${r ? ` (seq ${r.seq} is a ${String(rec?.kind)} of ${String(rec?.logical_operation_id ?? 'no operation')})` : ''}`, { supersedes: id });
    }
  }
}

async function runResume(io: CliIO, slug: string, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const now = new Date();
  const ledger = Ledger.open({ dir });
  const log = readWorkLog(ledger);
  const root = dirname(ledger.paths.dir);
  // An unknown slug is refused before git is asked anything.
  if (!log.items.has(slug)) buildResume(log, slug, { now, root, ledgerDir: ledger.paths.dir, git: null });
  const ctx = { now, root, ledgerDir: ledger.paths.dir, git: gitFacts(root) };
  const report = buildResume(log, slug, ctx);
  emit(io, opts, report, formatResume(report, ctx));
  return 0;
}

async function runRender(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const vdir = viewsDir(io, opts, dir);
  if (flag(opts, 'check')) {
    const result = checkViews(dir, vdir);
    const lines = result.views.map((v) => `${v.status.padEnd(7)} ${v.file}${v.status === 'stale' ? ` (rendered through seq ${v.through_seq}; the ledger's work log is through seq ${result.through?.seq})` : ''}`);
    if (!result.ok) lines.push('run `ledger render` to rewrite the views from the ledger');
    emit(io, opts, { ...result, exit_code: result.ok ? 0 : VIEWS_DIFFER_EXIT }, lines);
    return result.ok ? 0 : VIEWS_DIFFER_EXIT;
  }
  const written = writeViews(dir, vdir, waitMs(opts));
  emit(io, opts, { ok: true, ...written }, [`rewrote ${written.files.join(' and ')} through seq ${written.through?.seq ?? 0}`]);
  return 0;
}
