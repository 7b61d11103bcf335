// `ledger audit`'s implementation: flags to options, the audit library (audit/), the report to
// stdout, and the exit code: 0 pass, 10-14 by failing layer (EXIT), 2 usage or configuration, 1
// internal. Declared in audit.ts.
import { resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { durationFlag, flag, ledgerDir, one, trustPath, type CliIO, type Opts } from './common.js';

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

export async function runAudit(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const trustFile = trustPath(io, opts);
  const floorText = one(opts, 'floor');
  const floorPath = floorText === undefined ? null : resolve(io.cwd, floorText);
  const advance = flag(opts, 'advance');
  if (advance && floorPath === null) throw new LedgerError('USAGE', '--advance needs --floor FILE: it replaces that floor after a pass');
  const maxAgeMs = durationFlag(opts, 'maxAge', undefined) ?? null;
  const skewMs = durationFlag(opts, 'skew', undefined);
  // One reference time for the whole run (SPEC 8 freshness), taken before anything is read.
  const now = Date.now();

  const [{ readTrust }, { auditLedger }, { formatReportText }] = await Promise.all([
    import('../../keys/trust-file.js'),
    import('../../ledger.js'),
    import('../../../audit/report.js'),
  ]);
  const trust = readTrust(trustFile);
  const line = progress(io, now);
  // Every core Node reports; a small audit (a floor near HEAD) stays on this thread. With
  // --advance, auditLedger writes the floor after a pass (the auditor itself only reads).
  const report = await auditLedger({ dir, trust, trustPath: trustFile, floorPath, advance, maxAgeMs, skewMs, now, threads: 'auto', onProgress: line.update });
  line.clear();
  if (flag(opts, 'json')) io.stdout(JSON.stringify(report) + '\n');
  else io.stdout(formatReportText(report, dir));
  return report.exit_code;
}
