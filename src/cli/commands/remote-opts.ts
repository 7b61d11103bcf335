// What every writing verb passes to Ledger.open for a ledger joined to a remote (SPEC 11):
// --offline, the environment that names the per-user state directory, and where a queued
// write is reported (stderr: a queued write is not published, and the output says so).
import { flag, queuedWrites, type CliIO, type Opts } from './common.js';

export function remoteOpts(io: CliIO, opts: Opts) {
  return {
    offline: flag(opts, 'offline'),
    env: io.env,
    onRemoteNotice: (text: string) => {
      queuedWrites.add(io);
      io.stderr(`ledger: ${text}\n`);
    },
  };
}

/**
 * The line `status` and `resume` print for a ledger joined to a remote. Policy: read from this
 * machine's state only (no fetch: reading verbs stay fast and work offline), so it says "as of
 * the last sync"; `ledger sync` or any write brings the copy up to date.
 */
export function remoteLine(r: { url: string; state: string; outbox: number; anchor: { seq: number } | null; hold: { kind: string; evidence: string } | null }): string {
  const at = r.anchor ? ` at seq ${r.anchor.seq}` : '';
  if (r.state === 'held') return `remote ${r.url}: HELD after a ${r.hold!.kind}; writers refuse until a person decides (evidence: ${r.hold!.evidence})`;
  if (r.state === 'ahead') return `remote ${r.url}: ahead, ${r.outbox} queued write${r.outbox === 1 ? '' : 's'} NOT published (run \`ledger sync\`)`;
  if (r.state === 'behind') return `remote ${r.url}: behind the last verified remote${at} (run \`ledger sync\`)`;
  return `remote ${r.url}: in sync${at} as of the last sync (\`ledger sync\` fetches)`;
}
