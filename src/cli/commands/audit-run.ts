// `ledger audit`'s implementation: flags to options, the audit library (audit/), the report to
// stdout, and the exit code: 0 pass, 10-14 by failing layer (EXIT), 2 usage or configuration, 1
// internal. Declared in audit.ts.
import { reportProgress } from '../../progress.js';
import { resolve } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import { Ledger, auditLedger, formatReportText, readPolicy, readTrust, type AuditReport, type Trust } from '../../index.js';
import { keepAuditFloor } from '../../ledger.js';
import { parseDuration } from '../../requests/fields.js';
import type { Flags } from '../flags.js';
import type { AUDIT } from './audit.js';
import { ledgerDir, trustPath, type CliIO, type Global } from './common.js';

export async function runAudit(io: CliIO, f: Flags<ReturnType<typeof AUDIT>> & Global): Promise<number> {
  const dir = ledgerDir(io, f);
  const trustFile = trustPath(io, f);
  const floorPath = f.floor === undefined ? null : resolve(io.cwd, f.floor);
  if (f.advance && floorPath === null) throw new LedgerError('USAGE', '--advance needs --floor FILE: it replaces that floor after a pass');
  const maxAgeMs = f.maxAge === undefined ? null : parseDuration(f.maxAge, 'max-age');
  const skewMs = f.skew === undefined ? undefined : parseDuration(f.skew, 'skew');
  // One reference time for the whole run (SPEC 8 freshness), taken before anything is read.
  const now = Date.now();
  const trust = readTrust(trustFile);
  // Every core Node reports; a small audit (a floor near HEAD) stays on this thread. With
  // --advance, auditLedger writes the floor after a pass (the auditor itself only reads).
  // `env`: a floor file in SPEC 8's five fields gets this user's kept tree edge at it (ledger.ts).
  const full = await auditLedger({ dir, trust, trustPath: trustFile, floorPath, advance: f.advance, maxAgeMs, skewMs, now, threads: 'auto', onProgress: (n, total) => reportProgress('audit', n, total), reportFloor: floorPath === null, env: io.env });
  // A full audit that passes is this user's floor for their next gate without --floor
  // (store/user-floor.ts); the report says `advanced` only for the --floor file it replaced.
  const { next_floor: next, ...report } = full;
  // Policy: under --policy, a pass becomes the user's floor only when the witnesses stand behind
  // it too: a rewound copy must not become anyone's floor.
  if (f.policy !== undefined && report.exit_code === 0) {
    const code = await witnessed(io, f, dir, report, trust, now, maxAgeMs);
    if (code === 0 && floorPath === null && next) keepAuditFloor(dir, io.env, trust, next);
    return code;
  }
  if (floorPath === null && full.ok && next) keepAuditFloor(dir, io.env, trust, next);
  if (f.json) io.stdout(JSON.stringify(report) + '\n');
  else io.stdout(formatReportText(report, dir));
  return report.exit_code;
}

/** SPEC 13, after a pass: the policy's quorum of witnesses must stand behind HEAD's checkpoint. */
async function witnessed(io: CliIO, f: Flags<ReturnType<typeof AUDIT>> & Global, dir: string, report: AuditReport, trust: Trust, now: number, maxAgeMs: number | null): Promise<number> {
  const policy = readPolicy(resolve(io.cwd, f.policy!), f.policy);
  const v = await Ledger.open({ dir, env: io.env }).witnessed(policy, { trust, nowMs: now, maxAgeMs, timeoutMs: 5000 });
  const code = v.ok ? EXIT.ok : v.failed === 'linkage' ? EXIT.linkage : v.failed === 'signature' ? EXIT.signature : EXIT.freshness;
  if (f.json) io.stdout(JSON.stringify({ ...report, ok: v.ok, failed_layer: v.failed, exit_code: code, witnessed: v }) + '\n');
  else io.stdout(formatReportText(report, dir) + (v.ok ? `witnessed: ${v.reason}\n` : `${v.failed}: ${v.reason}\n`));
  return code;
}

