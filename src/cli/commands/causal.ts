// The causal verbs (SPEC 9, SPEC 10, issue 4): gate (with --consume-as), revoke, consume-failed,
// pending.
// Declarations only (see ../verbs.ts): the implementation (causal-run.ts) loads when one of them
// runs.
import { bool, many, one } from '../flags.js';
import { verb } from '../verbs.js';
import { TRUST, WITNESS_POLICY, WRITER } from './common.js';

const impl = () => import('./causal-run.js');

export const GATE = () => ({
  ...TRUST(),
  ...WRITER(),
  ...WITNESS_POLICY(),
  accept: many('<outcomes>', 'Outcomes to accept, comma-separated (default: success; repeatable)'),
  requireInvariant: many('<name>', 'An invariant the handoff must carry, ok (repeatable)'),
  maxAge: one('<dur>', 'Hold when the handoff is older than this (90s, 45m, 24h, 7d)'),
  floor: one('<file>', 'Trust floor: audit only above it (the records relied on are verified one by one)'),
  consumeAs: one('<consumer>', 'If the gate passes, record under the writer lock that this consumer acted on the handoff (once)'),
  handoff: one('<record-id>', 'Hold unless this is still the latest handoff of the operation (not superseded); a seq, id or id prefix'),
  allowOpaqueEvidence: bool('Count bare sha256: evidence as current (it cannot be recomputed)'),
});
export const REVOKE = () => ({ ...WRITER(), reason: one('<text>', 'Why (1-4096 chars)') });
export const CONSUME_FAILED = () => ({
  ...WRITER(),
  consumer: one('<consumer>', 'The consumer that consumed it (as given to gate --consume-as)'),
  reason: one('<text>', 'What failed (1-4096 chars)'),
});

export const CAUSAL_VERBS = [
  verb('gate <op>', 'May a consumer act on this operation now? Exit 0 to proceed, 20 to hold', {
    ok: 'proceed: every term holds (with --consume-as, the consumption is recorded)',
    hold: 'hold: the failing term is named, with its reasons',
  }, {
    plane: 'porcelain',
    flags: GATE,
    examples: [
      'ledger gate migrate_schema_17 --require-invariant tests --max-age 24h',
      'ledger gate migrate_schema_17 --floor ~/.ledger-floor.json --consume-as deploy_api_18 --json',
    ],
    run: async (io, [op], f) => (await impl()).runGate(io, op, f),
  }),

  verb('revoke <record-id>', 'Revoke a handoff (or finish), by seq, id or id prefix: a gate on it holds from then on', {
    ok: 'revoked (or already revoked with the same reason: nothing appended)',
    usage: 'bad input: no such record, a prefix of several, or not a handoff or finish; nothing was changed',
  }, {
    plane: 'porcelain',
    flags: REVOKE,
    examples: ['ledger revoke sha256:4f2a9c01 --reason "evidence was taken from the wrong branch"', 'ledger revoke 41 --reason "superseded by a manual fix"'],
    run: async (io, [target], f) => (await impl()).runRevoke(io, target, f),
  }),

  verb('pending', 'Executions with an intent or start and no terminal outcome since (what a crash leaves behind), and ambiguous or timed-out outcomes nothing resolved', { ok: 'printed (also when nothing is pending)' }, {
    plane: 'plumbing',
    flags: () => ({ op: one('<id>', 'Only this logical operation') }),
    examples: ['ledger pending --json'],
    run: async (io, _args, f) => (await impl()).runPending(io, f),
  }),

  verb('consume-failed <target>', 'Report that the action taken on a consumed handoff failed: the consumer may consume it again', {
    ok: 'recorded (or the same report was already recorded)',
    usage: 'bad input, nothing consumed by that consumer, or another agent\'s consumption',
  }, {
    plane: 'plumbing',
    flags: CONSUME_FAILED,
    examples: [
      'ledger consume-failed deploy_api --consumer deploy_api_18 --reason "helm upgrade exited 1"',
      'ledger consume-failed sha256:77ab... --consumer deploy_api_18 --reason "rolled back" --json',
    ],
    run: async (io, [target], f) => (await impl()).runConsumeFailed(io, target, f),
  }),
];
