// `ledger sync` (SPEC 11): declaration only (see ../verbs.ts); remote-run.ts does the work.
import { bool } from '../flags.js';
import { verb } from '../verbs.js';
import { WITNESS_POLICY, WRITER } from './common.js';

const impl = () => import('./remote-run.js');

export const SYNC = () => ({ ...WRITER(), ...WITNESS_POLICY(), acceptRemote: bool('After a fork or rollback a person reviewed: anchor on the remote as it is (verified from genesis)') });

export const REMOTE_VERBS = [
  verb('sync', 'Fetch the remote ledger, verify what is new, update the local copy, publish queued writes', {
    ok: 'in sync (queued writes published, or dropped and reported when a rule now refuses them)',
    operational: 'the remote cannot be reached or refused the ref; nothing was changed',
    linkage: 'a fork: the remote does not hold the record this machine verified; the local copy is kept, evidence saved',
    freshness: 'a rollback: the remote is below what this machine verified; the local copy is kept, evidence saved',
  }, {
    plane: 'porcelain',
    flags: SYNC,
    examples: ['ledger sync', 'ledger sync --accept-remote'],
    run: async (io, _args, f) => (await impl()).runSync(io, f),
  }),
];
