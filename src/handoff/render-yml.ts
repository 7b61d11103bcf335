// HANDOFF.yml: the bounded snapshot the next session reads. `latest` in full, `trail` (the five
// entries before it, one line each, so a thin latest checkpoint cannot hide how the work got
// there), and the open items with owner and lease end. Pure, like HANDOFF.md; `yaml` with
// folding off, so no line is wrapped differently by a library default.
import { stringify } from 'yaml';
import type { Entry, WorkLog } from './workitems.js';
import { openItems } from './workitems.js';
import { throughLine } from './render-md.js';
import { oneLine } from './text.js';
import { plainText } from './excerpt.js';
import { annotationData } from './annotations.js';

export const TRAIL_LENGTH = 5;

/** One entry in one line: time, agent, kind, slug, then what it says and what comes next. */
export function trailLine(e: Entry): string {
  const r = e.record;
  const head = `${r.ts} ${r.agent} ${r.kind} ${r.logical_operation_id}`;
  if (r.kind === 'start') {
    const t = r.takeover && r.takeover.agent !== r.agent ? r.takeover : null;
    const taken = t === null ? '' : t.forced ? ` (TAKEN OVER from ${t.agent}: ${oneLine(t.reason ?? '', 80)})` : ` (took over from ${t.agent})`;
    return `${head}: ${oneLine(r.summary, 120)}${taken}`;
  }
  const tests = r.tests?.exit_code !== undefined ? ` [tests exit ${r.tests.exit_code}]` : '';
  const outcome = r.kind === 'finish' ? ` (${r.outcome})` : '';
  return `${head}${outcome}: ${oneLine(r.done, 90)}${tests} -> next: ${oneLine(r.next, 70)}`;
}

/** An entry in full, as plain data (text fields cleaned of terminal escapes). */
export function entryData(e: Entry): Record<string, unknown> {
  const r = e.record;
  const base: Record<string, unknown> = {
    seq: e.seq,
    id: e.id,
    ts: r.ts,
    agent: r.agent,
    kind: r.kind,
    slug: r.logical_operation_id,
    execution_id: r.execution_id,
  };
  if (e.stray) base.not_from_owning_execution = true;
  if (r.kind === 'start') {
    base.summary = plainText(r.summary);
    base.lease_until = r.lease_until;
    if (r.takeover) base.takeover = { ...r.takeover };
    return base;
  }
  if (r.kind === 'finish') base.outcome = r.outcome;
  Object.assign(base, {
    done: plainText(r.done),
    state: plainText(r.state),
    verified: r.verified.map(plainText),
    attempted: r.attempted.map(plainText),
    blockers: r.blockers.map(plainText),
    next: plainText(r.next),
  });
  if (r.tests) base.tests = { ...r.tests, excerpt: plainText(r.tests.excerpt), ...(r.tests.command !== undefined ? { command: plainText(r.tests.command) } : {}) };
  if (r.evidence && Object.keys(r.evidence).length) base.evidence = sortedObject(r.evidence);
  if (r.kind === 'checkpoint') base.lease_until = r.lease_until;
  else {
    base.invariants = sortedObject(r.invariants);
    base.depends_on = r.depends_on;
    if (r.supersedes) base.supersedes = r.supersedes;
    if (r.note !== undefined) base.note = plainText(r.note);
  }
  return base;
}

function sortedObject<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

export function renderYaml(log: WorkLog): string {
  const n = log.entries.length;
  const latest = n ? log.entries[n - 1] : null;
  const trail = log.entries.slice(Math.max(0, n - 1 - TRAIL_LENGTH), Math.max(0, n - 1)).reverse();
  const doc = {
    ledger: { genesis: log.genesis, through_seq: log.through?.seq ?? null, through_id: log.through?.id ?? null },
    latest: latest ? entryData(latest) : null,
    trail: trail.map(trailLine),
    active: openItems(log).map((i) => ({
      slug: i.slug,
      owner: i.owner,
      execution_id: i.execution_id,
      lease_until: i.lease_until,
      summary: oneLine(i.summary, 200),
      ...annotationData(i), // taken_over, released, notes: only when there are any
    })),
  };
  const header = [
    `# ${throughLine(log)}`,
    '# Written by `ledger` from the signed ledger. Do not edit: `ledger render --check` reports any change',
    '# and `ledger render` rewrites this file. latest: the newest entry in full; trail: the five before it,',
    '# newest first; active: open work items with their owner and lease end (compare it with the time now),',
    '# and when there are any, how the item was taken over, its release (owner null) and its last notes.',
  ];
  return header.join('\n') + '\n' + stringify(doc, { lineWidth: 0 });
}
