// `ledger doctor`: read-only checks of the key, the trust file, the pins, HEAD against the
// records, unpublished bytes, whether git would commit the key or the ledger, the lock and the
// views, each with what to fix. Exit 0 when nothing fails (warnings allowed), 3 (operational)
// when something must be fixed.
// Declaration only (see ../verbs.ts): the implementation (doctor-run.ts) loads when it runs.
import { one } from '../flags.js';
import { verb } from '../verbs.js';
import { TRUST } from './common.js';

const impl = () => import('./doctor-run.js');

export const DOCTOR = () => ({
  ...TRUST(),
  key: one('<file>', 'Secret key file (default: $LEDGER_KEY, else keys/harness.key)'),
  agent: one('<name>', 'The agent that will write (default: $LEDGER_AGENT)'),
  views: one('<dir>', 'Where HANDOFF.md and HANDOFF.yml live (default: the folder that holds the ledger directory)'),
});

export const DOCTOR_VERBS = [
  verb('doctor', 'Check the key, trust file, pins, HEAD, unpublished bytes, git and views; say what to fix', {
    ok: 'nothing fails (warnings allowed)',
    operational: 'something must be fixed: each failing check names its fix',
  }, {
    plane: 'porcelain',
    flags: DOCTOR,
    examples: ['ledger doctor', 'ledger doctor --json | jq .checks'],
    run: async (io, _args, f) => (await impl()).runDoctorCommand(io, f),
  }),
];
