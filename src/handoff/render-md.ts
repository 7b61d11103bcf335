// HANDOFF.md: the running log for people and agents, newest entry first. A pure function of the
// folded work log: no clock, no paths, no environment, so the same ledger gives the same bytes
// on any machine (which is what lets `render --check` catch a hand edit).
//
// Record text is text here, never markup (../text/markdown.ts): every string a record carries
// is in a code span or a fenced block, neutralised; only the labels, numbers, times and ids the
// renderer itself writes are Markdown. Each entry's test excerpt is folded in a <details>, so
// the log stays skimmable; its <summary> holds only words and numbers of ours.
import type { Annotation, Entry, WorkLog } from './workitems.js';
import { openItems } from './workitems.js';
import { shortId } from '../text/lines.js';
import { codeSpan, fencedBlock, htmlText, isMultiLine } from '../text/markdown.js';
import { releaseLine, takeoverLine, takeoverText } from './annotations.js';

export const VIEW_MARKER = 'ledger-view through seq';

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

/** `- **Label:** value`: one line of text in a code span, more in a fenced block in the item. */
function field(label: string, text: string): string[] {
  if (!isMultiLine(text)) return [`- **${label}:** ${codeSpan(text)}`];
  return [`- **${label}:**`, ...indent(fencedBlock(text))];
}

/** A list of texts, each a sub-item: a code span, or a fenced block opening on the item's line. */
function list(label: string, items: string[], none: string): string[] {
  if (items.length === 0) return [`- **${label}:** ${none}`];
  return [`- **${label}:**`, ...items.flatMap((i) => {
    if (!isMultiLine(i)) return [`  - ${codeSpan(i)}`];
    const [first, ...rest] = fencedBlock(i);
    return [`  - ${first}`, ...indent(rest, '    ')];
  })];
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
  const where = `whole output: \`blobs/sha256/${t.digest.slice(7)}\` in the ledger directory`;
  const head = t.command !== undefined
    ? `- **Tests:** ${codeSpan(t.command.replace(/\s+/g, ' '))} run by the ledger, exit code ${t.exit_code ?? 'unknown'}; ${size}${t.digest} (${where})`
    : `- **Tests:** output as reported by ${codeSpan(r.agent)} (not run by the ledger); ${size}${t.digest} (${where})`;
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
  const out = [`### ${a.ts} · ${codeSpan(a.agent)} · ${a.kind} · ${codeSpan(a.slug)}`, '', `- **Record:** seq ${a.seq}, ${shortId(a.id)}…${a.kind === 'release' ? `, execution ${codeSpan(a.execution_id)}` : ''}`];
  if (a.stray) out.push(a.kind === 'release' ? '- **Not from the owning execution:** written around the CLI; it changed no ownership' : '- **No such work item then:** written around the CLI');
  const text = a.kind === 'note' ? a.text : a.note;
  const label = a.kind === 'note' ? 'Note' : 'Released';
  if (text === null) out.push(`- **${label}:** handed back without a note; open, nobody owns it`);
  else out.push(...field(label, text));
  return out;
}

function entryLines(e: Entry): string[] {
  const r = e.record;
  const out = [`### ${r.ts} · ${codeSpan(r.agent)} · ${r.kind} · ${codeSpan(r.logical_operation_id)}`, ''];
  out.push(`- **Record:** seq ${e.seq}, ${shortId(e.id)}…, execution ${codeSpan(r.execution_id)}`);
  if (e.stray) out.push('- **Not from the owning execution:** written around the CLI; it changed no ownership');
  if (r.kind === 'start') {
    out.push(...field('Summary', r.summary));
    out.push(`- **Lease:** until ${r.lease_until}`);
    if (r.takeover) {
      const tk = r.takeover;
      out.push(tk.agent === r.agent
        ? `- **Restarted:** replaces ${codeSpan(r.agent)}'s own execution ${codeSpan(tk.execution_id)} (lease was until ${tk.lease_until}), which ended without a finish`
        : tk.forced
          ? `- **TAKEN OVER:** ${takeoverText({ ...tk, by: r.agent, at: r.ts, seq: e.seq }, 300, codeSpan)} (execution ${codeSpan(tk.execution_id)})`
          : `- **Took over:** from ${codeSpan(tk.agent)} (execution ${codeSpan(tk.execution_id)}, lease lapsed at ${tk.lease_until})${tk.reason !== undefined ? `: ${codeSpan(tk.reason.replace(/\s+/g, ' ').trim())}` : ''}`);
    }
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
  if (names.length) out.push(...markupList('Evidence', names.map((n) => `${codeSpan(n)}: ${codeSpan(evidence[n].source)} ${evidence[n].digest}`), ''));
  if (r.kind === 'finish') {
    const inv = Object.keys(r.invariants).sort();
    out.push(...markupList('Invariants', inv.map((n) => `${codeSpan(n)}: ${r.invariants[n].ok ? 'ok' : 'FAIL'}${r.invariants[n].detail ? ` — ${codeSpan(r.invariants[n].detail)}` : ''}`), 'none'));
    out.push(...markupList('Depends on', r.depends_on.map((d) => `${codeSpan(d.logical_operation_id)} (${d.outcome})`), 'nothing'));
    if (r.supersedes?.length) out.push(...markupList('Supersedes', r.supersedes.map(codeSpan), ''));
    if (r.note !== undefined && r.note !== '') out.push(...field('Note', r.note));
  }
  out.push(...field('Next', r.next));
  if (r.kind === 'checkpoint') out.push(`- **Lease:** until ${r.lease_until}`);
  else out.push('- **Lease:** released');
  return out;
}

export function renderMarkdown(log: WorkLog): string {
  const out = [
    '# HANDOFF',
    '',
    `<!-- ${throughLine(log)} -->`,
    `<!-- ${genesisLine(log)} -->`,
    `<!-- Written by \`ledger\` from the signed ledger${log.genesis ? ` (genesis ${log.genesis})` : ''}. Do not edit: \`ledger render --check\` reports any change, and a verb that rewrites this file keeps an edited copy beside it. Write through \`ledger start | checkpoint | finish | release | note\`. -->`,
    '',
    '## Open work items',
    '',
  ];
  const open = openItems(log);
  if (open.length === 0) out.push('None.');
  for (const i of open) {
    const who = i.released ? releaseLine(i.released, 300, codeSpan) : `owned by ${codeSpan(i.owner ?? 'nobody')} (execution ${codeSpan(i.execution_id)}), lease until ${i.lease_until}`;
    out.push(`- ${codeSpan(i.slug)}: ${who} — ${codeSpan(i.summary.replace(/\s+/g, ' ').trim())}${i.taken_over ? ` — **${takeoverLine(i.taken_over, 300, codeSpan)}**` : ''}${i.notes.length ? ` (${i.notes.length} note${i.notes.length === 1 ? '' : 's'} in the log)` : ''}`);
  }
  out.push('', '## Log, newest first', '');
  if (log.entries.length === 0 && log.annotations.length === 0) out.push('No entries yet.', '');
  // The workflow's entries and the releases and notes, merged newest first by seq.
  for (let i = log.entries.length - 1, j = log.annotations.length - 1; i >= 0 || j >= 0;) {
    if (j < 0 || (i >= 0 && log.entries[i].seq > log.annotations[j].seq)) out.push(...entryLines(log.entries[i--]), '');
    else out.push(...annotationEntryLines(log.annotations[j--]), '');
  }
  return out.join('\n').replace(/\n+$/, '\n');
}
