// HANDOFF.yml: the bounded snapshot the next session reads. `latest` in full, `trail` (the five
// entries before it, one line each, so a thin latest checkpoint cannot hide how the work got
// there), and the open items with owner and lease end. Pure, like HANDOFF.md; `yaml` with
// folding off, so no line is wrapped differently by a library default.
//
// Policy: `latest` holds the record's strings exactly (a tool parsing the file gets the values
// the ledger signed, U+2028, U+0085 and NUL included); `trail` and the `active` summaries are
// one-line text made for reading, neutralised like terminal output. No unsafe code point
// (../text/sanitize.ts) is ever written raw: a string that holds one is written double-quoted,
// with each such code point as a YAML escape (`\u202E`, `\U000E0041`), which parses back to it.
import { yamlLib } from './yaml-lib.js';
import type { Entry, WorkLog } from './workitems.js';
import { newestOpenItems } from './workitems.js';
import { genesisLine, throughLine } from './render-md.js';
import { oneLine } from '../text/lines.js';
import { hasUnsafe, replaceUnsafe } from '../text/sanitize.js';
import { annotationData } from './annotations.js';
import { operationsNewestFirst, type Attempt } from './operations.js';

export const TRAIL_LENGTH = 5;
/**
 * Policy: HANDOFF.yml is the *bounded* snapshot the next session reads (the handoff-log essay),
 * so `active` lists at most this many open items: the ones whose last start or checkpoint is
 * newest, in slug order, with `active_total` when there are more. HANDOFF.md shows more of them
 * (render-md.ts OPEN_LIMIT), and `ledger status --json` lists every open item. (Bounded, the
 * render also costs the same on a ledger with hundreds of open items as on one with twenty:
 * issue 14's `start` and `checkpoint` <= 1.5x `node -e ''`.)
 */
export const ACTIVE_LIMIT = 20;

/** One entry in one line: time, agent, kind, slug, then what it says and what comes next. */
export function trailLine(e: Entry): string {
  const r = e.record;
  const head = `${r.ts} ${r.agent} ${r.kind} ${r.logical_operation_id}`;
  if (r.kind === 'start') return `${head}: ${oneLine(r.summary, 120)}${r.takeover && r.takeover.agent !== r.agent ? ` (took over from ${r.takeover.agent})` : ''}`;
  const tests = r.tests?.exit_code !== undefined ? ` [tests exit ${r.tests.exit_code}]` : '';
  const outcome = r.kind === 'finish' ? ` (${r.outcome})` : '';
  return `${head}${outcome}: ${oneLine(r.done, 90)}${tests} -> next: ${oneLine(r.next, 70)}`;
}

/** An entry in full, as plain data: the record's strings exactly as signed. */
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
    base.summary = r.summary;
    base.lease_until = r.lease_until;
    if (r.takeover) base.takeover = { ...r.takeover };
    return base;
  }
  if (r.kind === 'finish') base.outcome = r.outcome;
  Object.assign(base, {
    done: r.done,
    state: r.state,
    verified: [...r.verified],
    attempted: [...r.attempted],
    blockers: [...r.blockers],
    next: r.next,
  });
  if (r.tests) base.tests = { ...r.tests };
  if (r.evidence && Object.keys(r.evidence).length) base.evidence = sortedObject(r.evidence);
  if (r.kind === 'checkpoint') base.lease_until = r.lease_until;
  else {
    base.invariants = sortedObject(r.invariants);
    base.depends_on = r.depends_on;
    if (r.supersedes) base.supersedes = r.supersedes;
    if (r.note !== undefined) base.note = r.note;
  }
  return base;
}

function sortedObject<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

/** HANDOFF.yml's text: the document as the yaml library writes it whole. */
export function renderYaml(log: WorkLog): string {
  const { head, active } = yamlData(log);
  return yamlHeader(log) + safeYaml({ ...head, active, ...operationsData(log) });
}

/**
 * The operations' story in one line each, bounded as the rest of the file is (Policy: the facts
 * HANDOFF.md tells first, for a tool or agent that reads only this file: a revoked outcome is a
 * fact a consumer must not miss; one line each, like `trail`, because each node costs the yaml
 * library, and `checkpoint` renders this file every time: as maps, the story cost `checkpoint` 8%
 * more instructions on the field bench). At most ACTIVE_LIMIT operations, the one with the newest
 * record first (`operations_total` when there are more); HANDOFF.md tells more of them in full
 * (render-md.ts OPERATIONS_LIMIT).
 */
function operationsData(log: WorkLog): Record<string, unknown> {
  const ops = operationsNewestFirst(log.operations);
  if (ops.length === 0) return {};
  return {
    operations: ops.slice(0, ACTIVE_LIMIT).map((op) => operationLine(op.slug, op.attempts[op.attempts.length - 1], op.attempts.length)),
    ...(ops.length > ACTIVE_LIMIT ? { operations_total: ops.length } : {}),
  };
}

/** "fix-tz: success (finish by claude, seq 7; 2 outcomes), consumed by prod at T; REVOKED by alice at T: reason". */
function operationLine(slug: string, a: Attempt, outcomes: number): string {
  const consumed = a.consumed.map((c) => `${c.consumer} at ${c.ts}${c.failed ? ' (its action failed)' : ''}`);
  const r = a.revoked[0];
  return `${slug}: ${a.outcome} (${a.kind} by ${a.agent}, seq ${a.seq}${outcomes > 1 ? `; ${outcomes} outcomes` : ''})${consumed.length ? `, consumed by ${consumed.join(', ')}` : ', not consumed'}${r ? `; REVOKED by ${r.agent} at ${r.ts}: ${oneLine(r.reason, 120)}` : ''}`;
}

/** The document's data: every key before `active`, and the `active` items. */
function yamlData(log: WorkLog): { head: Record<string, unknown>; active: Record<string, unknown>[] } {
  const n = log.entries.length;
  const latest = n ? log.entries[n - 1] : null;
  const trail = log.entries.slice(Math.max(0, n - 1 - TRAIL_LENGTH), Math.max(0, n - 1)).reverse();
  const active = newestOpenItems(log, ACTIVE_LIMIT);
  const head = {
    ledger: { genesis: log.genesis, through_seq: log.through?.seq ?? null, through_id: log.through?.id ?? null },
    latest: latest ? entryData(latest) : null,
    trail: trail.map(trailLine),
    ...(active.total > active.items.length ? { active_total: active.total } : {}),
  };
  return {
    head,
    active: active.items.map((i) => ({
      slug: i.slug,
      owner: i.owner,
      execution_id: i.execution_id,
      lease_until: i.lease_until,
      summary: oneLine(i.summary, 200),
      ...annotationData(i), // taken_over, released, notes: only when there are any
    })),
  };
}

function yamlHeader(log: WorkLog): string {
  const header = [
    `# ${throughLine(log)}`,
    `# ${genesisLine(log)}`,
    '# Written by `ledger` from the signed ledger. Do not edit: `ledger render --check` reports any change,',
    '# and a verb that rewrites this file keeps an edited copy beside it. latest: the newest entry in full,',
    '# its strings exactly as signed; trail: the five before it, newest first; active: open work items with',
    '# their owner and lease end (compare it with the time now), and when there are any, how the item was',
    `# taken over, its release (owner null) and its last notes; at most ${ACTIVE_LIMIT}, the most recently worked on`,
    '# (active_total: how many are open; `ledger status` lists every one). operations: each finished work',
    `# item's latest outcome in a line (newest first, at most ${ACTIVE_LIMIT}): who consumed it, whether it was revoked.`,
  ];
  return header.join('\n') + '\n';
}

/** A YAML escape for one code point, valid inside a double-quoted scalar. */
function yamlEscape(cp: number): string {
  return cp <= 0xffff ? '\\u' + cp.toString(16).toUpperCase().padStart(4, '0') : '\\U' + cp.toString(16).toUpperCase().padStart(8, '0');
}

/**
 * `value` as YAML text with no unsafe code point written raw: every string scalar (key or value)
 * that holds one is made double-quoted, the only style with escapes, and the one place such a
 * code point can then appear raw, inside those quotes, is replaced by its escape.
 */
export function safeYaml(value: unknown): string {
  const { Document, visit, isScalar } = yamlLib(); // loaded on first use (yaml-lib.ts)
  const doc = new Document(value);
  // The common case, no such string anywhere, skips the walk over every node.
  if (anyUnsafe(value)) {
    visit(doc, {
      Scalar(_key, node) {
        if (isScalar(node) && typeof node.value === 'string' && hasUnsafe(node.value)) node.type = 'QUOTE_DOUBLE';
      },
    });
  }
  // Policy: a double-quoted string is written on one line, with \n escapes. The library writes
  // one of 40 characters or more (its doubleQuotedMinMultiLineLength) over several lines, and
  // there yaml 2.9.1 turns a line that holds only a space into "\\ " (an escaped backslash): the
  // text no longer parses back to the record's (found by `npm run soak`, seed 372386935 of
  // test/hostile/output-views.test.ts). The library double-quotes only what no other style holds
  // as it is (trailing spaces, a line of spaces), and what holds an unsafe code point (above).
  return replaceUnsafe(doc.toString({ lineWidth: 0, doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER }), true, yamlEscape);
}

/** Whether any string in `value` (keys included) holds an unsafe code point. */
function anyUnsafe(value: unknown): boolean {
  if (typeof value === 'string') return hasUnsafe(value);
  if (Array.isArray(value)) return value.some(anyUnsafe);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([k, v]) => hasUnsafe(k) || anyUnsafe(v));
  return false;
}
