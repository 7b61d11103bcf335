// What every writing verb passes to Ledger.open for a ledger joined to a remote (SPEC 11):
// --offline, the environment that names the per-user state directory, and where a queued
// write is reported (stderr: a queued write is not published, and the output says so).
import { flag, type CliIO, type Opts } from './common.js';

export function remoteOpts(io: CliIO, opts: Opts) {
  return {
    offline: flag(opts, 'offline'),
    env: io.env,
    onRemoteNotice: (text: string) => io.stderr(`ledger: ${text}\n`),
  };
}
