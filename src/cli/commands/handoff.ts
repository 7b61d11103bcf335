// The handoff-log verbs (SPEC 6 and 10, issues 5 and 14): start, checkpoint, finish, release, note,
// status, resume, render.
// Declarations only (see ../verbs.ts): the implementation (handoff-verbs.ts, through the Ledger)
// is imported when one of these verbs runs, so other verbs do not pay for it at start-up.
import { all, bool, many, one, text } from '../flags.js';
import { verb } from '../verbs.js';
import { WRITER } from './common.js';

const impl = () => import('./handoff-verbs.js');

const VIEWS = () => ({
  views: one('<dir>', 'Where HANDOFF.md and HANDOFF.yml live (default: the folder that holds the ledger directory)'),
  adoptViews: bool('Rewrite views that another ledger (another genesis) rendered there; without it they are refused'),
});

/** The flags a checkpoint and a finish share. */
export const MILESTONE = () => ({
  ...WRITER(),
  done: text('<text>', 'What was just done'),
  state: text('<text>', 'The state now, in plain words: what works, what does not'),
  next: all('<text>', 'Exactly one concrete next action'),
  verified: many('<item>', 'Something verified (shown by a test or a check) (repeatable)'),
  attempted: many('<item>', 'Something attempted but not verified (repeatable)'),
  blocker: many('<item>', 'An open blocker (repeatable)'),
  tests: one('<text>', 'Test output, as you saw it (kept whole in the blob store)'),
  testsCmd: one('<cmd>', 'A test command for the ledger to run itself (sh, from the project root, as you, never with the key); its directory, exit code, output and git commit are recorded'),
  testsCwd: one('<dir>', 'Where --tests-cmd runs (default: the top of the git work tree you are in, else the project root)'),
  testsTimeout: one('<dur>', 'Stop --tests-cmd after this long (default: 30m; recorded as exit code 124)'),
  evidence: many('<name=source>', 'Evidence, digested now: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX (repeatable)'),
  ...VIEWS(),
});

export const START = () => ({
  ...WRITER(),
  ...VIEWS(),
  summary: text('<text>', 'What you are about to do'),
  lease: one('<dur>', 'How long you hold it without a checkpoint (default: 60m)'),
  takeover: bool('Take over an item whose owner\'s lease has lapsed (with --force --reason: a live one)'),
  force: bool('With --takeover: take over a live lease (the owner\'s session died, e.g. at its usage limit); needs --reason'),
  reason: text('<text>', 'With --takeover: why, recorded in the start and shown in the views and resume'),
  newItem: bool('Start SLUG as a new item even though an open item\'s slug is a typo away (without it: refused, "did you mean")'),
});

export const CHECKPOINT = () => ({ ...MILESTONE(), lease: one('<dur>', 'The renewed lease (default: 60m)') });

export const FINISH = () => ({
  ...MILESTONE(),
  outcome: one('<o>', 'success (default), failure, timeout, ambiguous or cancelled'),
  invariant: many('<name=ok|fail[:detail]>', 'What was verified (repeatable)'),
  dependsOn: many('<id[:outcome]>', 'An operation that must still hold (repeatable)'),
  supersedes: many('<record-id>', 'An earlier handoff of this operation that this one replaces: a seq, id or id prefix (repeatable)'),
  note: one('<text>', 'A note (at most 4096 chars)'),
});

export const RELEASE = () => ({ ...WRITER(), ...VIEWS(), note: text('<text>', 'Why, or what the next one should know (at most 4096 characters)') });
export const NOTE = () => ({ ...WRITER(), ...VIEWS(), text: text('<text>', 'The note (at most 4096 characters)') });

/** Who is asking, for the verbs that only read (status, resume). */
export const ASKER = () => ({ agent: one('<name>', 'Who is asking: their own items come first (default: $LEDGER_AGENT)') });

export const RENDER = () => ({
  ...VIEWS(),
  check: bool('Write nothing; exit 30 when a view is missing, stale or was edited by hand'),
  wait: one('<dur>', 'How long to wait for the views lock (default: 10s)'),
});

export const HANDOFF_VERBS = [
  verb('status', 'What an arriving agent reads first: open items, owners, leases, last checkpoints; pending intents and unresolved outcomes', {
    ok: 'printed',
    usage: 'bad input',
  }, {
    plane: 'porcelain',
    flags: ASKER,
    examples: ['ledger status --agent codex', 'ledger status --json'],
    run: async (io, _args, f) => (await impl()).runStatus(io, f),
  }),

  verb('start <slug>', 'Take a work item (the slug is its logical_operation_id); refused while another agent\'s lease is live', {
    ok: 'the item is yours, with a lease',
    usage: 'bad input, or refused: another agent holds a live lease; nothing was changed',
  }, {
    plane: 'porcelain',
    flags: START,
    examples: [
      'ledger start fix-tz --agent claude --summary "fix toLocal() for negative offsets"',
      'npm run handoff -- start fix-tz --agent codex --takeover --summary "finish the tz fix"',
      'ledger start fix-tz --agent codex --takeover --force --reason "claude hit its usage limit" --summary "finish the tz fix"',
    ],
    run: async (io, [slug], f) => (await impl()).runStart(io, slug, f),
  }),

  verb('checkpoint <slug>', 'Record a verified milestone of a work item you own; renews your lease', {
    ok: 'recorded; the lease is renewed',
    usage: 'bad input, or refused: not the owner, or no such item; nothing was changed',
  }, {
    plane: 'porcelain',
    flags: CHECKPOINT,
    examples: ['ledger checkpoint fix-tz --agent claude --done "fixed toLocal()" --state "tz tests pass; DST not handled" --next "handle DST in toUTC()" --tests-cmd "npm test" --verified "toLocal for -05:00"'],
    run: async (io, [slug], f) => (await impl()).runCheckpoint(io, slug, f),
  }),

  verb('finish <slug>', 'Close a work item you own, as a handoff the gate can accept; releases it', {
    ok: 'closed and released',
    usage: 'bad input, or refused: not the owner, or no such item; nothing was changed',
  }, {
    plane: 'porcelain',
    flags: FINISH,
    examples: ['ledger finish fix-tz --agent claude --done "tz fix merged" --state "all 16 tests pass" --next "none: release 1.4" --tests-cmd "npm test" --evidence src=dir:src --invariant tests=ok'],
    run: async (io, [slug], f) => (await impl()).runFinish(io, slug, f),
  }),

  verb('release <slug>', 'Hand an unfinished work item you own back: it stays open, unowned, and the next start takes it without --takeover', {
    ok: 'released',
    usage: 'bad input, no such open item, or not its owner',
  }, {
    plane: 'porcelain',
    flags: RELEASE,
    examples: ['ledger release fix-tz --agent claude --note "out of budget; the DST case is still failing"'],
    run: async (io, [slug], f) => (await impl()).runRelease(io, slug, f),
  }),

  verb('note <slug>', 'Add a note to a work item (a reviewer, a person); takes no ownership and renews no lease', {
    ok: 'noted',
    usage: 'bad input, or no such work item',
  }, {
    plane: 'porcelain',
    flags: NOTE,
    examples: ['ledger note fix-tz --agent reviewer --text "the -05:00 fix must not change UTC output"'],
    run: async (io, [slug], f) => (await impl()).runNote(io, slug, f),
  }),

  verb('resume [slug]', 'The short, bounded read (at most 80 lines) for whoever takes a work item over; without a slug, your own open item, else status', {
    ok: 'printed',
    usage: 'bad input, or no such work item',
  }, {
    plane: 'porcelain',
    flags: ASKER,
    examples: ['ledger resume fix-tz', 'LEDGER_AGENT=codex ledger resume'],
    run: async (io, [slug], f) => (await impl()).runResume(io, slug, f),
  }),

  verb('render', 'Rewrite HANDOFF.md and HANDOFF.yml from the ledger; --check only compares (exit 30 when they differ)', {
    ok: 'rewritten (--check: both views match the ledger)',
    viewsDiffer: '--check: a view is missing, stale or was edited by hand',
  }, {
    plane: 'porcelain',
    flags: RENDER,
    examples: ['ledger render --check'],
    run: async (io, _args, f) => (await impl()).runRender(io, f),
  }),
];
