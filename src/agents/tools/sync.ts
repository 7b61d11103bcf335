// The sync tool, offered only for a ledger joined to a git remote on this machine (SPEC 11, 12):
// what `ledger sync` does (fetch, verify from the anchor, update the local copy, publish what the
// --offline outbox holds, each entry decided again on the remote's tail), answered for an agent.
// A refusal (the remote unreachable or refusing the ref, a fork or rollback hold, a queued write
// and no key) is an isError result with the CLI's one line; nothing was changed.
//
// Policy: no `accept_remote` argument. Re-anchoring after a fork or rollback is a person's
// decision taken after reviewing the saved evidence (`ledger sync --accept-remote`), never a
// conversation's; the refusal tells the agent to stop and ask for it.
//
// Policy: the tool has no `offline` argument either: a sync that cannot reach the remote is
// refused (exit 3's reason), and what waits keeps waiting in the outbox.
import * as z from 'zod';
import { LedgerError } from '../../errors.js';
import { holdKind } from '../../index.js';
import { ANSWER, tool } from './kit.js';

const entryKinds = z.array(z.string());

/** A fork or rollback hold, with the hint an agent acts on: a person decides, not the agent. */
function forAgent(e: unknown): unknown {
  if (!(e instanceof LedgerError)) return e;
  if (!holdKind(e) && e.data.hold !== true) return e;
  const evidence = typeof e.data.evidence === 'string' ? ` (the evidence is in ${e.data.evidence})` : '';
  return new LedgerError(e.code, e.message, e.data,
    `stop writing and tell a person${evidence}: only they may decide, with \`ledger sync --accept-remote\` or by restoring the remote's ref`);
}

export const syncTool = tool({
  name: 'sync',
  title: 'Sync with the remote ledger',
  description:
    'This ledger is shared with other machines through a git remote. Fetches the remote ledger, verifies every new record against the trust file, brings the local copy up to date, and publishes the writes queued with --offline (a queued write that another machine\'s work now conflicts with is dropped and reported, never published). Call it before resume when you arrive on this machine, and after working offline. A refusal (remote unreachable, or a fork or rollback of the remote) changes nothing.',
  input: z.strictObject({}),
  output: z.strictObject({
    ...ANSWER,
    state: z.enum(['in-sync', 'published', 'dropped']).describe('in-sync: nothing waited; published: queued writes are published now; dropped: at least one queued write was dropped'),
    adopted: z.number().int().min(0).describe('Records taken from the remote'),
    published: z.array(z.strictObject({ seqs: z.array(z.number().int()), kinds: entryKinds })),
    dropped: z.array(z.strictObject({ kinds: entryKinds, slug: z.string().nullable(), reason: z.string() })),
    waiting: z.number().int().min(0).describe('Queued writes still not published'),
    head: z.strictObject({ seq: z.number().int(), tail: z.string() }),
    commit: z.string().nullable().describe("The remote ref's commit this machine verified"),
    remote: z.strictObject({ url: z.string(), ref: z.string() }),
  }),
  writes: true,
  async run(ctx) {
    // The key only matters when writes wait (a sync with nothing queued signs nothing), so a
    // server without a usable key can still bring its copy up to date.
    const ledger = ctx.hasKey() ? ctx.writer() : ctx.reader();
    const remote = ledger.remote();
    if (!remote) throw new LedgerError('USAGE', `the ledger at ${ctx.dir} is not joined to a remote on this machine`, {}, 'a person joins it with `ledger init --remote REMOTE`');
    let r;
    try {
      r = ledger.sync();
    } catch (e) {
      throw forAgent(e);
    }
    const took = r.adopted ? `took ${r.adopted} record${r.adopted === 1 ? '' : 's'} from the remote` : 'the local copy was already up to date with the remote';
    const pub = r.published.map((p) => `published queued ${p.kinds.join(', ')} as seq ${p.seqs.join(', ')}`);
    const drop = r.dropped.map((d) => `dropped queued ${d.kinds.join(', ')}${d.slug ? ` of ${d.slug}` : ''}, not published: ${d.reason}`);
    const state = r.dropped.length ? 'dropped' : r.published.length ? 'published' : 'in-sync';
    return {
      ok: true as const,
      summary: [took, ...pub, ...drop, `HEAD seq ${r.head.seq}`].join('; '),
      next_action: r.dropped.length
        ? `call status: ${r.dropped.map((d) => d.slug ?? d.kinds.join(', ')).join(', ')} changed hands while you were offline; do not redo it without checking who owns it now`
        : 'call status (or resume) to see the work as the remote has it now',
      state,
      adopted: r.adopted,
      published: r.published,
      dropped: r.dropped,
      waiting: r.waiting,
      head: r.head,
      commit: r.commit,
      remote: { url: remote.url, ref: remote.ref },
    };
  },
});
