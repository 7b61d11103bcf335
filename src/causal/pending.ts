// `ledger pending`: executions that announced an external side effect (`intent`) or took a work
// item (`start`) and have no terminal outcome since: the ambiguous completions a crash leaves
// behind (issue 4, item 6); and outcomes recorded as `ambiguous` or `timeout` that no later
// success or cancel resolved (SPEC 10 `status`, issue 14 item 4: `unresolvedOutcomes`, pure, for
// `ledger status` too). Informational: it grants nothing, so it reads the records once,
// streaming, and verifies (hash, signature, link) only the few entries it reports.
import { readRecords, type RecordAt } from '../store/read.js';
import { RecordProblem, RecordReader } from './verified.js';
import type { Head, LedgerRecord } from '../record.js';
import type { LedgerPaths } from '../store/paths.js';

export interface PendingEntry {
  logical_operation_id: string;
  execution_id: string;
  /** The execution's last start or intent. */
  kind: 'start' | 'intent';
  seq: number;
  id: string;
  agent: string;
  ts: string;
  age_ms: number;
  /** The intent's action or the start's summary. */
  what: string;
  /** null when the record verified; else why not (the entry is still listed). */
  problem: string | null;
}

interface Open { kind: 'start' | 'intent'; seq: number; offset: number; op: string; exec: string }

/** An ambiguous or timed-out outcome that nothing resolved since. */
export interface UnresolvedOutcome {
  logical_operation_id: string;
  execution_id: string;
  outcome: 'ambiguous' | 'timeout';
  /** handoff, or finish (a work item closed with that outcome). */
  kind: 'handoff' | 'finish';
  seq: number;
  offset: number;
  id: string;
  agent: string;
  ts: string;
  age_ms: number;
}

const UNRESOLVED = new Set(['ambiguous', 'timeout']);
const RESOLVING = new Set(['success', 'cancelled']);

/**
 * The outcomes recorded as `ambiguous` or `timeout` that no later `success` or `cancelled` of the
 * same operation resolved, oldest first: the side effect may or may not have happened, and
 * nobody has said which. Pure: the records (oldest first, as a reader yields them) and `now`.
 * Policy: a revoked record counts for neither side: a revoked ambiguous outcome is withdrawn (not
 * listed), and a revoked success resolves nothing. A later `failure` does not resolve an earlier
 * ambiguity either: the earlier attempt's effect is still unknown.
 */
export function unresolvedOutcomes(records: Iterable<RecordAt>, now: number, filterOp?: string): UnresolvedOutcome[] {
  const t = unresolvedTracker(now, filterOp);
  for (const at of records) t.add(at);
  return t.result();
}

/**
 * unresolvedOutcomes one record at a time, for a caller that streams the records for something
 * else too: it keeps only the candidates, the resolvers' seqs and ids, and the revoked ids.
 */
export function unresolvedTracker(now: number, filterOp?: string): { add: (at: RecordAt) => void; result: () => UnresolvedOutcome[] } {
  const perOp = new Map<string, { open: UnresolvedOutcome[]; resolvers: { seq: number; id: string }[] }>();
  const revoked = new Set<string>();
  const add = (at: RecordAt): void => {
    const r = at.record as RecordAt['record'] & { logical_operation_id?: string; execution_id?: string; outcome?: string; target?: string };
    if (r.kind === 'revoke' && typeof r.target === 'string') {
      revoked.add(r.target);
      return;
    }
    if (r.kind !== 'handoff' && r.kind !== 'finish') return;
    const op = String(r.logical_operation_id);
    if (filterOp !== undefined && op !== filterOp) return;
    const outcome = String(r.outcome);
    if (!UNRESOLVED.has(outcome) && !RESOLVING.has(outcome)) return;
    let o = perOp.get(op);
    if (!o) perOp.set(op, (o = { open: [], resolvers: [] }));
    if (UNRESOLVED.has(outcome)) {
      o.open.push({
        logical_operation_id: op, execution_id: String(r.execution_id), outcome: outcome as 'ambiguous' | 'timeout', kind: r.kind,
        seq: at.seq, offset: at.offset, id: at.id, agent: r.agent, ts: r.ts, age_ms: Math.max(0, now - Date.parse(r.ts)),
      });
    } else if (o.open.length > 0) {
      // A resolver matters only for candidates before it; whether it stands is known only at the
      // end (its revocation may come later), so it is kept as seq and id.
      o.resolvers.push({ seq: at.seq, id: at.id });
    }
  };
  const result = (): UnresolvedOutcome[] => {
    const out: UnresolvedOutcome[] = [];
    for (const o of perOp.values()) {
      // Everything before the last resolver that stands is resolved.
      const resolvedThrough = o.resolvers.filter((x) => !revoked.has(x.id)).at(-1)?.seq ?? -1;
      for (const u of o.open) if (u.seq > resolvedThrough && !revoked.has(u.id)) out.push(u);
    }
    return out.sort((a, b) => a.seq - b.seq);
  };
  return { add, result };
}

/**
 * Policy: an execution is pending when its last start/intent has no terminal record (handoff or
 * finish) after it, of its own or of a later attempt of the same operation (a re-drive that
 * finished settles the attempts it replaced, as the gate does), and no later start took it over.
 */
export function findPending(paths: LedgerPaths, head: Head, now: number, filterOp?: string): PendingEntry[] {
  return scanPending(paths, head, now, filterOp).pending;
}

/** What `ledger pending` lists, from one pass over the records. */
export interface PendingReport {
  pending: PendingEntry[];
  /** Ambiguous and timed-out outcomes nothing resolved, each verified; `problem` as for pending. */
  unresolved: (UnresolvedOutcome & { problem: string | null })[];
}

export function scanPending(paths: LedgerPaths, head: Head, now: number, filterOp?: string): PendingReport {
  const open = new Map<string, Map<string, Open>>(); // op -> exec -> last start/intent
  const outcomes = unresolvedTracker(now, filterOp);
  // Policy: the same strict reader as every other reading verb (HEAD's tail is the last line,
  // each line canonical, UTF-8 and at most 1 MiB), so pending refuses a ledger they refuse.
  for (const at of readRecords(paths, head)) {
    outcomes.add(at);
    const r = at.record as LedgerRecord & { logical_operation_id?: string; execution_id?: string; takeover?: { execution_id: string } };
    const offset = at.offset;
    const op = r.logical_operation_id;
    if (typeof op !== 'string' || (filterOp !== undefined && op !== filterOp)) continue;
    if (r.kind === 'start' || r.kind === 'intent') {
      let execs = open.get(op);
      if (!execs) open.set(op, (execs = new Map()));
      if (r.kind === 'start' && r.takeover) execs.delete(r.takeover.execution_id);
      execs.set(String(r.execution_id), { kind: r.kind, seq: r.seq, offset, op, exec: String(r.execution_id) });
    } else if (r.kind === 'handoff' || r.kind === 'finish') {
      // A terminal record settles every attempt of its operation that came before it.
      open.delete(op);
    }
  }
  const reader = new RecordReader(paths, head, null);
  const problemOf = (seq: number, offset: number): string | null => {
    try {
      reader.read(seq, offset);
      return null;
    } catch (e) {
      if (!(e instanceof RecordProblem)) throw e;
      return e.message;
    }
  };
  try {
    const unresolved = outcomes.result().map((u) => ({ ...u, problem: problemOf(u.seq, u.offset) }));
    const pending = [...open.values()].flatMap((m) => [...m.values()])
      .sort((a, b) => a.seq - b.seq)
      .map((o) => {
        let problem: string | null = null;
        let id = '';
        let rec: LedgerRecord & Record<string, unknown>;
        try {
          const v = reader.read(o.seq, o.offset);
          id = v.id;
          rec = v.record as LedgerRecord & Record<string, unknown>;
        } catch (e) {
          if (!(e instanceof RecordProblem)) throw e;
          problem = e.message;
          rec = { agent: '?', ts: head.ts } as unknown as LedgerRecord & Record<string, unknown>;
        }
        return {
          logical_operation_id: o.op,
          execution_id: o.exec,
          kind: o.kind,
          seq: o.seq,
          id,
          agent: rec.agent,
          ts: rec.ts,
          age_ms: Math.max(0, now - Date.parse(rec.ts)),
          what: String(o.kind === 'intent' ? rec.action ?? '' : rec.summary ?? ''),
          problem,
        };
      });
    return { pending, unresolved };
  } finally {
    reader.close();
  }
}
