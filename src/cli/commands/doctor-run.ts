// `ledger doctor`'s implementation: the checks (../doctor.ts), one line per check or the report
// as JSON, and the exit code. Declared in doctor.ts.
import { dirname, resolve } from 'node:path';
import { EXIT } from '../../errors.js';
import { emit, envValue, keyPath, ledgerDir, one, trustPath, type CliIO, type Opts } from './common.js';

/** The checks, lazily loaded, then one line per check (or the report as JSON) and the exit code. */
export async function runDoctorCommand(io: CliIO, opts: Opts): Promise<number> {
  const [{ runDoctor }, { checkViews }, { remoteChecks }] = await Promise.all([import('../doctor.js'), import('../../handoff/views.js'), import('../../remote/doctor-checks.js')]);
  const dir = ledgerDir(io, opts);
  const views = one(opts, 'views');
  const report = runDoctor({
    dir,
    keyPath: keyPath(io, opts),
    trustPath: trustPath(io, opts),
    agent: one(opts, 'agent') ?? envValue(io, 'LEDGER_AGENT'),
    viewsDir: views ? resolve(io.cwd, views) : dirname(dir),
    checkViews,
    checkRemote: (ledger, seq) => remoteChecks(ledger, io.env, seq),
  });
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  const lines = report.checks.flatMap((c) => [`${mark[c.status]}  ${c.name}: ${c.detail}`, ...(c.fix && c.status !== 'ok' ? [`      fix: ${c.fix}`] : [])]);
  const fails = report.checks.filter((c) => c.status === 'fail').length;
  const warns = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(fails ? `${fails} to fix${warns ? `, ${warns} to look at` : ''}` : warns ? `healthy, ${warns} to look at` : 'healthy');
  emit(io, opts, report, lines);
  return report.ok ? EXIT.ok : EXIT.operational;
}
