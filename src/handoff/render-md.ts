// HANDOFF.md: the open items, the operations' story (each work item's outcomes, who consumed
// each and whether it was revoked: operations.ts), and the running log for people and agents,
// newest entry first. A pure function of the folded work log: no clock, no paths, no
// environment, so the same ledger gives the same bytes on any machine (which is what lets
// `render --check` catch a hand edit).
//
// Record text is text here, never markup (../text/markdown.ts): what people wrote reads as
// prose with every Markdown character escaped; a test command and an evidence source are code
// spans, test output a fenced block; only the labels, numbers, times and ids the renderer
// itself writes are Markdown. Ids and digests are shortened in the text, each entry's in full
// one click away (a <details> of ours), so 64 hex digits never dominate an entry. Each entry's
// test excerpt is folded in a <details>, so the log stays skimmable; its <summary> holds only
// words and numbers of ours.
//
// Policy: a view is a pure function of the ledger (no clock), so "lapsed" is said as of the
// newest record it shows: a lease that ended before that record is marked LAPSED; one still
// running then says until when, and `ledger status` says how it stands now.
//
// Policy (a long-lived project): HANDOFF.md shows the OPEN_LIMIT open items most recently worked
// on (in slug order), the OPERATIONS_LIMIT operations with the newest records and the LOG_LIMIT
// newest log entries, each section ending with how many it leaves out and the command that
// lists them. Measured before the bound: a ledger of 10,000 records holding 2,000 work items
// rendered a 5.9 MB HANDOFF.md (no reader, person or agent, takes that in, and GitHub does not
// render it), and every write verb spent about 200 ms rendering it again. The records themselves
// are all in the ledger: `ledger log`, `ledger log --op SLUG` and `ledger show SEQ` print them.
import type { Annotation, Entry, WorkItem, WorkLog } from './workitems.js';
import { newestOpenItems } from './workitems.js';
import { operationsNewestFirst, supersededBy, type Attempt } from './operations.js';
import { shortId } from '../text/lines.js';
import { codeSpan, fencedBlock, htmlText, proseLine, proseText } from '../text/markdown.js';
import { releaseLine, takeoverLine, takeoverText } from './annotations.js';

export const VIEW_MARKER = 'ledger-view through seq';

/** The open items HANDOFF.md shows: the most recently worked on, in slug order (see the Policy above). */
export const OPEN_LIMIT = 100;
/** The log entries HANDOFF.md shows, newest first (see the Policy above). */
export const LOG_LIMIT = 100;
/** The operations HANDOFF.md shows, the one with the newest record first (see the Policy above). */
export const OPERATIONS_LIMIT = 50;

/** The closing line of a section that leaves out `left` older ones (none when nothing is left out). */
function olderLine(left: number, what: [string, string], how: string): string[] {
  return left > 0 ? [`_${left} older ${left === 1 ? what[0] : what[1]} not shown here: ${how}._`, ''] : [];
}

/** The marker line both views carry: which record they were rendered through. */
export function throughLine(log: WorkLog): string {
  return log.through ? `${VIEW_MARKER} ${log.through.seq} ${log.through.id}` : `${VIEW_MARKER} none`;
}

/** The header line naming the ledger a view was rendered from (its genesis id): views.ts viewGenesis reads it. */
export const GENESIS_MARKER = 'ledger-view genesis';
export function genesisLine(log: WorkLog): string {
  return `${GENESIS_MARKER} ${log.genesis ?? 'none'}`;
}

function indent(lines: string[], by = '  '): string[] {
  return lines.map((l) => (l === '' ? '' : by + l));
}

/** `- **Label:** text`: record text as prose, its later lines continuing the item. */
function field(label: string, text: string): string[] {
  const [first, ...rest] = proseText(text);
  return [`- **${label}:** ${first}`, ...indent(rest)];
}

/** A list of texts, each a sub-item in prose. */
function list(label: string, items: string[], none: string): string[] {
  if (items.length === 0) return [`- **${label}:** ${none}`];
  return [`- **${label}:**`, ...items.flatMap((i) => {
    const [first, ...rest] = proseText(i);
    return [`  - ${first}`, ...indent(rest, '    ')];
  })];
}

/** A name a record carries (agent, slug, execution) in prose. */
const n = proseLine;

/** A digest or id shortened for the eye: `sha256:1234abcd…` (in full in the entry's ids block). */
const short = (id: string) => `${shortId(id)}…`;

/** The entry's ids and digests in full, folded: one click away, never in the way. */
function fullIds(rows: [string, string][]): string[] {
  return ['', '  <details><summary>ids in full</summary>', '', ...rows.map(([what, id]) => `  - ${what}: ${id}`), '', '  </details>'];
}

/** Sub-items that mix our words with record text, already made safe by the caller. */
function markupList(label: string, items: string[], none: string): string[] {
  if (items.length === 0) return [`- **${label}:** ${none}`];
  return [`- **${label}:**`, ...items.map((i) => `  - ${i}`)];
}

function testsLines(e: Entry): string[] {
  const r = e.record;
  if (r.kind === 'start') return [];
  const t = r.tests;
  if (!t) {
    return [r.verified.length ? '- **Tests:** no test output recorded — the verified items above are claims, not shown by a test run' : '- **Tests:** no test output recorded'];
  }
  const size = t.bytes !== undefined ? `${t.bytes} bytes, ` : '';
  const where = 'whole output in the ledger\'s blobs/';
  const head = t.command !== undefined
    ? `- **Tests:** ${codeSpan(t.command.replace(/\s+/g, ' '))} run by the ledger, exit code ${t.exit_code ?? 'unknown'}; ${size}${short(t.digest)} (${where})`
    : `- **Tests:** output as reported by ${n(r.agent)} (not run by the ledger); ${size}${short(t.digest)} (${where})`;
  if (t.excerpt === '') return [head, '  (no output)'];
  const lines = t.excerpt.replace(/\n+$/, '').split('\n').length;
  const exit = t.exit_code !== undefined ? `, exit code ${t.exit_code}` : '';
  // Policy: folded. The <details> block ends at its blank line, so the excerpt after it is
  // Markdown again, in a fence: record text never sits inside the HTML.
  const summary = htmlText(`${lines === 1 ? 'the one line' : `last ${lines} lines`} of the test output${exit}`);
  return [head, '', `  <details><summary>${summary}</summary>`, '', ...indent(fencedBlock(t.excerpt)), '', '  </details>'];
}

/** A release or note as a log entry (the same shape as the workflow's entries). */
function annotationEntryLines(a: Annotation): string[] {
  const out = [`### ${a.ts} · ${n(a.agent)} · ${a.kind} · ${n(a.slug)}`, '', `- **Record:** seq ${a.seq}, ${short(a.id)}${a.kind === 'release' ? `, execution ${n(a.execution_id)}` : ''}`];
  if (a.stray) out.push(a.kind === 'release' ? '- **Not from the owning execution:** written around the CLI; it changed no ownership' : '- **No such work item then:** written around the CLI');
  const text = a.kind === 'note' ? a.text : a.note;
  const label = a.kind === 'note' ? 'Note' : 'Released';
  if (text === null) out.push(`- **${label}:** handed back without a note; open, nobody owns it`);
  else out.push(...field(label, text));
  out.push(...fullIds([['record', a.id]]));
  return out;
}

function entryLines(e: Entry): string[] {
  const r = e.record;
  const out = [`### ${r.ts} · ${n(r.agent)} · ${r.kind} · ${n(r.logical_operation_id)}`, ''];
  out.push(`- **Record:** seq ${e.seq}, ${short(e.id)}, execution ${n(r.execution_id)}`);
  if (e.stray) out.push('- **Not from the owning execution:** written around the CLI; it changed no ownership');
  if (r.kind === 'start') {
    out.push(...field('Summary', r.summary));
    out.push(`- **Lease:** until ${r.lease_until}`);
    if (r.takeover) {
      const tk = r.takeover;
      out.push(tk.agent === r.agent
        ? `- **Restarted:** replaces ${n(r.agent)}'s own execution ${n(tk.execution_id)} (lease was until ${tk.lease_until}), which ended without a finish`
        : tk.forced
          ? `- **TAKEN OVER:** ${takeoverText({ ...tk, by: r.agent, at: r.ts, seq: e.seq }, 300, n)} (execution ${n(tk.execution_id)})`
          : `- **Took over:** from ${n(tk.agent)} (execution ${n(tk.execution_id)}, lease lapsed at ${tk.lease_until})${tk.reason !== undefined ? `: ${n(tk.reason.replace(/\s+/g, ' ').trim())}` : ''}`);
    }
    out.push(...fullIds([['record', e.id]]));
    return out;
  }
  if (r.kind === 'finish') out.push(`- **Outcome:** ${r.outcome}`);
  out.push(...field('Done', r.done));
  out.push(...field('State', r.state));
  out.push(...list('Verified', r.verified, 'nothing claimed as verified'));
  out.push(...list('Attempted, not verified', r.attempted, 'none'));
  out.push(...testsLines(e));
  out.push(...list('Blockers', r.blockers, 'none open'));
  const evidence = r.evidence ?? {};
  const names = Object.keys(evidence).sort();
  if (names.length) out.push(...markupList('Evidence', names.map((k) => `${n(k)}: ${codeSpan(evidence[k].source)} ${short(evidence[k].digest)}`), ''));
  if (r.kind === 'finish') {
    const inv = Object.keys(r.invariants).sort();
    out.push(...markupList('Invariants', inv.map((k) => `${n(k)}: ${r.invariants[k].ok ? 'ok' : 'FAIL'}${r.invariants[k].detail ? ` — ${n(r.invariants[k].detail)}` : ''}`), 'none'));
    out.push(...markupList('Depends on', r.depends_on.map((d) => `${n(d.logical_operation_id)} (${d.outcome})`), 'nothing'));
    if (r.supersedes?.length) out.push(...markupList('Supersedes', r.supersedes.map(short), ''));
    if (r.note !== undefined && r.note !== '') out.push(...field('Note', r.note));
  }
  out.push(...field('Next', r.next));
  if (r.kind === 'checkpoint') out.push(`- **Lease:** until ${r.lease_until}`);
  else out.push('- **Lease:** released');
  const ids: [string, string][] = [['record', e.id]];
  if (r.tests) ids.push(['test output', r.tests.digest]);
  for (const k of names) ids.push([`evidence ${proseLine(k)}`, evidence[k].digest]);
  for (const x of r.kind === 'finish' ? (r.supersedes ?? []) : []) ids.push(['supersedes', x]);
  out.push(...fullIds(ids));
  return out;
}

/** An open item: who holds it and how (the lease, LAPSED when it ended before the newest record), its summary, its next action. */
function openItemLines(i: WorkItem, asOf: string | null): string[] {
  const out = [`### ${n(i.slug)}`, ''];
  if (i.released) out.push(`- **${releaseLine(i.released, 300, n, n).replace(/^RELEASED/, 'Released')}**`);
  else {
    const lapsed = i.lease_until !== null && asOf !== null && Date.parse(i.lease_until) < Date.parse(asOf);
    out.push(`- **Owner:** ${n(i.owner ?? 'nobody')} (execution ${n(i.execution_id)}), ${lapsed ? `**LEASE LAPSED** at ${i.lease_until} (before the newest record here, ${asOf}): anyone may take it over` : `lease until ${i.lease_until}`}`);
  }
  if (i.taken_over) out.push(`- **${takeoverLine(i.taken_over, 300, n, n)}**`);
  const start = i.entries.findLast((e) => e.record.kind === 'start');
  out.push(...field(`Summary${start ? ` (${proseLine(start.record.agent)}, ${start.record.ts})` : ''}`, i.summary));
  const last = i.entries.findLast((e) => e.record.kind !== 'start');
  if (last && last.record.kind !== 'start') {
    out.push(...field(`Next (${proseLine(last.record.agent)}'s ${last.record.kind}, seq ${last.seq}, ${last.record.ts})`, last.record.next));
  } else out.push('- **Next:** no checkpoint yet; the summary says what was started');
  if (i.notes.length) out.push(`- ${i.notes.length} note${i.notes.length === 1 ? '' : 's'} in the log below`);
  return out;
}

/** A label and record text as one sub-item `depth` levels down: its later lines continue the item. */
function proseItem(depth: number, lead: string, text: string): string[] {
  const pad = '  '.repeat(depth);
  const [first, ...rest] = proseText(text);
  return [`${pad}- ${lead}${first}`, ...indent(rest, pad + '  ')];
}

/** One attempt (a finish, or a handoff of the operation), what consumed it and what revoked it. */
function attemptLines(slug: string, a: Attempt, by: Attempt | undefined): string[] {
  const what = a.kind === 'finish' ? 'finished' : 'handed off';
  const inv = Object.keys(a.invariants).sort().map((k) => `${n(k)} ${a.invariants[k].ok ? 'ok' : 'FAIL'}`);
  const deps = a.depends_on.map((d) => `${n(d.logical_operation_id)} (${d.outcome})`);
  const out = [`- **${a.outcome}**, ${what} by ${n(a.agent)} at ${a.ts}, execution ${n(a.execution_id)} (seq ${a.seq}, ${short(a.id)})${inv.length ? `; invariants: ${inv.join(', ')}` : ''}${deps.length ? `; depends on ${deps.join(', ')}` : ''}${a.supersedes.length ? `; supersedes ${a.supersedes.map(short).join(', ')}` : ''}${by ? `; superseded by the ${by.outcome} at seq ${by.seq}` : ''}`];
  if (a.stray) out.push('  - **Not from the owning execution:** written around the CLI; it changed no ownership');
  if (a.note !== null) out.push(...proseItem(1, '**Note:** ', a.note));
  for (const c of a.consumed) {
    const filed = c.logical_operation_id !== slug ? `; its record names operation ${n(c.logical_operation_id)}` : '';
    out.push(`  - **Consumed** by ${n(c.consumer)} (${n(c.agent)}'s gate) at ${c.ts}, deciding on the ledger through seq ${c.seen_head.seq} (seq ${c.seq}, ${short(c.id)})${filed}`);
    if (c.failed) out.push(...proseItem(2, `**Its action failed**, reported by ${n(c.agent)} at ${c.failed.ts} (seq ${c.failed.seq}, ${short(c.failed.id)}): `, c.failed.reason));
  }
  for (const r of a.revoked) out.push(...proseItem(1, `**REVOKED** by ${n(r.agent)} at ${r.ts} (seq ${r.seq}, ${short(r.id)}): `, r.reason));
  return out;
}

/** The latest outcome in a line: what a reader wants first (the gate decides, with the evidence as it is then). */
function latestLine(latest: Attempt): string {
  // Each consumer once: "its action failed" when every consumption of it was reported failed.
  const consumers = [...new Set(latest.consumed.map((c) => c.consumer))].map((who) =>
    `${n(who)}${latest.consumed.every((c) => c.consumer !== who || c.failed !== null) ? ' (its action failed)' : ''}`);
  const revoked = latest.revoked[0];
  return `- **Latest outcome:** **${latest.outcome}** (${latest.kind} by ${n(latest.agent)}, seq ${latest.seq}), ${consumers.length ? `consumed by ${consumers.join(', ')}` : 'not consumed'}${revoked ? `; **REVOKED** by ${n(revoked.agent)} at ${revoked.ts}, so a gate on it holds` : ''}`;
}

/**
 * The operations' story (issue 26): each work item's operation that has an outcome, the one
 * with the newest record first: its latest outcome, then every outcome recorded for it (its
 * finishes and the handoffs of it), oldest first, each with who consumed it and when, and
 * whether it was revoked, by whom, when and why (operations.ts says which records count).
 */
function operationLines(log: WorkLog): string[] {
  const ops = operationsNewestFirst(log.operations);
  const out = ['Each finished work item\'s outcomes, oldest first, with who consumed each (a gate\'s `--consume-as`) and whether it was revoked. Whether a consumer may act on one now is `ledger gate SLUG`\'s to decide, with the evidence as it is then; `ledger log --op SLUG` lists every record of it.', ''];
  if (ops.length === 0) return [...out, 'No work item has an outcome yet.'];
  for (const op of ops.slice(0, OPERATIONS_LIMIT)) {
    const superseded = supersededBy(op);
    out.push(`### ${n(op.slug)}`, '', latestLine(op.attempts[op.attempts.length - 1]), `- **Outcomes, oldest first:**`);
    for (const a of op.attempts) out.push(...indent(attemptLines(op.slug, a, superseded.get(a.id))));
    // The ids in full of what the log below does not show (a finish's are in its entry's block).
    const ids: [string, string][] = [];
    for (const a of op.attempts) {
      if (a.kind === 'handoff') ids.push([`handoff seq ${a.seq}`, a.id]);
      for (const c of a.consumed) {
        ids.push([`consume seq ${c.seq}`, c.id]);
        if (c.failed) ids.push([`consume\\_failed seq ${c.failed.seq}`, c.failed.id]);
      }
      for (const r of a.revoked) ids.push([`revoke seq ${r.seq}`, r.id]);
    }
    out.push(...(ids.length ? fullIds(ids) : []), '');
  }
  out.push(...olderLine(ops.length - OPERATIONS_LIMIT, ['operation is', 'operations are'], '`ledger log --op SLUG` lists the records of one'));
  return out.slice(0, -1);
}

export function renderMarkdown(log: WorkLog): string {
  const asOf = log.newest_ts;
  const out = [
    '# HANDOFF',
    '',
    `<!-- ${throughLine(log)} -->`,
    `<!-- ${genesisLine(log)} -->`,
    `<!-- Written by \`ledger\` from the signed ledger${log.genesis ? ` (genesis ${log.genesis})` : ''}. Do not edit: \`ledger render --check\` reports any change, and a verb that rewrites this file keeps an edited copy beside it. Write through \`ledger start | checkpoint | finish | release | note\`. -->`,
    '',
    `Written from the signed ledger${log.through ? ` through seq ${log.through.seq}` : ''}${asOf ? `, its newest record at ${asOf}` : ''}. What agents and people wrote is quoted as they wrote it, under who wrote it and when. Ids are shortened; each entry has them in full, and \`ledger show SEQ\` prints the record. \`ledger status\` says how the leases stand now.`,
    '',
    '## Open work items',
    '',
  ];
  const open = newestOpenItems(log, OPEN_LIMIT);
  if (open.total === 0) out.push('None.', '');
  for (const i of open.items) out.push(...openItemLines(i, asOf), '');
  out.push(...olderLine(open.total - open.items.length, ['open item is', 'open items are'], '`ledger status --json` lists every open item'));
  out.push('## Operations', '', ...operationLines(log), '');
  out.push('## Log, newest first', '');
  if (log.entries.length === 0 && log.annotations.length === 0) out.push('No entries yet.', '');
  // The workflow's entries and the releases and notes, merged newest first by seq, the newest
  // LOG_LIMIT of them.
  let shown = 0;
  for (let i = log.entries.length - 1, j = log.annotations.length - 1; (i >= 0 || j >= 0) && shown < LOG_LIMIT; shown++) {
    if (j < 0 || (i >= 0 && log.entries[i].seq > log.annotations[j].seq)) out.push(...entryLines(log.entries[i--]), '');
    else out.push(...annotationEntryLines(log.annotations[j--]), '');
  }
  out.push(...olderLine(log.entries.length + log.annotations.length - shown, ['entry is', 'entries are'], '`ledger log` lists every record, and `ledger show SEQ` prints one'));
  return out.join('\n').replace(/\n+$/, '\n');
}
