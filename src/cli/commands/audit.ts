// `ledger audit` (SPEC 8, SPEC 10). Declaration only (see ../verbs.ts): the implementation
// (audit-run.ts) and the audit library load when the verb runs.
import { bool, one } from '../flags.js';
import { verb } from '../verbs.js';
import { TRUST } from './common.js';

const impl = () => import('./audit-run.js');

export const AUDIT = () => ({
  floor: one('<file>', 'Trust floor: check only the records after it (a missing file means a full audit)'),
  advance: bool('After a pass, move the floor to the new HEAD (needs --floor)'),
  maxAge: one('<dur>', 'Fail when HEAD is older than this (90s, 45m, 24h, 7d)'),
  skew: one('<dur>', 'Allowed clock skew for timestamps in the future (default: 5m)'),
  policy: one('<file>', 'A C2SP tlog-policy: after a pass, require its quorum of witnesses to stand behind HEAD\'s checkpoint (confirmed online, else cosigned within --max-age); a rolled-back ledger fails freshness (14)'),
  ...TRUST(),
});

export const AUDIT_VERBS = [
  verb('audit', 'Verify the ledger: schema, linkage, signature, key-pin, freshness (exit 0 pass, 10-14 the failing layer)', {
    ok: 'pass',
    schema: 'fail: schema (a record or HEAD is malformed)',
    linkage: 'fail: linkage (the chain is broken, forked, or HEAD does not match)',
    signature: 'fail: signature',
    keyPin: 'fail: key-pin (a signer is not pinned for that seq)',
    freshness: 'fail: freshness (time goes back, is in the future, HEAD older than --max-age, or below the floor; with --policy: HEAD is not witnessed, or a witness has seen more)',
  }, {
    plane: 'porcelain',
    flags: AUDIT,
    examples: ['ledger audit', 'ledger audit --floor ~/.cache/ledger.floor --advance --max-age 24h --json', 'ledger audit --policy keys/witnesses.policy --max-age 24h'],
    run: async (io, _args, f) => (await impl()).runAudit(io, f),
  }),
];
