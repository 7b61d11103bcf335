// How a verb opens its ledger (../../ledger.ts OpenOptions): a reader with the environment that
// names the per-user state directory; a writer with its key, lock wait and trust file, and, for a
// ledger joined to a remote (SPEC 11), --offline and where a queued write is reported (stderr: a
// queued write is not published, and the output says so).
import type { Ledger, OpenOptions } from '../../ledger.js';
import { LedgerError } from '../../errors.js';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { currencyLine, readPolicy, readTrust, witnessRefusal, type Currency, type WitnessRule } from '../../index.js';
import { parseDuration } from '../../requests/fields.js';
import { keyPath, ledgerDir, publishedWrites, queuedWrites, trustPath, waitMs, type CliIO, type Writer } from './common.js';

export function remoteOpts(io: CliIO, f: { offline?: boolean; dir?: string; trust?: string; policy?: string; witnessAge?: string }) {
  return {
    offline: f.offline === true,
    env: io.env,
    onRemoteNotice: (text: string) => {
      queuedWrites.add(io);
      io.stderr(`ledger: ${text}\n`);
    },
    // SPEC 13: after the command, its publication goes to the policy's witnesses (cli.ts).
    onPublished: () => void publishedWrites.set(io, { dir: ledgerDir(io, f as Writer), trustFile: trustPath(io, f as Writer), flags: { policy: f.policy } }),
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
export function remoteLine(r: { url: string; state: string; outbox: number; anchor: { seq: number } | null; hold: { kind: string; evidence: string } | null; witnessesAway?: { seq: number; names: string[] } | null }): string {
  // SPEC 13: a witness that did not cosign the last publication delays nothing, but is said.
  const away = r.witnessesAway ? `; witness ${r.witnessesAway.names.join(', ')} did not cosign the publication of seq ${r.witnessesAway.seq}` : '';
  return remoteState(r) + away;
}

function remoteState(r: { url: string; state: string; outbox: number; anchor: { seq: number } | null; hold: { kind: string; evidence: string } | null }): string {
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

/** Policy: a cosignature whose witness cannot be asked counts for a day by default (--witness-age). */
const DEFAULT_WITNESS_AGE_MS = 24 * 3600_000;
/** A refresh before a witness check may take as long as a write's fetch (remote/git.ts NETWORK_TIMEOUT_MS). */
export const NETWORK_BUDGET_MS = 60_000;
/** How long each witness is waited for; one that has not answered counts as absent. */
export const WITNESS_TIMEOUT_MS = 5_000;

/**
 * The consumer's witness policy (common.ts WITNESS): --policy, else `tlog-policy` beside the trust
 * file when one is there; null when there is none. A malformed one refuses (INPUT_POLICY, exit 2).
 */
export function witnessRule(io: CliIO, f: { policy?: string; witnessAge?: string }, trustFile: string): WitnessRule | null {
  const path = f.policy !== undefined ? resolve(io.cwd, f.policy) : join(dirname(trustFile), 'tlog-policy');
  if (f.policy === undefined && !existsSync(path)) {
    if (f.witnessAge !== undefined) throw new LedgerError('USAGE', '--witness-age needs a witness policy (--policy FILE, or tlog-policy beside the trust file)');
    return null;
  }
  const maxAgeMs = f.witnessAge === undefined ? DEFAULT_WITNESS_AGE_MS : parseDuration(f.witnessAge, 'witness-age');
  return { policy: readPolicy(path, f.policy ?? path), maxAgeMs, timeoutMs: WITNESS_TIMEOUT_MS };
}

/**
 * Under a witness policy, a joined ledger's local copy, just brought to the remote, must be a
 * state the policy's witnesses stand behind before a verb acts on it (gate, sync); else the
 * layer's refusal (14 rewound or unwitnessed, 11, 12). A ledger not joined is not checked here.
 */
export async function assertWitnessed(ledger: Ledger, rule: WitnessRule | null, trustFile: string): Promise<void> {
  if (rule === null || ledger.remote() === null) return;
  const v = await ledger.witnessed(rule.policy, { trust: readTrust(trustFile), nowMs: Date.now(), maxAgeMs: rule.maxAgeMs, timeoutMs: rule.timeoutMs });
  if (!v.ok) throw witnessRefusal(v, `the remote ledger (seq ${ledger.head().seq})`);
}
