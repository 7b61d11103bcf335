// `ledger audit`'s implementation: flags to options, the audit library (audit/), the report to
// stdout, and the exit code: 0 pass, 10-14 by failing layer (EXIT), 2 usage or configuration, 1
// internal. Declared in audit.ts.
import { resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { auditLedger, formatReportText, readTrust } from '../../index.js';
import { parseDuration } from '../../requests/fields.js';
import type { Flags } from '../flags.js';
import type { AUDIT } from './audit.js';
import { ledgerDir, trustPath, type CliIO, type Global } from './common.js';

/** A progress line on stderr, only on a terminal and only once an audit has run a while. */
function progress(io: CliIO, started: number) {
  if (!io.isTTY) return { update: undefined, clear: () => {} };
  let last = 0;
  let shown = false;
  const update = (checked: number, total: number) => {
    const t = Date.now();
    if (t - started < 1000 || t - last < 250) return;
    last = t;
    shown = true;
    const pct = total > 0 ? ` (${Math.min(100, Math.floor((100 * checked) / total))}%)` : '';
    io.stderr(`\raudit: ${checked} of ${total} records${pct}`);
  };
  return { update, clear: () => shown && io.stderr('\r\x1b[K') };
}

export async function runAudit(io: CliIO, f: Flags<typeof AUDIT> & Global): Promise<number> {
  const dir = ledgerDir(io, f);
  const trustFile = trustPath(io, f);
  const floorPath = f.floor === undefined ? null : resolve(io.cwd, f.floor);
  if (f.advance && floorPath === null) throw new LedgerError('USAGE', '--advance needs --floor FILE: it replaces that floor after a pass');
  const maxAgeMs = f.maxAge === undefined ? null : parseDuration(f.maxAge, 'max-age');
  const skewMs = f.skew === undefined ? undefined : parseDuration(f.skew, 'skew');
  // One reference time for the whole run (SPEC 8 freshness), taken before anything is read.
  const now = Date.now();
  const trust = readTrust(trustFile);
  const line = progress(io, now);
  // Every core Node reports; a small audit (a floor near HEAD) stays on this thread. With
  // --advance, auditLedger writes the floor after a pass (the auditor itself only reads).
  const report = await auditLedger({ dir, trust, trustPath: trustFile, floorPath, advance: f.advance, maxAgeMs, skewMs, now, threads: 'auto', onProgress: line.update });
  line.clear();
  if (f.json) io.stdout(JSON.stringify(report) + '\n');
  else io.stdout(formatReportText(report, dir));
  return report.exit_code;
}
