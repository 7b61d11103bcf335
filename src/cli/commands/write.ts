// The writing verbs: init, keygen, append (one handoff or intent, or a batch from stdin),
// recover. Declarations only (see ../verbs.ts): the implementation (write-run.ts) loads when one
// of them runs.
import { bool, many, one } from '../flags.js';
import { verb } from '../verbs.js';
import { TRUST, WITNESS_POLICY, WRITER } from './common.js';

const impl = () => import('./write-run.js');

/** The flags of `append`, handoff and intent both. */
export const APPEND_FLAGS = () => ({
  ...WRITER(),
  op: one('<id>', 'logical_operation_id: the intent, stable across retries'),
  exec: one('<id>', 'execution_id: this one attempt'),
  outcome: one('<o>', 'success, failure, timeout, ambiguous or cancelled'),
  evidence: many('<name=source>', 'Evidence, digested now: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX (repeatable)'),
  invariant: many('<name=ok|fail[:detail]>', 'What was verified (repeatable)'),
  dependsOn: many('<id[:outcome]>', 'An operation that must still hold (repeatable)'),
  supersedes: many('<record-id>', 'An earlier handoff of this operation that this one replaces: a seq, id or id prefix (repeatable)'),
  note: one('<text>', 'A note (at most 4096 chars)'),
  action: one('<text>', 'intent: the external side effect about to happen (1-1024 chars)'),
  batch: bool('Read JSON payloads from stdin, one per line, and append them all or none. A payload is one record\'s fields without the envelope: {"kind":"handoff","logical_operation_id":OP,"execution_id":EXEC,"outcome":O,"evidence":{NAME:{"digest":"sha256:...","source":S}},"invariants":{NAME:{"ok":true}},"depends_on":[]}, {"kind":"intent","logical_operation_id":OP,"execution_id":EXEC,"action":TEXT} or {"kind":"revoke","target":ID,"reason":TEXT}; "agent" optional (must be the caller). Prints a summary; --ids lists the ids'),
  ids: bool('With --batch: print each record\'s id, one per line, instead of the summary'),
});

export const WRITE_VERBS = [
  verb('init', 'Create a ledger with its genesis record (and, if there is none, a key pinned in the trust file)', {
    ok: 'the ledger was created',
    usage: 'bad input, or a ledger already exists there; nothing was changed',
  }, {
    plane: 'porcelain',
    flags: () => ({
      ...WRITER(),
      name: one('<name>', 'A name for the ledger (kept in the genesis record)'),
      remote: one('<remote>', 'Join the ledger on this git remote (a remote name of the repository, or a URL), or publish its genesis there'),
      ...WITNESS_POLICY(),
      remoteRef: one('<ref>', 'The ref on the remote (default: refs/handoff/ledger; a host that refuses custom refs: refs/heads/handoff-ledger)'),
      newLedger: bool('Make a new, separate ledger even where the trust file or a git remote already names one'),
    }),
    examples: ['ledger init --name my-project', 'ledger init --remote origin'],
    run: async (io, _args, f) => (await impl()).runInit(io, f),
  }),

  verb('append [kind]', 'Append one handoff or intent, or a batch of JSON payloads from stdin (all or none)', {
    ok: 'appended and published (an identical retry: nothing appended, the existing record named)',
    usage: 'bad input (a flag, a payload, evidence), or refused by a rule (a retry that differs); nothing was changed',
  }, {
    plane: 'plumbing',
    flags: APPEND_FLAGS,
    examples: [
      'ledger append handoff --op migrate_schema_17 --exec execution_002 --outcome success --evidence schema=db/schema.sql --invariant tests=ok',
      'ledger append intent --op migrate_schema_17 --exec execution_002 --action "apply migration 17 to production"',
      'cat payloads.jsonl | ledger append --batch --agent ci',
    ],
    run: async (io, [kind], f) => (await impl()).runAppend(io, kind, f),
  }),

  verb('recover', 'Move unpublished bytes past HEAD into quarantine/ (never touches published records)', {
    ok: 'nothing to recover, or the bytes were moved (--dry-run: would be)',
  }, {
    plane: 'plumbing',
    flags: () => ({
      ...TRUST(),
      key: one('<file>', 'A secret key file: a HEAD it signed needs no pin (default: $LEDGER_KEY, if set)'),
      dryRun: bool('Only report what would be moved'),
      wait: one('<dur>', 'How long to wait for the writer lock (default: 10s)'),
    }),
    examples: ['ledger recover --dry-run', 'ledger recover --json'],
    run: async (io, _args, f) => (await impl()).runRecover(io, f),
  }),
  verb('keygen', 'Write a new secret key file (mode 0600) and print its trust-file entry', {
    ok: 'the key file was written',
    usage: 'bad input, or the file exists (never overwritten)',
  }, {
    plane: 'plumbing',
    flags: () => ({
      out: one('<file>', 'Where to write the secret key (never overwritten)'),
      name: one('<name>', 'The key\'s name in the trust file (default: harness)'),
    }),
    examples: ['ledger keygen --out keys/ci.key --name ci'],
    run: async (io, _args, f) => (await impl()).runKeygen(io, f),
  }),
];
