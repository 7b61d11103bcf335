// The writing verbs: init, keygen, append (one handoff or intent, or a batch from stdin),
// recover. Declarations only (see ../verbs.ts): the implementation (write-run.ts) loads when one
// of them runs.
import { verb } from '../verbs.js';
import { STRING, withTrust, withWriter, type Opts } from './common.js';

const impl = () => import('./write-run.js');

export const WRITE_VERBS = [
  verb('init', 'Create a ledger with its genesis record (and, if there is none, a key pinned in the trust file)', {
    ok: 'the ledger was created',
    usage: 'bad input, or a ledger already exists there; nothing was changed',
  }, (c, io) =>
    withTrust(withWriter(c))
      .option('--name <name>', 'A name for the ledger (kept in the genesis record)', STRING)
      .option('--remote <remote>', 'Join the ledger on this git remote (a remote name of the repository, or a URL), or publish its genesis there', STRING)
      .option('--remote-ref <ref>', 'The ref on the remote (default: refs/handoff/ledger; a host that refuses custom refs: refs/heads/handoff-ledger)', STRING)
      .example('ledger init --name my-project')
      .example('ledger init --remote origin')
      .action(async (opts: Opts) => (await impl()).runInit(io, opts))),

  verb('keygen', 'Write a new secret key file (mode 0600) and print its trust-file entry', {
    ok: 'the key file was written',
    usage: 'bad input, or the file exists (never overwritten)',
  }, (c, io) =>
    c
      .option('--out <file>', 'Where to write the secret key (never overwritten)', STRING)
      .option('--name <name>', 'The key\'s name in the trust file (default: harness)', STRING)
      .example('ledger keygen --out keys/ci.key --name ci')
      .action(async (opts: Opts) => (await impl()).runKeygen(io, opts))),

  verb('append [kind]', 'Append one handoff or intent, or a batch of JSON payloads from stdin (all or none)', {
    ok: 'appended and published (an identical retry: nothing appended, the existing record named)',
    usage: 'bad input (a flag, a payload, evidence), or refused by a rule (a retry that differs); nothing was changed',
  }, (c, io) =>
    withWriter(c)
      .option('--op <id>', 'logical_operation_id: the intent, stable across retries', STRING)
      .option('--exec <id>', 'execution_id: this one attempt', STRING)
      .option('--outcome <o>', 'success, failure, timeout, ambiguous or cancelled', STRING)
      .option('--evidence <name=source>', 'Evidence, digested now: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX (repeatable)', STRING)
      .option('--invariant <name=ok|fail[:detail]>', 'What was verified (repeatable)', STRING)
      .option('--depends-on <id[:outcome]>', 'An operation that must still hold (repeatable)', STRING)
      .option('--supersedes <record-id>', 'An earlier handoff of this operation that this one replaces: a seq, id or id prefix (repeatable)', STRING)
      .option('--note <text>', 'A note (at most 4096 chars)', STRING)
      .option('--action <text>', 'intent: the external side effect about to happen (1-1024 chars)', STRING)
      .option('--batch', 'Read JSON payloads from stdin, one per line, and append them all or none')
      .example('ledger append handoff --op migrate_schema_17 --exec execution_002 --outcome success --evidence schema=db/schema.sql --invariant tests=ok')
      .example('ledger append intent --op migrate_schema_17 --exec execution_002 --action "apply migration 17 to production"')
      .example('cat payloads.jsonl | ledger append --batch --agent ci')
      .action(async (kind: string | undefined, opts: Opts) => (await impl()).runAppend(io, kind, opts))),

  verb('recover', 'Move unpublished bytes past HEAD into quarantine/ (never touches published records)', {
    ok: 'nothing to recover, or the bytes were moved (--dry-run: would be)',
  }, (c, io) =>
    withTrust(c)
      .option('--key <file>', 'A secret key file: a HEAD it signed needs no pin (default: $LEDGER_KEY, if set)', STRING)
      .option('--dry-run', 'Only report what would be moved')
      .example('ledger recover --dry-run')
      .example('ledger recover --json')
      .option('--wait <dur>', 'How long to wait for the writer lock (default: 10s)', STRING)
      .action(async (opts: Opts) => (await impl()).runRecover(io, opts))),
];
