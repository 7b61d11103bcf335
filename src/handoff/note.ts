// `ledger note SLUG --text TEXT`: anyone (a reviewer, a person) adds a note to a work item
// (SPEC 10, issue 14). It takes no ownership and renews no lease; the views and `resume` show
// it. On a request checked before (../requests/work.ts), decided under the writer lock like every
// write (ownership.ts decideNote: the item must exist), then the views are rewritten.
import type { Draft, NotePayload } from '../record.js';
import type { NoteRequest } from '../requests/work.js';
import { transact } from '../store/append.js';
import { decideNote } from './ownership.js';
import { at, guardViews, recoveredWarning, refreshViews, workLog, type WorkResult, type WorkWriter } from './workflow.js';

/** Appends a note to an existing work item (open or finished). */
export async function noteWork(w: WorkWriter, req: Readonly<NoteRequest>): Promise<WorkResult<'note'>> {
  const { slug, agent, text } = req;
  await guardViews(w, w.head(), req.views, req.adoptViews);
  const now = w.now();
  const res = transact(at(w, now), w.signer(), (view) => {
    decideNote(workLog(w, view.head).items.get(slug), { slug, agent });
    const payload: NotePayload = { logical_operation_id: slug, text, ...(req.event !== undefined ? { event: req.event } : {}) };
    return [{ kind: 'note', agent, ...payload } as Draft];
  });
  const warnings: string[] = [];
  recoveredWarning(res.recovered, warnings);
  const views = await refreshViews(w, req.views, warnings, req.adoptViews);
  return { record: res.records[0] as WorkResult<'note'>['record'], recovered: res.recovered, warnings, views };
}
