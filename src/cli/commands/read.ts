// The reading verbs: show, log, head. Declarations only (see ../verbs.ts): read-run.ts loads
// when one of them runs.
import { KINDS } from '../../record.js';
import { bool, one } from '../flags.js';
import { verb } from '../verbs.js';

const impl = () => import('./read-run.js');

export const READ_VERBS = [
  verb('log', 'List records, newest first', { ok: 'printed (nothing printed when nothing matches is still 0)' }, {
    plane: 'porcelain',
    flags: () => ({
      op: one('<id>', 'Only records of this logical operation'),
      kind: one('<kind>', `Only records of this kind (${KINDS.join(', ')})`),
      limit: one('<n>', 'At most this many (default 20)'),
    }),
    examples: ['ledger log --op migrate_schema_17 --limit 5'],
    run: async (io, _args, f) => (await impl()).runLog(io, f),
  }),

  verb('show <ref>', 'Print one record: by seq, HEAD, its id, or a unique prefix of its id (8+ hex digits)', {
    ok: 'printed',
    usage: 'bad input, no such record, or a prefix of several ids (the candidates are listed)',
  }, {
    plane: 'porcelain',
    flags: () => ({}),
    examples: ['ledger show 3', 'ledger show HEAD --json', 'ledger show 4f2a9c01            # or sha256:4f2a9c01, as log prints it'],
    run: async (io, [ref], f) => (await impl()).runShow(io, ref!, f),
  }),

  verb('head', 'Print the published HEAD; or the checkpoint beside it (SPEC 13), or the ledger\'s log verifier key', { ok: 'printed' }, {
    plane: 'plumbing',
    flags: () => ({
      checkpoint: bool('Print the checkpoint beside HEAD instead: a C2SP signed note with its cosignatures, verified under HEAD\'s key'),
      vkey: bool('Print the ledger\'s log verifier key (origin+key id+key) for witness.conf and tlog-policy files'),
      vkeys: bool('Print a log verifier key for every key that may sign HEAD here (HEAD\'s, then each key of the trust file), one per line: a witness.conf lists them all'),
    }),
    examples: ['ledger head', 'ledger head --json | jq .seq', 'ledger head --checkpoint', 'ledger head --vkey', 'ledger witness init --state /srv/w1 --name witness.example.com/w1 $(ledger head --vkeys | sed \'s/^/--log /\')'],
    run: async (io, _args, f) => (f.checkpoint || f.vkey || f.vkeys ? (await import('./proof-run.js')).runCheckpointShow(io, f) : (await impl()).runHead(io, f)),
  }),
];
