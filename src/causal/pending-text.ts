// The text form of `ledger pending` (pending.ts PendingReport): a table of the executions that
// never ended, then the ambiguous or timed-out outcomes nothing resolved. Pure.
import { formatTable } from '../text/table.js';
import { age } from './gate/format.js';
import type { PendingReport } from './pending.js';

export function formatPendingText(r: PendingReport, headSeq: number): string[] {
  const lines = r.pending.length
    ? formatTable([
      ['SEQ', 'OPERATION', 'KIND', 'AGE', 'AGENT', 'WHAT'],
      ...r.pending.map((p) => [String(p.seq), `${p.logical_operation_id}/${p.execution_id}`, p.kind, `${age(p.age_ms)} ago`, p.agent, `${p.what}${p.problem ? `  [does not verify: ${p.problem}]` : ''}`]),
    ], ['right', 'left', 'left', 'right'])
    : [`nothing pending at HEAD seq ${headSeq}`];
  if (r.unresolved.length) {
    lines.push(`unresolved outcomes (ambiguous or timeout, no later success or cancel):`);
    for (const u of r.unresolved) lines.push(`${String(u.seq).padStart(6)}  ${u.logical_operation_id}/${u.execution_id}  ${u.outcome.padEnd(9)}  ${age(u.age_ms).padStart(4)} ago  ${u.agent}${u.problem ? `  [does not verify: ${u.problem}]` : ''}`);
  }
  return lines;
}
