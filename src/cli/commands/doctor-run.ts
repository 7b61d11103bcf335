// `ledger doctor`'s implementation: the checks (Ledger.doctor, ../../project/doctor.ts), one line
// per check or the report as JSON, and the exit code. Declared in doctor.ts.
import { dirname, resolve } from 'node:path';
import { EXIT } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import type { Flags } from '../flags.js';
import { agentOf, emit, keyPath, ledgerDir, trustPath, type CliIO, type Global } from './common.js';
import type { DOCTOR } from './doctor.js';

/** The checks, then one line per check (or the report as JSON) and the exit code. */
export async function runDoctorCommand(io: CliIO, f: Flags<ReturnType<typeof DOCTOR>> & Global): Promise<number> {
  const dir = ledgerDir(io, f);
  const agent = agentOf(io, f);
  const report = await Ledger.doctor({
    dir,
    keyPath: keyPath(io, f),
    trustPath: trustPath(io, f),
    ...(agent !== undefined ? { agent } : {}),
    viewsDir: f.views ? resolve(io.cwd, f.views) : dirname(dir),
    env: io.env,
  });
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  const lines = report.checks.flatMap((c) => [`${mark[c.status]}  ${c.name}: ${c.detail}`, ...(c.fix && c.status !== 'ok' ? [`      fix: ${c.fix}`] : [])]);
  const fails = report.checks.filter((c) => c.status === 'fail').length;
  const warns = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(fails ? `${fails} to fix${warns ? `, ${warns} to look at` : ''}` : warns ? `healthy, ${warns} to look at` : 'healthy');
  emit(io, f, report, lines);
  return report.ok ? EXIT.ok : EXIT.operational;
}
