// `ledger doctor`: read-only checks of the key, the trust file, the pins, HEAD against the
// records, unpublished bytes, the lock and the views, each with what to fix. Exit 0 when nothing
// fails (warnings allowed), 3 when something must be fixed.
import { verb } from '../verbs.js';
import { dirname, resolve } from 'node:path';
import { STRING, emit, envValue, keyPath, ledgerDir, one, trustPath, withTrust, type CliIO, type Opts } from './common.js';

export const DOCTOR_FAIL_EXIT = 3;

export const DOCTOR_VERBS = [
  verb('doctor', 'Check the key, trust file, pins, HEAD, unpublished bytes and views; say what to fix', (c, io) =>
    withTrust(c)
      .option('--key <file>', 'Secret key file (default: $LEDGER_KEY, else keys/harness.key)', STRING)
      .option('--agent <name>', 'The agent that will write (default: $LEDGER_AGENT)', STRING)
      .option('--views <dir>', 'Where HANDOFF.md and HANDOFF.yml live (default: the folder that holds the ledger directory)', STRING)
      .example('ledger doctor')
      .example('ledger doctor --json | jq .checks')
      .action((opts: Opts) => runDoctorCommand(io, opts))),
];

/** The checks, lazily loaded, then one line per check (or the report as JSON) and the exit code. */
async function runDoctorCommand(io: CliIO, opts: Opts): Promise<number> {
  const [{ runDoctor }, { checkViews }] = await Promise.all([import('../doctor.js'), import('../../handoff/views.js')]);
  const dir = ledgerDir(io, opts);
  const views = one(opts, 'views');
  const report = runDoctor({
    dir,
    keyPath: keyPath(io, opts),
    trustPath: trustPath(io, opts),
    agent: one(opts, 'agent') ?? envValue(io, 'LEDGER_AGENT'),
    viewsDir: views ? resolve(io.cwd, views) : dirname(dir),
    checkViews,
  });
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  const lines = report.checks.flatMap((c) => [`${mark[c.status]}  ${c.name}: ${c.detail}`, ...(c.fix && c.status !== 'ok' ? [`      fix: ${c.fix}`] : [])]);
  const fails = report.checks.filter((c) => c.status === 'fail').length;
  const warns = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(fails ? `${fails} to fix${warns ? `, ${warns} to look at` : ''}` : warns ? `healthy, ${warns} to look at` : 'healthy');
  emit(io, opts, report, lines);
  return report.ok ? 0 : DOCTOR_FAIL_EXIT;
}
