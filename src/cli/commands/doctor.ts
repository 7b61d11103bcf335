// `ledger doctor`: read-only checks of the key, the trust file, the pins, HEAD against the
// records, unpublished bytes, whether git would commit the key or the ledger, the lock and the
// views, each with what to fix. Exit 0 when nothing fails (warnings allowed), 3 (operational)
// when something must be fixed.
// Declaration only (see ../verbs.ts): the implementation (doctor-run.ts) loads when it runs.
import { verb } from '../verbs.js';
import { STRING, withTrust, type Opts } from './common.js';

const impl = () => import('./doctor-run.js');

export const DOCTOR_VERBS = [
  verb('doctor', 'Check the key, trust file, pins, HEAD, unpublished bytes, git and views; say what to fix', {
    ok: 'nothing fails (warnings allowed)',
    operational: 'something must be fixed: each failing check names its fix',
  }, (c, io) =>
    withTrust(c)
      .option('--key <file>', 'Secret key file (default: $LEDGER_KEY, else keys/harness.key)', STRING)
      .option('--agent <name>', 'The agent that will write (default: $LEDGER_AGENT)', STRING)
      .option('--views <dir>', 'Where HANDOFF.md and HANDOFF.yml live (default: the folder that holds the ledger directory)', STRING)
      .example('ledger doctor')
      .example('ledger doctor --json | jq .checks')
      .action(async (opts: Opts) => (await impl()).runDoctorCommand(io, opts))),
];
