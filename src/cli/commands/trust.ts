// `ledger trust add | revoke | list` (SPEC 7, issue 25): machines join and leave by an admin's
// signed word in the ledger. Declarations only (see ../verbs.ts): trust-run.ts loads when it runs.
import { one } from '../flags.js';
import { verb } from '../verbs.js';
import { WRITER } from './common.js';

const impl = () => import('./trust-run.js');

export const TRUST_FLAGS = () => ({
  ...WRITER(),
  name: one('<name>', 'add: what to call the key (the machine or sandbox), 1-64 chars of [A-Za-z0-9._@-]'),
  agents: one('<a,b>', 'add: the agents this key may sign for, comma-separated (never "*")'),
  reason: one('<text>', 'add, revoke: why (1-4096 chars)'),
});

export const TRUST_VERBS = [
  verb('trust <action> [arg]', 'Authorize a machine\'s key in the ledger (add PUBLIC_KEY), retire one (revoke NAME), or list the keys this ledger trusts (list)', {
    ok: 'the key record was appended and published (list: printed)',
    usage: 'bad input (a malformed public key, an unknown name, a missing flag); nothing was changed',
    keyPin: 'the signing key is not an admin key of the trust file (only admins authorize keys); nothing was written',
  }, {
    plane: 'porcelain',
    flags: TRUST_FLAGS,
    examples: [
      'ledger trust add fUvPdbDnkTTJjGLOUqhPFKbI2XJqTq_Bf9e7m-kOO4g --name ci-runner-2 --agents codex --reason "new CI sandbox"',
      'ledger trust revoke ci-runner-2 --reason "machine retired"',
      'ledger trust list',
    ],
    run: async (io, [action, arg], f) => (await impl()).runTrust(io, action, arg, f),
  }),
];
