// `ledger pending`: executions that announced an external side effect (`intent`) or took a work
// item (`start`) and have no terminal outcome since: the ambiguous completions a crash leaves
// behind (issue 4, item 6). Informational: it grants nothing, so it reads the records once,
// streaming, and verifies (hash, signature, link) only the few entries it reports.
import { readRecords } from '../store/read.js';
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

/**
 * Policy: an execution is pending when its last start/intent has no terminal record (handoff or
 * finish) after it, of its own or of a later attempt of the same operation (a re-drive that
 * finished settles the attempts it replaced, as the gate does), and no later start took it over.
 */
export function findPending(paths: LedgerPaths, head: Head, now: number, filterOp?: string): PendingEntry[] {
  const open = new Map<string, Map<string, Open>>(); // op -> exec -> last start/intent
  // Policy: the same strict reader as every other reading verb (HEAD's tail is the last line,
  // each line canonical, UTF-8 and at most 1 MiB), so pending refuses a ledger they refuse.
  for (const at of readRecords(paths, head)) {
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
  try {
    return [...open.values()].flatMap((m) => [...m.values()])
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
  } finally {
    reader.close();
  }
}
