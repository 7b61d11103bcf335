// The handoff-log workflow (SPEC 6 and 10): start, checkpoint and finish, with the rules that the
// CLI's verbs, the MCP server's tools and the library's Ledger.start/checkpoint/finish share. Each
// takes its request as checked (../requests/work.ts: checked once, before anything runs or is
// written; the Ledger checks a library caller's) and:
//   1. refuses view targets that could not be replaced
//   2. checkpoint/finish: digests the evidence sources; advisory ownership and --supersedes checks
//      on the current HEAD, and the key read (so nothing that will be refused waits for, or runs,
//      a test command), then the test command (as the caller, fs/boundary.ts; output scanned for
//      the key, secret-scan.ts; a finish's `tests` invariant against the observed exit), or the
//      reported output, into the blob store
//   3. decides under the writer lock on the current HEAD (ownership.ts and lease.ts: pure, `now`
//      passed in) and appends in the same critical section (the store's transact, which checks
//      the record it signs by the schema)
//   4. rewrites HANDOFF.md and HANDOFF.yml from the ledger
// Policy: `now` is read once per step, right before the decision that writes (for a checkpoint
// with a test command that is when the tests have finished: the record says what was true then,
// and its lease runs from then). The advisory pre-check writes nothing.
//
// The views (and with them the YAML library) and the test runner are loaded only when a step
// needs them, so a program that only appends or reads never pays for them at start-up.
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { LedgerError } from '../errors.js';
import { asCaller, boundaryFor, type Boundary } from '../fs/boundary.js';
import type { CheckpointPayload, CodePlace, Draft, Evidence, FinishPayload, Head, Invariant, LedgerRecord, TestsRun } from '../record.js';
import { checkEvidence, digestSource } from '../causal/evidence.js';
import { keptManifests } from '../causal/evidence/manifest.js';
import { putBlob } from './blobs.js';
import type { CheckpointChecked, FinishChecked, StartChecked } from '../requests/work.js';
import { transact, type Appended, type StoreOptions } from '../store/append.js';
import type { LedgerPaths } from '../store/paths.js';
import type { RecoverReport } from '../store/recover.js';
import { readRecords, type RecordAt } from '../store/read.js';
import type { LedgerWriter } from '../causal/retry.js';
import { DEFAULT_LEASE_MS } from './lease.js';
import { decideStart, decideWrite } from './ownership.js';
import type { CapturedTests, RanTests } from './tests-cmd.js';
import { valueContainsSecret, type KeySecret } from './secret-scan.js';
import { readWorkLogFast } from './fold-memo.js';
import { openItems, type WorkLog } from './workitems.js';
import type { DidYouMean } from '../text/suggest.js';

/** What the workflow needs of a writer: the causal layer's, and the clock it reads once a step. */
export interface WorkWriter extends LedgerWriter {
  now(): Date;
  /** The signing key's secret, so that test output carrying it is never recorded (secret-scan.ts);
   * null when the writer holds only a Signer. Read before a test command runs. */
  keySecret?(): KeySecret | null;
  /** A joined ledger: brings the local copy to the remote within the read budget, before the
   *  advisory checks (remote/current.ts); never throws. */
  refresh?(): void;
}

/** The views after a published write: rewritten, or why not (a warning, never a failure). */
export interface ViewsRefresh { ok: boolean; dir: string; error?: string }

export interface WorkResult<K extends 'start' | 'checkpoint' | 'finish' | 'release' | 'note'> {
  record: Appended & { record: LedgerRecord<K> };
  recovered: RecoverReport | null;
  /** What the caller should be told (the CLI prints each on stderr). */
  warnings: string[];
  /** null when the request said `views: false`. */
  views: ViewsRefresh | null;
}

export interface WriteResult<K extends 'checkpoint' | 'finish'> extends WorkResult<K> {
  /** The test output recorded, with where its whole text was stored. */
  tests: CapturedTests | null;
  /** Set when the writer's own lease had lapsed (nobody took over). */
  lapsedAt: string | null;
}

// ---------------------------------------------------------------------------------------------
// 2-4. The steps.

export function workRecords(w: LedgerWriter, head: Head): Iterable<RecordAt> {
  return readRecords(w.paths, head, 0, 0, w.store.ops);
}

/** The work log through `head`: the records it folds, located by the fold memo (fold-memo.ts). */
export function workLog(w: LedgerWriter, head: Head): WorkLog {
  return readWorkLogFast(w.paths, head, Infinity, { ops: w.store.ops });
}

/** The store options of one step: the clock fixed at the step's `now`. */
export function at(w: WorkWriter, now: Date): StoreOptions {
  return { ...w.store, now: () => now };
}

/** Rewrites the views after a published write. Policy: the record is the truth and is already
 * published, so a failed view write is a warning (a script does not write the record twice);
 * `ledger render` repairs it and `render --check` catches it meanwhile. */
export async function refreshViews(w: LedgerWriter, views: string | false | undefined, warnings: string[], adopt = false): Promise<ViewsRefresh | null> {
  if (views === false) return null;
  const { defaultViewsDir, keptNotice, writeViews } = await import('./views.js');
  const dir = views ?? defaultViewsDir(w.paths.dir);
  try {
    // A person's edit of a view is kept beside it by writeViews; the caller is told (SPEC 10).
    for (const k of writeViews(w.paths, dir, w.store.waitMs ?? 10_000, new Date(), adopt).kept) warnings.push(keptNotice(k));
    return { ok: true, dir };
  } catch (e) {
    warnings.push(`the record is published but the views in ${dir} were not rewritten (${(e as Error).message}); run \`ledger render\``);
    return { ok: false, dir, error: (e as Error).message };
  }
}

/** Step 1: views that could not be replaced (a planted link) refuse the verb before anything is written. */
async function checkViewTargets(w: LedgerWriter, views: string | false | undefined): Promise<void> {
  if (views === false) return;
  const { assertViewTargets, defaultViewsDir } = await import('./views.js');
  assertViewTargets(views ?? defaultViewsDir(w.paths.dir));
}

/**
 * Before a verb appends: refuses views that another ledger rendered (views.ts assertViewsOwned),
 * so that the refusal changes nothing; writeViews checks again under the views lock.
 */
export async function guardViews(w: LedgerWriter, head: Head, views: string | false | undefined, adopt: boolean | undefined): Promise<void> {
  if (views === false || adopt === true) return;
  const { assertViewsOwned, defaultViewsDir } = await import('./views.js');
  assertViewsOwned(w.paths.dir, views ?? defaultViewsDir(w.paths.dir), head.genesis);
}

export function recoveredWarning(recovered: RecoverReport | null, warnings: string[]): void {
  if (recovered) warnings.push(`moved ${recovered.unpublished} unpublished bytes to ${recovered.file}`);
}

/**
 * A start of SLUG refused as a typo of `near` (the open items it is a typo of, best first).
 * Policy: exit 2 (INPUT_REFUSED), nothing written; the one line names the items, where to read
 * the nearest, and the switch that starts the new item anyway.
 */
function refuseTypo(slug: string, near: readonly string[], didYouMean: DidYouMean): void {
  const guess = didYouMean(near, (n) => n);
  if (guess === null) return;
  throw new LedgerError('INPUT_REFUSED', `no work item ${slug} in this ledger; ${guess}`, { slug, near: [...near] },
    `\`ledger resume ${near[0]}\` shows it; to start ${slug} as a new item anyway, add --new-item`);
}

/** Takes a work item: decides ownership under the writer lock, on the current HEAD. */
export async function startWork(w: WorkWriter, req: StartChecked): Promise<WorkResult<'start'>> {
  const { slug, agent, summary, takeover, force, reason } = req;
  const leaseMs = req.leaseMs ?? DEFAULT_LEASE_MS;
  await checkViewTargets(w, req.views);
  await guardViews(w, w.head(), req.views, req.adoptViews);
  const code = await whereTheCodeIs(w, req.cwd, req.views);
  // Issue 26.4: a new slug a typo away from an open item's is refused unless asked for. The
  // distance is loaded before the lock, only when the slug is new (items never vanish, so one new
  // before the lock is new or just started under it).
  const suggest = req.newItem || workLog(w, w.head()).items.has(slug) ? null : await import('../text/suggest.js');
  const typo = suggest ? suggest.typoOf((await import('fastest-levenshtein')).distance) : null;
  const now = w.now();
  const res = transact(at(w, now), w.signer(), (view) => {
    const log = workLog(w, view.head);
    const item = log.items.get(slug);
    if (item === undefined && typo) refuseTypo(slug, typo(slug, openItems(log).map((i) => i.slug)), suggest!.didYouMean);
    const payload = decideStart(item, { slug, agent, summary, leaseMs, takeover, force, reason, now, seq: view.head.seq + 1 });
    return [{ kind: 'start', agent, ...payload, code } as Draft];
  });
  const warnings: string[] = [];
  recoveredWarning(res.recovered, warnings);
  const views = await refreshViews(w, req.views, warnings, req.adoptViews);
  return { record: res.records[0] as WorkResult<'start'>['record'], recovered: res.recovered, warnings, views };
}

/**
 * Where the code is (issue 24.5, code-place.ts), from the caller's working directory, else (a
 * library caller that names none) the ledger's project. Policy: a folder that is not there
 * records the machine and that path with no git facts, never a refusal.
 */
async function whereTheCodeIs(w: LedgerWriter, cwd: string | undefined, views: string | false | undefined, as?: Boundary): Promise<CodePlace> {
  const { codePlace } = await import('./code-place.js');
  const dir = resolve(cwd ?? dirname(w.paths.dir));
  return codePlace(dir, ledgerFiles(w, views), as);
}

/** --supersedes may name only earlier handoff or finish records of the same operation (SPEC 6). */
function checkSupersedes(w: LedgerWriter, head: Head, slug: string, ids: string[]): void {
  const wanted = new Set(ids);
  const found = new Map<string, RecordAt>();
  for (const r of workRecords(w, head)) if (wanted.has(r.id)) found.set(r.id, r);
  for (const id of ids) {
    const r = found.get(id);
    const rec = r?.record as { kind?: string; logical_operation_id?: string } | undefined;
    if (!r || (rec?.kind !== 'handoff' && rec?.kind !== 'finish') || rec.logical_operation_id !== slug) {
      throw new LedgerError('INPUT_REFUSED', `--supersedes ${id.slice(0, 19)}… is not a handoff or finish of ${slug} in this ledger${r ? ` (seq ${r.seq} is a ${String(rec?.kind)} of ${String(rec?.logical_operation_id ?? 'no operation')})` : ''}`, { supersedes: id });
    }
  }
}

/** "30m", "1500ms": a timeout as a duration flag would spell it. */
function exactSpan(ms: number): string {
  for (const [unit, n] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) if (ms % n === 0) return `${ms / n}${unit}`;
  return `${ms}ms`;
}

/** Records a milestone of (checkpoint) or closes (finish) a work item the agent owns. */
export function checkpointWork(w: WorkWriter, req: CheckpointChecked): Promise<WriteResult<'checkpoint'>> {
  return writeWork(w, 'checkpoint', req);
}

export function finishWork(w: WorkWriter, req: FinishChecked): Promise<WriteResult<'finish'>> {
  return writeWork(w, 'finish', req);
}

/** The test run's observed result decides the `tests` invariant of a finish (SPEC 10, issue 14.5). */
const TESTS_INVARIANT = 'tests';

/** The folder and views whose changes never make a work tree dirty (real paths, as git prints them). */
function ledgerFiles(w: LedgerWriter, views: string | false | undefined): { ledgerDir: string; views: string[] } {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const vdir = real(typeof views === 'string' ? views : dirname(w.paths.dir));
  return { ledgerDir: real(w.paths.dir), views: [join(vdir, 'HANDOFF.md'), join(vdir, 'HANDOFF.yml')] };
}

/**
 * Where a test command runs by default. Policy: from the project's top, not wherever the caller
 * stands: a runner started in a subdirectory (pytest in tests/) finds no configuration and
 * records "no tests ran" (issue 26). The top is the git work tree that holds the caller's
 * directory (asked as the tests user; a `git worktree` checkout is its own top), else the
 * project root when the caller is inside it, else the caller's directory. `--tests-cwd` says
 * otherwise.
 */
export function testsDir(callerCwd: string, root: string, gitTop: (dir: string) => string | null): string {
  const top = gitTop(callerCwd)?.trim();
  if (top && isDirectory(top)) return top;
  const rel = relative(root, callerCwd);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)) ? root : callerCwd;
}

function secretInPayload(field: string): LedgerError {
  return new LedgerError('INPUT_REFUSED', `${field} contains the signing key's secret; nothing was recorded`, {}, 'treat this key as exposed');
}

/**
 * Evidence as the request gave it, each source digested now (relative paths from `cwd`, as
 * `--evidence` reads them: ../causal/evidence.ts), each digested entry as it is.
 */
export function digestEvidence(paths: LedgerPaths, evidence: Readonly<Record<string, Evidence | string>>, cwd: string = process.cwd(), keepManifests = false): Record<string, Evidence> {
  const ctx = { root: dirname(paths.dir), ledgerDir: paths.dir, cwd };
  // The manifest of a dir/ digest goes to the blob store before the record that names it (the
  // records-before-pointer rule, as for test output), so a later hold can name the first path
  // that differs (../causal/evidence/manifest.ts).
  const keep = keepManifests ? (_digest: string, stream: Buffer) => void putBlob(paths.dir, stream) : undefined;
  const out: Record<string, Evidence> = {};
  for (const [name, e] of Object.entries(evidence)) out[name] = typeof e === 'string' ? digestSource(e, ctx, keep) : e;
  return out;
}

async function writeWork<K extends 'checkpoint' | 'finish'>(w: WorkWriter, kind: K, req: K extends 'finish' ? FinishChecked : CheckpointChecked): Promise<WriteResult<K>> {
  const c = req;
  const leaseMs = kind === 'checkpoint' ? ((req as CheckpointChecked).leaseMs ?? DEFAULT_LEASE_MS) : 0;
  let finishFields: Pick<FinishPayload, 'outcome' | 'invariants' | 'depends_on' | 'supersedes' | 'note'> | null = null;
  if (kind === 'finish') {
    const f = req as FinishChecked;
    finishFields = {
      outcome: f.outcome,
      invariants: f.invariants,
      depends_on: f.depends_on,
      ...(f.supersedes !== undefined ? { supersedes: f.supersedes } : {}),
      ...(f.note !== undefined ? { note: f.note } : {}),
    };
  }

  await checkViewTargets(w, req.views);
  // 2. the evidence, digested now (a source that cannot be is refused before any test runs)
  const evidence = digestEvidence(w.paths, c.evidence, c.cwd, true);
  const tests = c.tests;
  const command = tests !== undefined && 'command' in tests ? tests : null;
  const explicitCwd = command?.cwd !== undefined ? resolve(command.cwd) : null;
  if (explicitCwd !== null && !isDirectory(explicitCwd)) throw new LedgerError('USAGE', `--tests-cwd ${explicitCwd} is not a directory; nothing was run or recorded`, { cwd: explicitCwd });
  const callerInvariant = finishFields?.invariants[TESTS_INVARIANT];
  // Where the code is: asked after the tests ran (the record says what was there then).
  let code: CodePlace | null = null;
  const draftOf = (execution_id: string, now: Date, captured: TestsRun | undefined): Draft => {
    const common = {
      logical_operation_id: c.slug, execution_id, done: c.done, state: c.state, next: c.next,
      verified: c.verified, attempted: c.attempted, blockers: c.blockers,
      ...(captured ? { tests: captured } : {}),
      ...(code ? { code } : {}),
    };
    if (kind === 'checkpoint') {
      const payload: CheckpointPayload = { ...common, ...(Object.keys(evidence).length ? { evidence } : {}), lease_until: new Date(now.getTime() + leaseMs).toISOString() };
      return { kind, agent: c.agent, ...payload } as Draft;
    }
    const payload: FinishPayload = { ...common, ...finishFields!, evidence };
    return { kind, agent: c.agent, ...payload } as Draft;
  };
  // A run of a finish adds its own `tests` invariant when the caller gave none (the request's
  // check counted it: ../requests/work.ts).
  const observedInvariant = (ok: boolean, exit: number, nothing: string | null): Invariant => ({ ok, detail: `observed by the ledger: --tests-cmd exited ${exit}${nothing ? `; nothing was tested: ${nothing}` : ''}` });

  //    advisory, on the current HEAD: a non-owner, or a finish superseding what it may not, is
  //    refused before a test suite runs for nothing (both are decided again under the lock); in
  //    a joined ledger on the remote's state, within the read budget (SPEC 11)
  w.refresh?.();
  const head = w.head();
  const advisory = decideWrite(workLog(w, head).items.get(c.slug), { slug: c.slug, agent: c.agent, kind, now: w.now() });
  if (finishFields?.supersedes) checkSupersedes(w, head, c.slug, finishFields.supersedes);
  await guardViews(w, head, req.views, req.adoptViews);
  // The key, read now (a missing or insecure key is refused before the run): no field, and no
  // output, that carries its secret is ever recorded.
  const secret = w.keySecret?.() ?? null;
  if (secret && valueContainsSecret(secret, draftOf(advisory.execution_id, w.now(), undefined))) throw secretInPayload('the request');
  if (command && secret === null) {
    throw new LedgerError('USAGE', 'tests.command needs a writer that knows its key (opened with a key file or a seed, not a Signer), so that the output can be checked for it', {}, 'run the tests yourself and pass { text }');
  }

  let captured: CapturedTests | null = null;
  const { DEFAULT_TESTS_TIMEOUT_MS, runTestsCommand, storeReportedTests } = await import('./tests-cmd.js');
  if (command) {
    // Who runs it: the caller, never the key's owner on the caller's behalf (fs/boundary.ts).
    const env = command.env ?? process.env;
    const boundary = boundaryFor(command.callerEnv ?? env);
    const user = asCaller(boundary, '--tests-cmd');
    const { workdirFacts, git } = await import('./git.js');
    const cwd = explicitCwd ?? testsDir(resolve(c.cwd ?? process.cwd()), dirname(w.paths.dir), (dir) => git(dir, ['rev-parse', '--show-toplevel'], boundary));
    // Policy: git is asked just before the run: the record says which commit was tested.
    const workdir = workdirFacts(cwd, ledgerFiles(w, req.views), boundary);
    const ran: RanTests = await runTestsCommand(command.command, {
      cwd, ledgerDir: w.paths.dir, timeoutMs: command.timeoutMs ?? DEFAULT_TESTS_TIMEOUT_MS, env, boundary, user, secret: secret!,
      keyPath: secret!.path,
    });
    // 3a. harness-observed (SPEC 10): a `tests` invariant that says ok while the ledger saw the
    //     command fail is refused, and its output is not kept
    if (callerInvariant?.ok === true && ran.exitCode !== 0) {
      ran.discard();
      throw new LedgerError('INPUT_REFUSED', `--invariant ${TESTS_INVARIANT}=ok, but the ledger ran --tests-cmd and it exited ${ran.exitCode}; nothing was recorded`, { exit_code: ran.exitCode }, `finish with --invariant ${TESTS_INVARIANT}=fail (or leave it out: the ledger records what it saw), or fix the tests first`);
    }
    if (finishFields && callerInvariant === undefined) finishFields.invariants = { ...finishFields.invariants, [TESTS_INVARIANT]: observedInvariant(ran.exitCode === 0 && ran.nothingTested === null, ran.exitCode, ran.nothingTested) };
    captured = ran.adopt({ workdir });
  } else if (tests !== undefined) {
    captured = storeReportedTests((tests as { text: string }).text, w.paths.dir, secret);
  }

  code = await whereTheCodeIs(w, c.cwd, req.views);
  // 3b. the decision that counts, under the writer lock
  const now = w.now();
  let lapsedAt: string | null = null;
  const res = transact(at(w, now), w.signer(), (view) => {
    const decision = decideWrite(workLog(w, view.head).items.get(c.slug), { slug: c.slug, agent: c.agent, kind, now });
    if (finishFields?.supersedes) checkSupersedes(w, view.head, c.slug, finishFields.supersedes);
    lapsedAt = decision.lapsedAt;
    return [draftOf(decision.execution_id, now, captured ? (captured.tests as TestsRun) : undefined)];
  });

  // 4. warnings and views
  const warnings: string[] = [];
  recoveredWarning(res.recovered, warnings);
  // Policy: evidence is digested before the test command runs (a source that cannot be digested
  // is refused before a suite runs for nothing); a run that then changes it (a build, a cache
  // git does not ignore) would make a gate hold at once, so it is checked again and said.
  if (command && Object.keys(evidence).length) {
    const ctx = { root: dirname(w.paths.dir), ledgerDir: w.paths.dir, manifests: keptManifests(w.paths.dir) };
    for (const [name, ev] of Object.entries(evidence)) {
      const now = checkEvidence(name, ev, ctx, { allowOpaque: true });
      if (!now.current) warnings.push(`evidence ${name} is already not current after --tests-cmd ran: ${now.reason}; a gate on this ${kind} will hold (ignore what the run writes in .gitignore, or name the evidence after the run)`);
    }
  }
  if (lapsedAt) warnings.push(`your lease on ${c.slug} had lapsed at ${lapsedAt} (nobody took over); this ${kind} ${kind === 'checkpoint' ? 'renews it' : 'closes the item'}`);
  if (c.verified.length && !captured) warnings.push(`${c.verified.length} item${c.verified.length === 1 ? '' : 's'} claimed as verified, but no test output recorded (--tests-cmd CMD, or --tests TEXT): the next session will read them as claims`);
  const nothing = (captured?.tests as TestsRun | undefined)?.nothing_tested;
  if (nothing) warnings.push(`--tests-cmd tested nothing: ${nothing}; recorded as it ran, so that the next session does not read it as a test run`);
  // Policy: a failing run is not a false claim by itself: "14 pass, 2 fail" verifies the 14
  // (issue 26), and the exit code is in the record and the output; only a run that tested
  // nothing is said to leave the claims unbacked.
  if (c.verified.length && nothing) warnings.push(`${c.verified.length} item${c.verified.length === 1 ? '' : 's'} claimed as verified, but the test command tested nothing`);
  if (captured?.timedOut && command) warnings.push(`--tests-cmd was stopped after ${command.timeoutLabel ?? exactSpan(command.timeoutMs ?? DEFAULT_TESTS_TIMEOUT_MS)}; recorded as exit code 124`);
  if (kind === 'finish' && finishFields!.outcome === 'success' && c.blockers.length) warnings.push(`finished with outcome success while ${c.blockers.length} blocker${c.blockers.length === 1 ? ' is' : 's are'} open`);
  // Policy: a finish that a gate has nothing to check against is allowed (closing an item that
  // led nowhere is honest), but said: docs/formats.md calls evidence required for a finish.
  if (kind === 'finish' && !Object.keys(evidence).length && !Object.keys(finishFields!.invariants).length && !captured) {
    warnings.push('this finish records no evidence, no invariants and no test output: a gate on it has nothing to check (--evidence NAME=SOURCE, --invariant NAME=ok, --tests-cmd CMD)');
  }
  const views = await refreshViews(w, req.views, warnings, req.adoptViews);
  return { record: res.records[0] as WriteResult<K>['record'], recovered: res.recovered, warnings, views, tests: captured, lapsedAt };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
