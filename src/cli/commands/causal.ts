// The causal verbs (SPEC 9, SPEC 10, issue 4): gate (with --consume-as), revoke, consume-failed,
// pending.
// Declarations only (see ../verbs.ts): the implementation (causal-run.ts) loads when one of them
// runs.
import { verb } from '../verbs.js';
import { STRING, withTrust, withWriter, type Opts } from './common.js';

const impl = () => import('./causal-run.js');

export const CAUSAL_VERBS = [
  verb('gate <op>', 'May a consumer act on this operation now? Exit 0 to proceed, 20 to hold', {
    ok: 'proceed: every term holds (with --consume-as, the consumption is recorded)',
    hold: 'hold: the failing term is named, with its reasons',
  }, (c, io) =>
    withWriter(withTrust(c))
      .option('--accept <outcomes>', 'Outcomes to accept, comma-separated (default: success; repeatable)', STRING)
      .option('--require-invariant <name>', 'An invariant the handoff must carry, ok (repeatable)', STRING)
      .option('--max-age <dur>', 'Hold when the handoff is older than this (90s, 45m, 24h, 7d)', STRING)
      .option('--floor <file>', 'Trust floor: audit only above it (the records relied on are verified one by one)', STRING)
      .option('--consume-as <consumer>', 'If the gate passes, record under the writer lock that this consumer acted on the handoff (once)', STRING)
      .option('--handoff <record-id>', 'Hold unless this is still the latest handoff of the operation (not superseded); a seq, id or id prefix', STRING)
      .option('--allow-opaque-evidence', 'Count bare sha256: evidence as current (it cannot be recomputed)')
      .example('ledger gate migrate_schema_17 --require-invariant tests --max-age 24h')
      .example('ledger gate migrate_schema_17 --floor ~/.ledger-floor.json --consume-as deploy_api_18 --json')
      .action(async (op: string, opts: Opts) => (await impl()).runGateCommand(io, op, opts))),

  verb('revoke <record-id>', 'Revoke a handoff (or finish), by seq, id or id prefix: a gate on it holds from then on', {
    ok: 'revoked (or already revoked with the same reason: nothing appended)',
    usage: 'bad input: no such record, a prefix of several, or not a handoff or finish; nothing was changed',
  }, (c, io) =>
    withWriter(c)
      .option('--reason <text>', 'Why (1-4096 chars)', STRING)
      .example('ledger revoke sha256:4f2a9c01 --reason "evidence was taken from the wrong branch"')
      .example('ledger revoke 41 --reason "superseded by a manual fix"')
      .action(async (target: string, opts: Opts) => (await impl()).runRevoke(io, target, opts))),

  verb('consume-failed <target>', 'Report that the action taken on a consumed handoff failed: the consumer may consume it again', {
    ok: 'recorded (or the same report was already recorded)',
    usage: 'bad input, nothing consumed by that consumer, or another agent\'s consumption',
  }, (c, io) =>
    withWriter(c)
      .option('--consumer <consumer>', 'The consumer that consumed it (as given to gate --consume-as)', STRING)
      .option('--reason <text>', 'What failed (1-4096 chars)', STRING)
      .example('ledger consume-failed deploy_api --consumer deploy_api_18 --reason "helm upgrade exited 1"')
      .example('ledger consume-failed sha256:77ab... --consumer deploy_api_18 --reason "rolled back" --json')
      .action(async (target: string, opts: Opts) => (await impl()).runConsumeFailed(io, target, opts))),

  verb('pending', 'Executions with an intent or start and no terminal outcome since (what a crash leaves behind), and ambiguous or timed-out outcomes nothing resolved', { ok: 'printed (also when nothing is pending)' }, (c, io) =>
    c
      .option('--op <id>', 'Only this logical operation', STRING)
      .example('ledger pending --json')
      .action(async (opts: Opts) => (await impl()).runPending(io, opts))),
];
