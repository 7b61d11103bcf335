// The writing tools of the handoff log: start, checkpoint, finish, release and note. Each call's
// arguments become the verb's request (../../requests/work.ts), which the Ledger checks and runs
// (the workflow, release, note) with the server's agent and key. A checkpoint's `tests_cmd` is
// run by the server itself (the workflow's runner), so its exit code and output are
// harness-observed, not what the agent typed. A refusal is the request's or the workflow's own
// LedgerError, and nothing ran or was written.
import * as z from 'zod';
import { LedgerError } from '../../errors.js';
import type { Dependency, Invariant, Outcome, TestsRun } from '../../record.js';
import type { TestsRequest } from '../../requests/work.js';
import { oneLine } from '../../text/lines.js';
import { quoted } from '../../index.js';
import { ANSWER, durationArg, evidenceArg, itemsArg, outcomeArg, shortId, slugArg, textArg, tool, type ToolContext } from './kit.js';

const recorded = {
  slug: z.string(),
  id: z.string().describe('The record appended'),
  seq: z.number(),
  execution_id: z.string(),
  warnings: z.array(z.string()),
};

export const startTool = tool({
  name: 'start',
  title: 'Take a work item',
  description:
    'Call before substantive work: takes the work item SLUG as yours (its logical_operation_id) with a summary of what you are about to do, and holds it with a lease (default 60m, renewed by each checkpoint). Refused while another agent\'s lease is live; takeover: true takes a lapsed one; takeover with force: true and a reason takes a live one (its owner\'s session died).',
  input: z.strictObject({
    slug: slugArg,
    summary: textArg('What you are about to do'),
    lease: durationArg('How long you hold it without a checkpoint (default 60m)').optional(),
    takeover: z.boolean().optional().describe('Take over an item whose lease has lapsed'),
    force: z.boolean().optional().describe('With takeover: take a live lease (needs reason)'),
    reason: textArg('With takeover: why; recorded and shown to the previous owner').optional(),
    new_item: z.boolean().optional().describe('Start SLUG as a new item even though an open item\'s slug is a typo away (without it: refused, "did you mean")'),
  }),
  output: z.strictObject({
    ...ANSWER,
    ...recorded,
    lease_until: z.string(),
    takeover: z.looseObject({ agent: z.string(), execution_id: z.string() }).nullable(),
  }),
  writes: true,
  async run(ctx, a) {
    const res = await ctx.writer().start({
      slug: a.slug,
      agent: ctx.agent,
      summary: a.summary,
      ...(a.lease !== undefined ? { lease: a.lease } : {}),
      takeover: a.takeover === true,
      force: a.force === true,
      ...(a.reason !== undefined ? { reason: a.reason } : {}),
      newItem: a.new_item === true,
      cwd: ctx.cwd,
    }).catch((e: unknown) => {
      throw forMcpCaller(e, a.slug);
    });
    const rec = res.record;
    const r = rec.record;
    const took = r.takeover ? (r.takeover.agent === ctx.agent ? `; replaces your earlier execution ${r.takeover.execution_id}` : `; took over from ${r.takeover.agent}`) : '';
    return {
      ok: true as const,
      summary: `started ${a.slug} as ${ctx.agent}, execution ${r.execution_id}, lease until ${r.lease_until} (record seq ${rec.seq} ${shortId(rec.id)})${took}`,
      next_action: `work on ${a.slug}, then call checkpoint with tests_cmd after the first verified milestone (at least every 30 minutes)`,
      slug: a.slug,
      id: rec.id,
      seq: rec.seq,
      execution_id: r.execution_id,
      warnings: res.warnings,
      lease_until: r.lease_until,
      takeover: (r.takeover as { agent: string; execution_id: string } | undefined) ?? null,
    };
  },
});

/**
 * Issue 24.4: a refused start says the takeover as this tool's arguments, not as the command
 * line's flags an MCP caller cannot use (the refusal itself is the workflow's, unchanged).
 */
function forMcpCaller(e: unknown, slug: string): unknown {
  if (!(e instanceof LedgerError) || e.code !== 'INPUT_CONFLICT' || typeof e.data.owner !== 'string' || typeof e.data.lease_until !== 'string') return e;
  const owner = e.data.owner;
  const live = Date.parse(e.data.lease_until) > Date.now();
  const call = JSON.stringify({ slug, summary: '<what you will do>', takeover: true, ...(live ? { force: true, reason: `<why: e.g. ${owner}'s session ended at its usage limit>` } : {}) });
  const hint = live
    ? `wait, or ask ${owner} to release it; if ${owner}'s session is gone (resume ${slug} says so when its hook noted it), take it over, recorded: call start with ${call}`
    : `call resume with slug ${slug} first, then take it over: call start with ${call}`;
  return new LedgerError(e.code, e.message, e.data, hint);
}

/** The arguments a checkpoint and a finish share (the command line's --done ... --evidence). */
const milestone = {
  slug: slugArg,
  done: textArg('What was just done'),
  state: textArg('The state now, in plain words: what works, what does not'),
  next: textArg('Exactly one concrete next action, for whoever comes next'),
  verified: itemsArg('What was verified (shown by a test or a check)').optional(),
  attempted: itemsArg('What was attempted but not verified').optional(),
  blockers: itemsArg('Open blockers').optional(),
  tests_cmd: z.string().max(4096).optional().describe('A test command the server runs itself (sh); its exit code and output are recorded as harness-observed'),
  tests_timeout: durationArg('Stop tests_cmd after this long (default 30m; recorded as exit code 124)').optional(),
  tests: z.string().optional().describe('Test output as you saw it, when the server cannot run the command (kept whole; marked as reported)'),
  evidence: evidenceArg.optional(),
};

const milestoneObject = z.strictObject(milestone);
type MilestoneArgs = z.output<typeof milestoneObject>;

const testsShape = z
  .strictObject({
    command: z.string().nullable(),
    exit_code: z.number().nullable(),
    bytes: z.number().nullable(),
    digest: z.string(),
    excerpt: z.string().describe('The last lines of the output'),
  })
  .nullable();

function testsRequest(ctx: ToolContext, a: MilestoneArgs): TestsRequest | undefined {
  if (a.tests !== undefined && a.tests_cmd !== undefined) throw new LedgerError('USAGE', 'tests and tests_cmd both give test output; pass one (tests_cmd has the server run it)');
  if (a.tests_timeout !== undefined && a.tests_cmd === undefined) throw new LedgerError('USAGE', 'tests_timeout applies only with tests_cmd');
  // As `--tests-cmd` does: from the project's top, found from the caller's working directory
  // (the server's, the milestone's cwd; workflow.ts testsDir), as the caller.
  if (a.tests_cmd !== undefined) return { command: a.tests_cmd, ...(a.tests_timeout !== undefined ? { timeout: a.tests_timeout } : {}), env: { ...process.env, ...ctx.env }, callerEnv: ctx.env };
  return a.tests !== undefined ? { text: a.tests } : undefined;
}

function milestoneRequest(ctx: ToolContext, a: MilestoneArgs) {
  const tests = testsRequest(ctx, a);
  return {
    slug: a.slug,
    agent: ctx.agent,
    done: a.done,
    state: a.state,
    next: a.next,
    verified: a.verified ?? [],
    attempted: a.attempted ?? [],
    blockers: a.blockers ?? [],
    ...(tests ? { tests } : {}),
    evidence: a.evidence ?? {},
    cwd: ctx.cwd,
  };
}

function testsResult(t: TestsRun | undefined) {
  return t ? { command: t.command ?? null, exit_code: t.exit_code ?? null, bytes: t.bytes ?? null, digest: t.digest, excerpt: t.excerpt } : null;
}

function testsPhrase(t: ReturnType<typeof testsResult>): string {
  if (!t) return 'no test output recorded';
  return t.command !== null ? `tests: \`${oneLine(t.command, 80)}\` exited ${t.exit_code}` : 'tests: output as reported';
}

export const checkpointTool = tool({
  name: 'checkpoint',
  title: 'Record a milestone',
  description:
    'Call after each verified milestone and at least every 30 minutes on an item you own: what was done, the state in plain words, exactly one next action, what is verified and what was only attempted, open blockers, and the real test output (tests_cmd: the server runs it and records its exit code). Renews your lease. Refused from anyone but the owner.',
  input: z.strictObject({ ...milestone, lease: durationArg('The renewed lease (default 60m)').optional() }),
  output: z.strictObject({ ...ANSWER, ...recorded, lease_until: z.string(), tests: testsShape }),
  writes: true,
  async run(ctx, a) {
    const req = milestoneRequest(ctx, a);
    const res = await ctx.writer().checkpoint({ ...req, ...(a.lease !== undefined ? { lease: a.lease } : {}) });
    const rec = res.record;
    const tests = testsResult(res.tests?.tests);
    const failed = tests?.exit_code !== null && tests?.exit_code !== undefined && tests.exit_code !== 0;
    return {
      ok: true as const,
      summary: `checkpoint of ${a.slug} recorded (seq ${rec.seq} ${shortId(rec.id)}), lease until ${rec.record.lease_until}; ${testsPhrase(tests)}`,
      next_action: failed ? `the tests failed (exit ${tests!.exit_code}): fix what fails, then checkpoint again; the next step you recorded: ${quoted(oneLine(a.next, 200))}` : `the next step you recorded: ${quoted(oneLine(a.next, 300))}`,
      slug: a.slug,
      id: rec.id,
      seq: rec.seq,
      execution_id: rec.record.execution_id,
      warnings: res.warnings,
      lease_until: rec.record.lease_until,
      tests,
    };
  },
});

export const finishTool = tool({
  name: 'finish',
  title: 'Close a work item',
  description:
    'Closes a work item you own as a handoff the gate can accept, and releases it: the checkpoint fields plus the outcome (default success), invariants (what was verified, e.g. {"tests": {"ok": true}}), evidence and depends_on. An invariant named tests that says ok while the server saw tests_cmd fail is refused.',
  input: z.strictObject({
    ...milestone,
    outcome: outcomeArg.optional().describe('success (default), failure, timeout, ambiguous or cancelled'),
    invariants: z
      .record(z.string(), z.strictObject({ ok: z.boolean(), detail: z.string().max(4096).optional() }))
      .optional()
      .describe('What was verified: { name: { ok, detail } }'),
    depends_on: z
      .array(z.strictObject({ op: z.string(), outcome: outcomeArg.optional() }))
      .optional()
      .describe('Operations that must still hold before a consumer acts: [{ op, outcome (default success) }]'),
    supersedes: z.array(z.string()).optional().describe('Earlier handoff or finish record ids of this operation that this one replaces'),
    note: textArg('A note').optional(),
  }),
  output: z.strictObject({ ...ANSWER, ...recorded, outcome: outcomeArg, tests: testsShape }),
  writes: true,
  async run(ctx, a) {
    const req = milestoneRequest(ctx, a);
    const invariants: Record<string, Invariant> = {};
    for (const [name, v] of Object.entries(a.invariants ?? {})) invariants[name] = { ok: v.ok, detail: v.detail ?? '' };
    const depends_on: Dependency[] = (a.depends_on ?? []).map((d) => ({ logical_operation_id: d.op, outcome: (d.outcome ?? 'success') as Outcome }));
    const res = await ctx.writer().finish({
      ...req,
      outcome: (a.outcome ?? 'success') as Outcome,
      invariants,
      depends_on,
      ...(a.supersedes !== undefined ? { supersedes: a.supersedes } : {}),
      ...(a.note !== undefined ? { note: a.note } : {}),
    });
    const rec = res.record;
    const tests = testsResult(res.tests?.tests);
    return {
      ok: true as const,
      summary: `finished ${a.slug} with outcome ${rec.record.outcome} (seq ${rec.seq} ${shortId(rec.id)}); it is closed; ${testsPhrase(tests)}`,
      next_action: `call gate with op ${a.slug} to see whether a consumer may act on it, or status for other work`,
      slug: a.slug,
      id: rec.id,
      seq: rec.seq,
      execution_id: rec.record.execution_id,
      warnings: res.warnings,
      outcome: rec.record.outcome,
      tests,
    };
  },
});

export const releaseTool = tool({
  name: 'release',
  title: 'Hand a work item back',
  description:
    'Hands an unfinished item you own back before you stop: it stays open and unowned, and the next start by anyone takes it without takeover. Checkpoint first so the next one knows where it stands; the note says why.',
  input: z.strictObject({ slug: slugArg, note: textArg('Why, or what the next one should know').optional() }),
  output: z.strictObject({ ...ANSWER, ...recorded }),
  writes: true,
  async run(ctx, a) {
    const res = await ctx.writer().release({ slug: a.slug, agent: ctx.agent, ...(a.note !== undefined ? { note: a.note } : {}) });
    const rec = res.record;
    return {
      ok: true as const,
      summary: `released ${a.slug} (seq ${rec.seq} ${shortId(rec.id)}); it stays open and unowned`,
      next_action: 'stop here, or call status for other work',
      slug: a.slug,
      id: rec.id,
      seq: rec.seq,
      execution_id: rec.record.execution_id,
      warnings: res.warnings,
    };
  },
});

export const noteTool = tool({
  name: 'note',
  title: 'Note on a work item',
  description:
    'Adds a note to any work item (yours or another agent\'s, open or finished): a review remark, a warning for whoever comes next. Takes no ownership and renews no lease; shown in the views, status and resume.',
  input: z.strictObject({ slug: slugArg, text: textArg('The note') }),
  output: z.strictObject({ ...ANSWER, slug: z.string(), id: z.string(), seq: z.number(), warnings: z.array(z.string()) }),
  writes: true,
  async run(ctx, a) {
    const res = await ctx.writer().note({ slug: a.slug, agent: ctx.agent, text: a.text });
    const rec = res.record;
    return {
      ok: true as const,
      summary: `noted on ${a.slug} as ${ctx.agent} (seq ${rec.seq} ${shortId(rec.id)})`,
      next_action: 'carry on with your own item (call status if you have none)',
      slug: a.slug,
      id: rec.id,
      seq: rec.seq,
      warnings: res.warnings,
    };
  },
});
