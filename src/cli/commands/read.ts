// The reading verbs: show, log, head. Registration only: read-run.ts loads when one runs.
import type { CAC } from 'cac';
import { KINDS } from '../../record.js';
import { STRING, type CliIO, type Opts } from './common.js';

const impl = () => import('./read-run.js');

export function registerReadCommands(cli: CAC, io: CliIO): void {
  cli
    .command('show <ref>', 'Print one record, by id (sha256:...) or seq')
    .example('ledger show 3')
    .example('ledger show sha256:4f2a...')
    .action(async (ref: string, opts: Opts) => (await impl()).runShow(io, ref, opts));
  cli
    .command('log', 'List records, newest first')
    .option('--op <id>', 'Only records of this logical operation', STRING)
    .option('--kind <kind>', `Only records of this kind (${KINDS.join(', ')})`, STRING)
    .option('--limit <n>', 'At most this many (default 20)', STRING)
    .example('ledger log --op migrate_schema_17 --limit 5')
    .action(async (opts: Opts) => (await impl()).runLog(io, opts));
  cli
    .command('head', 'Print the published HEAD')
    .example('ledger head')
    .example('ledger head --json | jq .seq')
    .action(async (opts: Opts) => (await impl()).runHead(io, opts));
}
