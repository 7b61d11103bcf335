// `ledger release SLUG`: the owner hands an unfinished work item back (SPEC 10, issue 14). The
// item stays open, unowned and without a lease, so the next `start` by anyone takes it without
// --takeover. Same steps as the workflow's (workflow.ts), on a request checked before
// (../requests/work.ts): decide under the writer lock on the current HEAD (ownership.ts
// decideWrite: only the owner), append, rewrite the views.
import type { Draft, ReleasePayload } from '../record.js';
import type { ReleaseRequest } from '../requests/work.js';
import { transact } from '../store/append.js';
import { decideWrite } from './ownership.js';
import { at, guardViews, recoveredWarning, refreshViews, workLog, type WorkResult, type WorkWriter } from './workflow.js';

export interface ReleaseResult extends WorkResult<'release'> {
  /** Set when the owner's lease had already lapsed (nobody took over). */
  lapsedAt: string | null;
}

/** Hands a work item the agent owns back, unowned; refused from anyone but the owner. */
export async function releaseWork(w: WorkWriter, req: Readonly<ReleaseRequest>): Promise<ReleaseResult> {
  const { slug, agent, note } = req;
  await guardViews(w, w.head(), req.views, req.adoptViews);
  const now = w.now();
  let lapsedAt: string | null = null;
  const res = transact(at(w, now), w.signer(), (view) => {
    const item = workLog(w, view.head).items.get(slug);
    const decision = decideWrite(item, { slug, agent, kind: 'release', now });
    lapsedAt = decision.lapsedAt;
    const payload: ReleasePayload = { logical_operation_id: slug, execution_id: decision.execution_id, ...(note !== undefined ? { note } : {}) };
    return [{ kind: 'release', agent, ...payload } as Draft];
  });
  const warnings: string[] = [];
  recoveredWarning(res.recovered, warnings);
  if (lapsedAt) warnings.push(`your lease on ${slug} had lapsed at ${lapsedAt} (nobody took over); it is released now`);
  const views = await refreshViews(w, req.views, warnings, req.adoptViews);
  return { record: res.records[0] as ReleaseResult['record'], recovered: res.recovered, warnings, views, lapsedAt };
}
