// How a verb opens its ledger (../../ledger.ts OpenOptions): a reader with the environment that
// names the per-user state directory; a writer with its key, lock wait and trust file, and, for a
// ledger joined to a remote (SPEC 11), --offline and where a queued write is reported (stderr: a
// queued write is not published, and the output says so).
import type { Ledger, OpenOptions } from '../../ledger.js';
import { currencyLine, type Currency } from '../../index.js';
import { keyPath, ledgerDir, queuedWrites, trustPath, waitMs, type CliIO, type Writer } from './common.js';

export function remoteOpts(io: CliIO, f: { offline?: boolean }) {
  return {
    offline: f.offline === true,
    env: io.env,
    onRemoteNotice: (text: string) => {
      queuedWrites.add(io);
      io.stderr(`ledger: ${text}\n`);
    },
  };
}

/**
 * A writer of the ledger the flags name. `trust`: whether the trust file (--trust, $LEDGER_TRUST,
 * else the project's) goes with it (SPEC 5: a writer builds on a HEAD its own key or a pinned key
 * signed); without it, a joined ledger's writer checks against the trust file named at join.
 */
export function writerOptions(io: CliIO, f: Writer, trust = true): OpenOptions {
  return {
    dir: ledgerDir(io, f),
    key: keyPath(io, f),
    waitMs: waitMs(f),
    // Without --trust of its own, the project's trust file still checks the writer's key (SPEC 7);
    // a joined ledger's is the one named at join.
    ...(trust ? { trust: trustPath(io, f) } : { fallbackTrust: trustPath(io, f) }),
    ...remoteOpts(io, f),
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

/**
 * SPEC 11 "reads are current": before a reading verb answers from a joined ledger, the local copy
 * is brought to the remote within the read budget (LEDGER_FETCH_BUDGET, default 2 s); the answer
 * then leads with how current it is (`lead`, its first text line) and carries it in --json
 * (`json`). Nothing for a ledger that is not joined. Views re-rendered after records were taken
 * are told on stderr only when that failed.
 */
export async function currentRead(io: CliIO, ledger: Ledger): Promise<{ currency: Currency | null; json: { currency?: Currency }; lead: string[] }> {
  const got = await ledger.current();
  if (!got) return { currency: null, json: {}, lead: [] };
  for (const w of got.warnings) io.stderr(`ledger: warning: ${w}\n`);
  return { currency: got.currency, json: { currency: got.currency }, lead: [currencyLine(got.currency)] };
}
