// Where a ledger's files live (SPEC 3). Anything beyond records.jsonl, HEAD and quarantine/ is
// ours, derivable from those two files, and never trusted by the auditor.
import { join, resolve } from 'node:path';

export interface LedgerPaths {
  dir: string;
  records: string;
  head: string;
  lock: string;
  quarantine: string;
}

export function ledgerPaths(dir: string): LedgerPaths {
  const d = resolve(dir);
  return {
    dir: d,
    records: join(d, 'records.jsonl'),
    head: join(d, 'HEAD'),
    lock: join(d, 'lock'),
    quarantine: join(d, 'quarantine'),
  };
}
