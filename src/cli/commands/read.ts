// The reading verbs: show, log, head. Declarations only (see ../verbs.ts): read-run.ts loads
// when one of them runs.
import { KINDS } from '../../record.js';
import { verb } from '../verbs.js';
import { STRING, type Opts } from './common.js';

const impl = () => import('./read-run.js');

export const READ_VERBS = [
  verb('show <ref>', 'Print one record: by seq, HEAD, its id, or a unique prefix of its id (8+ hex digits)', {
    ok: 'printed',
    usage: 'bad input, no such record, or a prefix of several ids (the candidates are listed)',
  }, (c, io) =>
    c
      .example('ledger show 3')
      .example('ledger show HEAD --json')
      .example('ledger show 4f2a9c01            # or sha256:4f2a9c01, as log prints it')
      .action(async (ref: string, opts: Opts) => (await impl()).runShow(io, ref, opts))),

  verb('log', 'List records, newest first', { ok: 'printed (nothing printed when nothing matches is still 0)' }, (c, io) =>
    c
      .option('--op <id>', 'Only records of this logical operation', STRING)
      .option('--kind <kind>', `Only records of this kind (${KINDS.join(', ')})`, STRING)
      .option('--limit <n>', 'At most this many (default 20)', STRING)
      .example('ledger log --op migrate_schema_17 --limit 5')
      .action(async (opts: Opts) => (await impl()).runLog(io, opts))),

  verb('head', 'Print the published HEAD', { ok: 'printed' }, (c, io) =>
    c
      .example('ledger head')
      .example('ledger head --json | jq .seq')
      .action(async (opts: Opts) => (await impl()).runHead(io, opts))),
];
