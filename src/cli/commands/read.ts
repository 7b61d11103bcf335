// The reading verbs: show, log, head. Declarations only (see ../verbs.ts): read-run.ts loads
// when one of them runs.
import { KINDS } from '../../record.js';
import { verb } from '../verbs.js';
import { STRING, type Opts } from './common.js';

const impl = () => import('./read-run.js');

export const READ_VERBS = [
  verb('show <ref>', 'Print one record, by id (sha256:...) or seq', (c, io) =>
    c
      .example('ledger show 3')
      .example('ledger show sha256:4f2a...')
      .action(async (ref: string, opts: Opts) => (await impl()).runShow(io, ref, opts))),

  verb('log', 'List records, newest first', (c, io) =>
    c
      .option('--op <id>', 'Only records of this logical operation', STRING)
      .option('--kind <kind>', `Only records of this kind (${KINDS.join(', ')})`, STRING)
      .option('--limit <n>', 'At most this many (default 20)', STRING)
      .example('ledger log --op migrate_schema_17 --limit 5')
      .action(async (opts: Opts) => (await impl()).runLog(io, opts))),

  verb('head', 'Print the published HEAD', (c, io) =>
    c
      .example('ledger head')
      .example('ledger head --json | jq .seq')
      .action(async (opts: Opts) => (await impl()).runHead(io, opts))),
];
