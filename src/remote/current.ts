// "Reads are current" (SPEC 11): in a ledger joined to a remote, every answer about the present
// (status, resume, log, show, gate, the hooks, the MCP tools) first fetches and verifies what is
// new, within a time budget, and says how current it is: the remote state it reflects and when
// that was learned. Past the budget, or when the remote does not answer, it answers from the
// local copy and says so, labelled with that copy's age: never a hang, never a refusal.
//
// The refresh is a sync's first step (link.ts refresh, under the writer lock: fetch, verify from
// the anchor, the local copy takes what is new byte for byte, the anchor moves; a fork or
// rollback sets the hold), with each network call's timeout the budget that is left, and the
// lock waited for within the same budget. Nothing is published here: the outbox waits for `sync`.
import { LedgerError } from '../errors.js';
import { realFileOps } from '../fs/ops.js';
import { span } from '../handoff/lease.js';
import { readHead } from '../store/head.js';
import { acquireLock } from '../store/lock.js';
import { ledgerPaths } from '../store/paths.js';
import type { StoreOptions } from '../store/append.js';
import { readAnchor } from './anchor.js';
import { readFetched } from './fetched.js';
import { readHold } from './hold.js';
import type { RemoteLink } from './link.js';
import { readOutbox } from './outbox.js';

/** Policy (SPEC 11 "a bounded time"): a read waits at most this long for the remote by default. */
export const DEFAULT_READ_BUDGET_MS = 2_000;

/** How current an answer is (the `currency` of --json, of an MCP result, of a hook's context). */
export interface Currency {
  /** The remote and its ref. */
  remote: string;
  ref: string;
  /** true: the remote was fetched and verified for this answer (or published to) just now. */
  current: boolean;
  /** The local copy's HEAD seq: what the answer reflects. */
  seq: number | null;
  /** The remote's commit as this machine last verified it. */
  commit: string | null;
  /** When this machine last learned the remote's state (null: never), and how long ago. */
  fetched_at: string | null;
  age_ms: number | null;
  /** Records the local copy took from the remote for this answer. */
  adopted: number;
  /** Writes queued by --offline, not published. */
  queued: number;
  /** Why the answer is not current (null when it is). */
  reason: string | null;
}

/**
 * The budget of a read: LEDGER_FETCH_BUDGET (a duration: 500ms, 2s; 0 turns fetching off), else
 * DEFAULT_READ_BUDGET_MS. Policy: a value that does not parse is the default, not a refusal: a
 * hook must never break a session over it.
 */
export function readBudgetMs(env: Record<string, string | undefined>): number {
  const v = env.LEDGER_FETCH_BUDGET;
  if (v === undefined || v === '') return DEFAULT_READ_BUDGET_MS;
  if (v === '0') return 0;
  const m = /^(\d{1,7})(ms|s|m)$/.exec(v);
  if (!m) return DEFAULT_READ_BUDGET_MS;
  return Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : 60_000);
}

/** Brings the local copy up to the remote within `budgetMs`, and says how current it is. Never throws. */
export function refreshForRead(link: RemoteLink, store: StoreOptions, budgetMs: number, now: () => Date): Currency {
  const ops = store.ops ?? realFileOps;
  const paths = ledgerPaths(store.dir, store.guard?.stateDir, store.cache);
  let adopted = 0;
  let reason: string | null = null;
  try {
    const hold = readHold(link.rp);
    if (hold) reason = `HELD after a ${hold.kind} of the remote; writers refuse until a person decides (evidence: ${hold.evidence})`;
    else if (budgetMs <= 0) reason = 'fetching is off (LEDGER_FETCH_BUDGET=0)';
    else {
      const deadline = Date.now() + budgetMs;
      let lock;
      try {
        lock = acquireLock(ops, paths.lock, budgetMs);
      } catch (e) {
        reason = e instanceof LedgerError && e.code === 'OP_LOCK_TIMEOUT' ? `another write held the ledger for the whole ${span(budgetMs)} budget` : `the local copy cannot be updated here (${oneLine(e)})`;
      }
      if (lock) {
        try {
          adopted = link.refresh(ops, paths, null, true, deadline).adopted;
        } catch (e) {
          reason = e instanceof LedgerError && e.code === 'OP_REMOTE_UNREACHABLE'
            ? (Date.now() >= deadline ? `the remote did not answer within ${span(budgetMs)}` : 'the remote cannot be reached')
            : oneLine(e);
        } finally {
          lock.release();
        }
      }
    }
  } catch (e) {
    reason = oneLine(e);
  }
  return describe(link, store, reason, adopted, now());
}

function oneLine(e: unknown): string {
  return ((e as Error)?.message ?? String(e)).split('\n')[0].slice(0, 300);
}

/** What this machine knows about the remote now, without the network. */
export function describe(link: RemoteLink, store: StoreOptions, reason: string | null, adopted: number, now: Date): Currency {
  const ops = store.ops ?? realFileOps;
  const paths = ledgerPaths(store.dir, store.guard?.stateDir, store.cache);
  const safe = <T>(f: () => T, fallback: T): T => {
    try {
      return f();
    } catch {
      return fallback;
    }
  };
  const head = safe(() => readHead(ops, paths), null);
  const anchor = safe(() => readAnchor(link.rp), null);
  const fetched = readFetched(link.rp);
  const queued = safe(() => readOutbox(link.rp).length, 0);
  const at = fetched?.at ?? null;
  return {
    remote: link.join.url,
    ref: link.join.ref,
    current: reason === null,
    seq: head ? head.seq : null,
    commit: anchor?.commit ?? fetched?.commit ?? null,
    fetched_at: at,
    age_ms: at === null ? null : Math.max(0, now.getTime() - Date.parse(at)),
    adopted,
    queued,
    reason,
  };
}

/** The one line every text answer leads with in a joined ledger. */
export function currencyLine(c: Currency): string {
  const queued = c.queued ? `; ${c.queued} queued write${c.queued === 1 ? '' : 's'} NOT published (run \`ledger sync\`)` : '';
  const commit = c.commit ? `, commit ${c.commit.slice(0, 12)}` : '';
  if (c.current) {
    const took = c.adopted ? `; took ${c.adopted} new record${c.adopted === 1 ? '' : 's'} from it` : '';
    return `remote ${c.remote}: current (fetched ${c.age_ms !== null && c.age_ms >= 1000 ? `${span(c.age_ms)} ago` : 'just now'}; the ledger is at seq ${c.seq ?? '?'}${commit}${took})${queued}`;
  }
  const last = c.fetched_at ? `last fetched ${span(c.age_ms ?? 0)} ago (${c.fetched_at})` : 'never fetched on this machine';
  return `remote ${c.remote}: NOT CURRENT: ${c.reason}; this answer is this machine's copy through seq ${c.seq ?? '?'}, ${last}: owners, leases and finished items may have changed since${queued}`;
}
