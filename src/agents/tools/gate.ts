// The gate tool: may a consumer act on an operation now (SPEC 9)? The same evaluation as
// `ledger gate OP` (the chain audited under the trust file the server was started with, every
// term in order), without consuming. A hold is an answer, not an error: the result says which
// term failed and why, and `proceed` is false.
//
// Policy: the tool never writes a consume record: consuming is what a deploy step or harness does
// (`ledger gate OP --consume-as NAME`), not something an agent's conversation should decide.
import * as z from 'zod';
import { checkGate } from '../../requests/causal.js';
import { ANSWER, durationArg, outcomeArg, tool } from './kit.js';

const TERMS = ['handoff_valid', 'outcome_accepted', 'invariants_satisfied', 'state_current', 'dependencies_true'] as const;

export const gateTool = tool({
  name: 'gate',
  title: 'May the next step act?',
  description:
    'Checks whether a consumer may act on operation op (a finished work item\'s slug) now: the chain audits clean, its latest outcome is accepted (default success), every invariant holds (and each required one is present), every evidence digest still matches the files now, and every dependency holds. Answers proceed true or false with the failing term and its reason. Writes nothing.',
  input: z.strictObject({
    op: z.string().describe('The logical_operation_id (a work item slug)'),
    accept: z.array(outcomeArg).min(1).optional().describe('Outcomes accepted (default ["success"])'),
    require_invariant: z.array(z.string()).optional().describe('Invariants that must be present and ok'),
    max_age: durationArg('The handoff may be at most this old').optional(),
  }),
  output: z.strictObject({
    ...ANSWER,
    proceed: z.boolean(),
    failed_term: z.enum(TERMS).nullable(),
    terms: z.strictObject(Object.fromEntries(TERMS.map((t) => [t, z.boolean()])) as Record<(typeof TERMS)[number], z.ZodBoolean>),
    reason: z.string(),
    handoff: z.looseObject({ id: z.string(), seq: z.number(), outcome: z.string() }).nullable(),
  }),
  writes: false,
  async run(ctx, a) {
    // The request `ledger gate OP` builds from its flags, from the arguments, with the server's
    // trust file; checked before the ledger is read.
    const req = checkGate({ op: a.op, ...(a.accept !== undefined ? { accept: a.accept } : {}), requireInvariants: a.require_invariant ?? [], ...(a.max_age !== undefined ? { maxAge: a.max_age } : {}), trustPath: ctx.trustPath, now: Date.now() });
    const op = req.op;
    const r = ctx.reader().gate(req);
    // An operation the ledger has never seen: the nearest it holds, as the CLI says it (issue 26.4).
    const guess = !r.ok && r.handoff === null ? await ctx.reader().nameSuggestion(op, 'ops') : null;
    return {
      ok: true as const,
      summary: `${r.ok ? 'proceed' : 'hold'}: ${op}: ${r.reason}`,
      next_action: r.ok
        ? `a consumer may act on ${op} now (its handoff is seq ${r.handoff?.seq})`
        : guess
          ? `${op} has no records in this ledger; ${guess} call gate with that op`
          : r.failed_term === 'outcome_accepted' && r.handoff === null
          ? `${op} has no accepted outcome yet: finish it (or wait for its owner to)`
          : `do not act on ${op}: fix what ${r.failed_term} names, then call gate again`,
      proceed: r.ok,
      failed_term: r.failed_term,
      terms: r.terms,
      reason: r.reason,
      handoff: r.handoff,
    };
  },
});
