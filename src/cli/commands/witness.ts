// `ledger witness init|serve` (SPEC 13, issue 27): a C2SP tlog-witness for ledgers' checkpoints.
// Declaration only (see ../verbs.ts): the implementation (witness-run.ts) loads when it runs.
//
// Policy: plumbing. A witness is infrastructure an operator starts once and other machines'
// writers call over HTTP; what it prints (its verifier key, the URL it listens on) is read by
// scripts and pasted into policy files, so its output stays stable, as `keygen`'s and `mcp`'s.
import { many, one } from '../flags.js';
import { verb } from '../verbs.js';

const impl = () => import('./witness-run.js');

export const WITNESS = () => ({
  state: one('<dir>', 'The witness\'s folder: its key, witness.conf and each log\'s latest cosigned checkpoint (default: $LEDGER_WITNESS_DIR)'),
  name: one('<name>', 'init: the witness\'s name, the key name of its cosignatures (e.g. witness.example.com/w1)'),
  log: many('<vkey>', 'A log to witness, as its verifier key (origin+id+key; `ledger head --vkey` prints a ledger\'s); init writes it to witness.conf, serve adds it (repeatable)'),
  addr: one('<host:port>', 'serve: where to listen (port 0: any free port, printed)'),
  policy: one('<file>', 'cosign: the tlog-policy whose witnesses (with URLs) to ask'),
  timeout: one('<dur>', 'cosign: how long to wait for each witness (default 5s); one that does not answer counts as absent'),
});

export const WITNESS_VERBS = [
  verb('witness <action>', 'Run a C2SP transparency-log witness: `init` makes its key and witness.conf, `serve` answers add-checkpoint over HTTP; `cosign` asks a policy\'s witnesses to cosign this ledger\'s checkpoint', {
    ok: 'init: written; serve: stopped by SIGINT or SIGTERM; cosign: every witness was asked (each one\'s outcome is printed, absent ones too)',
    usage: 'bad input (an action, a flag, a verifier key, witness.conf), or init over an existing witness; nothing was changed',
    operational: 'the key file is insecure, the folder is locked by another witness, the address cannot be bound, or a state file is corrupt',
  }, {
    plane: 'plumbing',
    flags: WITNESS,
    examples: [
      'ledger witness init --state /srv/witness --name witness.example.com/w1 --log handoff-ledger/1f2e...+4a5b6c7d+AV3...',
      'ledger witness serve --state /srv/witness --addr 127.0.0.1:7380',
      'ledger witness cosign --policy keys/witnesses.policy',
    ],
    run: async (io, [action], f) => (await impl()).runWitness(io, action ?? '', f),
  }),
];
