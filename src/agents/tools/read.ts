// The reading tools: status, resume and log. They read the published records only and write
// nothing; each answers with the command line's own report (`ledger status`, `ledger resume`,
// `ledger log`) shaped for an agent: a summary, one next action, and bounded data.
import * as z from 'zod';
import { STATUS_MAX_ROWS, formatStatus, type ResumeReport, type StatusReport } from '../../index.js';
import { KINDS, type Kind, type LedgerRecord } from '../../record.js';
import { oneLine } from '../../text/lines.js';
import { quoted } from '../../index.js';
import { resumeStep, takeoverStep } from '../../index.js';
import { takenFromLine } from '../../index.js';
import type { Currency } from '../../index.js';
import { ANSWER, slugArg, tool } from './kit.js';

const leaseShape = z.looseObject({ state: z.enum(['live', 'lapsed', 'released']), until: z.string().nullable(), ms: z.number() });
const statusItem = z.looseObject({
  slug: z.string(),
  owner: z.string().nullable(),
  mine: z.boolean(),
  summary: z.string(),
  lease: leaseShape,
  last_checkpoint: z.looseObject({ seq: z.number(), ts: z.string(), agent: z.string(), next: z.string() }).nullable(),
});

/** The one next action for an agent that has just read the status (record text quoted and attributed, SPEC 12). */
function statusNext(s: StatusReport, currency?: Currency | null): string {
  const stale = currency && !currency.current ? 'this answer may be out of date (NOT CURRENT): call sync, then status again; meanwhile: ' : '';
  const told = s.taken_from_you.length ? `${takenFromLine(s.taken_from_you[0])}. ` : '';
  const mine = s.items.filter((i) => i.mine);
  const now = new Date(s.now);
  let step: string;
  if (mine.length === 1) {
    const cp = mine[0].last_checkpoint;
    step = `call resume (your open item is ${mine[0].slug}), then ${cp ? `continue; your last checkpoint's next step (seq ${cp.seq}): ${quoted(oneLine(cp.next, 200))}` : 'continue it and checkpoint after the first verified milestone'}`;
  } else if (mine.length > 1) step = `call resume with one of your items (${mine.map((i) => i.slug).join(', ')}) and finish or release the others`;
  else {
    const gone = s.items.find((i) => i.owner !== null && i.owner_gone !== null);
    const released = s.items.filter((i) => i.lease.state === 'released');
    if (gone) step = `call resume with slug ${gone.slug} to read it; ${takeoverStep(gone.slug, gone.owner!, gone.owner_gone!, now, 'mcp')}`;
    else if (released.length) step = `call start with slug ${released[0].slug} to take a released item (no takeover needed), or start a new slug`;
    else step = 'call start with a new slug and a summary before substantive work';
  }
  return `${stale}${told}${step}`;
}

function statusSummary(s: StatusReport): string {
  const mine = s.items.filter((i) => i.mine).map((i) => i.slug);
  const others = s.items.length - mine.length;
  return `${s.items.length} open work item${s.items.length === 1 ? '' : 's'} (${mine.length ? `yours: ${mine.join(', ')}` : 'none yours'}${others ? `; ${others} not yours` : ''}), ${s.pending_intents.length} pending intent${s.pending_intents.length === 1 ? '' : 's'}, ${s.unresolved_outcomes.length} unresolved outcome${s.unresolved_outcomes.length === 1 ? '' : 's'}; work log through seq ${s.through?.seq ?? 0}`;
}

export const statusTool = tool({
  name: 'status',
  title: 'What is open',
  description:
    `Read this first when a session starts. Lists the open work items with their owner, lease (live, lapsed or released), the age of the last checkpoint and the next action, your own items first; then pending intents and unresolved outcomes. Each list holds at most ${STATUS_MAX_ROWS} (your own items always), with its total beside it when there are more; \`ledger status --json\` lists every one. Writes nothing.`,
  input: z.strictObject({}),
  output: z.strictObject({
    ...ANSWER,
    agent: z.string(),
    through_seq: z.number(),
    items: z.array(statusItem),
    items_total: z.number().optional(),
    pending_intents: z.array(z.looseObject({})),
    pending_intents_total: z.number().optional(),
    unresolved_outcomes: z.array(z.looseObject({})),
    unresolved_outcomes_total: z.number().optional(),
  }),
  writes: false,
  async run(ctx, _args, currency) {
    const s = ctx.reader().status({ agent: ctx.agent, now: new Date() });
    // Policy: a tool's answer goes into an agent's context, so each list is bounded as the text
    // form of `ledger status` is (STATUS_MAX_ROWS), the agent's own items always kept; the
    // totals say what was left out. The summary counts every one.
    const mine = s.items.filter((i) => i.mine);
    const items = [...mine, ...s.items.filter((i) => !i.mine).slice(0, Math.max(0, STATUS_MAX_ROWS - mine.length))];
    const total = <K extends string>(name: K, shown: unknown[], all: unknown[]) => (shown.length < all.length ? { [name]: all.length } : {}) as Partial<Record<K, number>>;
    const pending = s.pending_intents.slice(0, STATUS_MAX_ROWS);
    const unresolved = s.unresolved_outcomes.slice(0, STATUS_MAX_ROWS);
    return {
      ok: true as const,
      summary: statusSummary(s),
      next_action: statusNext(s, currency),
      agent: ctx.agent,
      through_seq: s.through?.seq ?? 0,
      items,
      ...total('items_total', items, s.items),
      pending_intents: pending,
      ...total('pending_intents_total', pending, s.pending_intents),
      unresolved_outcomes: unresolved,
      ...total('unresolved_outcomes_total', unresolved, s.unresolved_outcomes),
    };
  },
});

/** The one next action after reading an item: resume's own step (handoff/next-step.ts), as MCP arguments. */
function resumeNext(r: ResumeReport, agent: string, currency?: Currency | null): string {
  const l = r.latest;
  const stale = currency && !currency.current ? 'this answer may be out of date (NOT CURRENT): call sync, then resume again; meanwhile: ' : '';
  return stale + resumeStep({ ...r, latest: l && l.kind !== 'start' ? { next: String(l.next), agent: String(l.agent), ts: String(l.ts), seq: Number(l.seq) } : null }, agent, new Date(), 'mcp');
}

export const resumeTool = tool({
  name: 'resume',
  title: 'Take up a work item',
  description:
    'The short, bounded read (at most 80 lines) for whoever takes a work item up: owner and lease, the latest checkpoint in full (what is verified, what was only attempted, blockers, the real test output, the next action), the trail, evidence that changed since, and git. Without a slug: your own open item when you have exactly one, else the status. Writes nothing.',
  input: z.strictObject({ slug: slugArg.optional() }),
  output: z.strictObject({
    ...ANSWER,
    mode: z.enum(['resume', 'status']),
    slug: z.string().nullable(),
    status: z.enum(['open', 'finished']).nullable(),
    owner: z.string().nullable(),
    lease: z.strictObject({ until: z.string().nullable(), live: z.boolean() }).nullable(),
    lines: z.array(z.string()).max(80).describe('The resume (or status) text, at most 80 lines'),
  }),
  writes: false,
  async run(ctx, args, currency) {
    const r = await ctx.reader().resume({ ...(args.slug !== undefined ? { slug: args.slug } : {}), agent: ctx.agent, now: new Date() }, [], { caller: 'mcp' });
    if (r.mode === 'status') {
      const s = r.report;
      const why = r.reason === 'none' ? `${ctx.agent} owns no open item` : `${ctx.agent} owns ${r.own.length} open items (${r.own.join(', ')}); pass a slug`;
      return {
        ok: true as const,
        summary: `${why}; the status instead: ${statusSummary(s)}`,
        next_action: statusNext(s, currency),
        mode: 'status' as const,
        slug: null,
        status: null,
        owner: null,
        lease: null,
        lines: [why, ...formatStatus(s)].slice(0, 80),
      };
    }
    const { slug, report } = r;
    const latest = report.latest ? `latest ${String(report.latest.kind)} seq ${String(report.latest.seq)}` : 'no checkpoint yet';
    return {
      ok: true as const,
      summary: `${slug}: ${report.status}${report.owner ? `, owned by ${report.owner}${report.owner === ctx.agent ? ' (you)' : ''}` : ', released'}${report.lease.until ? `, lease ${report.lease.live ? 'live' : 'lapsed'} (until ${report.lease.until})` : ''}; ${latest}`,
      next_action: resumeNext(report, ctx.agent, currency),
      mode: 'resume' as const,
      slug,
      status: report.status,
      owner: report.owner,
      lease: report.lease,
      lines: r.lines,
    };
  },
});

/** Policy: at most 200 records per call (a bounded answer); `ledger log --json` has the rest. */
const LOG_MAX = 200;

export const logTool = tool({
  name: 'log',
  title: 'Recent records',
  description:
    'The latest published records, newest first, as one-line summaries (seq, time, kind, agent, operation, execution, outcome, id); filter by op (a slug or logical_operation_id) and kind. Writes nothing.',
  input: z.strictObject({
    op: z.string().max(128).optional().describe('Only records of this logical_operation_id (a work item slug)'),
    kind: z.enum(KINDS).optional().describe('Only records of this kind'),
    limit: z.number().int().min(1).max(LOG_MAX).optional().describe(`How many (default 20, at most ${LOG_MAX})`),
  }),
  output: z.strictObject({
    ...ANSWER,
    records: z.array(
      z.strictObject({
        seq: z.number(),
        id: z.string(),
        ts: z.string(),
        kind: z.string(),
        agent: z.string(),
        op: z.string().nullable(),
        execution_id: z.string().nullable(),
        outcome: z.string().nullable(),
      }),
    ),
  }),
  writes: false,
  async run(ctx, args) {
    const rows = ctx.reader().log({ op: args.op, kind: args.kind as Kind | undefined, limit: args.limit ?? 20 });
    const records = rows.map((r) => {
      const rec = r.record as LedgerRecord & Record<string, unknown>;
      const str = (v: unknown) => (typeof v === 'string' ? v : null);
      return { seq: r.seq, id: r.id, ts: rec.ts, kind: rec.kind, agent: rec.agent, op: str(rec.logical_operation_id), execution_id: str(rec.execution_id), outcome: str(rec.outcome) };
    });
    const filter = [args.op ? `op ${args.op}` : '', args.kind ? `kind ${args.kind}` : ''].filter(Boolean).join(', ');
    return {
      ok: true as const,
      summary: `${records.length} record${records.length === 1 ? '' : 's'}${filter ? ` (${filter})` : ''}, newest first${records.length ? `: seq ${records[records.length - 1].seq}-${records[0].seq}` : ''}`,
      next_action: records.length ? 'call resume with a slug to read one work item in full' : 'call status to see what is open',
      records,
    };
  },
});
