// The handoff-log verbs (SPEC 6 and 10, issues 5 and 14): start, checkpoint, finish, release, note,
// status, resume, render.
// Declarations only (see ../verbs.ts): the implementation (handoff-verbs.ts and src/handoff/) is
// imported when one of these verbs runs, so other verbs do not pay for it at start-up.
import { verb, type Command } from '../verbs.js';
import { STRING, withWriter, type CliIO, type Opts } from './common.js';

const withViews = (c: Command): Command =>
  c
    .option('--views <dir>', 'Where HANDOFF.md and HANDOFF.yml live (default: the folder that holds the ledger directory)', STRING)
    .option('--adopt-views', 'Rewrite views that another ledger (another genesis) rendered there; without it they are refused');

/** The flags a checkpoint and a finish share. */
const withCheckpoint = (c: Command): Command =>
  c
    .option('--done <text>', 'What was just done', STRING)
    .option('--state <text>', 'The state now, in plain words: what works, what does not', STRING)
    .option('--next <text>', 'Exactly one concrete next action', STRING)
    .option('--verified <item>', 'Something verified (shown by a test or a check) (repeatable)', STRING)
    .option('--attempted <item>', 'Something attempted but not verified (repeatable)', STRING)
    .option('--blocker <item>', 'An open blocker (repeatable)', STRING)
    .option('--tests <text>', 'Test output, as you saw it (kept whole in the blob store)', STRING)
    .option('--tests-cmd <cmd>', 'A test command for the ledger to run itself (sh, in your working directory, as you, never with the key); its exit code, output and git commit are recorded', STRING)
    .option('--tests-timeout <dur>', 'Stop --tests-cmd after this long (default: 30m; recorded as exit code 124)', STRING)
    .option('--evidence <name=source>', 'Evidence, digested now: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX (repeatable)', STRING);

type HandoffVerb = 'start' | 'checkpoint' | 'finish' | 'release' | 'note' | 'status' | 'resume' | 'render';

/** Who is asking, for the verbs that only read (status, resume without a slug). */
const withAsker = (c: Command): Command =>
  c.option('--agent <name>', 'Who is asking: their own items come first (default: $LEDGER_AGENT)', STRING);

const run = async (name: HandoffVerb, io: CliIO, slug: string | undefined, opts: Opts) => {
  if (name === 'release' || name === 'note' || name === 'status' || (name === 'resume' && slug === undefined)) {
    const verbs = await import('./handoff-ownership-run.js');
    return verbs.runOwnershipVerb(name, io, slug, opts);
  }
  const verbs = await import('./handoff-verbs.js');
  return verbs.runHandoffVerb(name, io, slug, opts);
};

export const HANDOFF_VERBS = [
  verb('start <slug>', 'Take a work item (the slug is its logical_operation_id); refused while another agent\'s lease is live', {
    ok: 'the item is yours, with a lease',
    usage: 'bad input, or refused: another agent holds a live lease; nothing was changed',
  }, (c, io) =>
    withViews(withWriter(c))
      .option('--summary <text>', 'What you are about to do', STRING)
      .option('--lease <dur>', 'How long you hold it without a checkpoint (default: 60m)', STRING)
      .option('--takeover', 'Take over an item whose owner\'s lease has lapsed (with --force --reason: a live one)')
      .option('--force', 'With --takeover: take over a live lease (the owner\'s session died, e.g. at its usage limit); needs --reason')
      .option('--reason <text>', 'With --takeover: why, recorded in the start and shown in the views and resume', STRING)
      .example('ledger start fix-tz --agent claude --summary "fix toLocal() for negative offsets"')
      .example('npm run handoff -- start fix-tz --agent codex --takeover --summary "finish the tz fix"')
      .example('ledger start fix-tz --agent codex --takeover --force --reason "claude hit its usage limit" --summary "finish the tz fix"')
      .action((slug: string, opts: Opts) => run('start', io, slug, opts))),

  verb('checkpoint <slug>', 'Record a verified milestone of a work item you own; renews your lease', {
    ok: 'recorded; the lease is renewed',
    usage: 'bad input, or refused: not the owner, or no such item; nothing was changed',
  }, (c, io) =>
    withViews(withCheckpoint(withWriter(c)))
      .option('--lease <dur>', 'The renewed lease (default: 60m)', STRING)
      .example('ledger checkpoint fix-tz --agent claude --done "fixed toLocal()" --state "tz tests pass; DST not handled" --next "handle DST in toUTC()" --tests-cmd "npm test" --verified "toLocal for -05:00"')
      .action((slug: string, opts: Opts) => run('checkpoint', io, slug, opts))),

  verb('finish <slug>', 'Close a work item you own, as a handoff the gate can accept; releases it', {
    ok: 'closed and released',
    usage: 'bad input, or refused: not the owner, or no such item; nothing was changed',
  }, (c, io) =>
    withViews(withCheckpoint(withWriter(c)))
      .option('--outcome <o>', 'success (default), failure, timeout, ambiguous or cancelled', STRING)
      .option('--invariant <name=ok|fail[:detail]>', 'What was verified (repeatable)', STRING)
      .option('--depends-on <id[:outcome]>', 'An operation that must still hold (repeatable)', STRING)
      .option('--supersedes <record-id>', 'An earlier handoff of this operation that this one replaces: a seq, id or id prefix (repeatable)', STRING)
      .option('--note <text>', 'A note (at most 4096 chars)', STRING)
      .example('ledger finish fix-tz --agent claude --done "tz fix merged" --state "all 16 tests pass" --next "none: release 1.4" --tests-cmd "npm test" --evidence src=dir:src --invariant tests=ok')
      .action((slug: string, opts: Opts) => run('finish', io, slug, opts))),

  verb('release <slug>', 'Hand an unfinished work item you own back: it stays open, unowned, and the next start takes it without --takeover', {
    ok: 'released',
    usage: 'bad input, no such open item, or not its owner',
  }, (c, io) =>
    withViews(withWriter(c))
      .option('--note <text>', 'Why, or what the next one should know (at most 4096 characters)', STRING)
      .example('ledger release fix-tz --agent claude --note "out of budget; the DST case is still failing"')
      .action((slug: string, opts: Opts) => run('release', io, slug, opts))),

  verb('note <slug>', 'Add a note to a work item (a reviewer, a person); takes no ownership and renews no lease', {
    ok: 'noted',
    usage: 'bad input, or no such work item',
  }, (c, io) =>
    withViews(withWriter(c))
      .option('--text <text>', 'The note (at most 4096 characters)', STRING)
      .example('ledger note fix-tz --agent reviewer --text "the -05:00 fix must not change UTC output"')
      .action((slug: string, opts: Opts) => run('note', io, slug, opts))),

  verb('status', 'What an arriving agent reads first: open items, owners, leases, last checkpoints; pending intents and unresolved outcomes', {
    ok: 'printed',
    usage: 'bad input',
  }, (c, io) =>
    withAsker(c)
      .example('ledger status --agent codex')
      .example('ledger status --json')
      .action((opts: Opts) => run('status', io, undefined, opts))),

  verb('resume [slug]', 'The short, bounded read (at most 80 lines) for whoever takes a work item over; without a slug, your own open item, else status', {
    ok: 'printed',
    usage: 'bad input, or no such work item',
  }, (c, io) =>
    withAsker(c)
      .example('ledger resume fix-tz')
      .example('LEDGER_AGENT=codex ledger resume')
      .action((slug: string | undefined, opts: Opts) => run('resume', io, slug, opts))),

  verb('render', 'Rewrite HANDOFF.md and HANDOFF.yml from the ledger; --check only compares (exit 30 when they differ)', {
    ok: 'rewritten (--check: both views match the ledger)',
    viewsDiffer: '--check: a view is missing, stale or was edited by hand',
  }, (c, io) =>
    withViews(c)
      .option('--check', 'Write nothing; exit 30 when a view is missing, stale or was edited by hand')
      .option('--wait <dur>', 'How long to wait for the views lock (default: 10s)', STRING)
      .example('ledger render --check')
      .action((opts: Opts) => run('render', io, undefined, opts))),
];
