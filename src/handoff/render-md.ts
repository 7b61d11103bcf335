// HANDOFF.md: the running log for people and agents, newest entry first. A pure function of the
// folded work log: no clock, no paths, no environment, so the same ledger gives the same bytes
// on any machine (which is what lets `render --check` catch a hand edit).
import type { Entry, WorkLog } from './workitems.js';
import { openItems } from './workitems.js';
import { plainText, } from './excerpt.js';
import { shortId } from './text.js';
import { annotationEntryLines, releaseLine, takeoverLine, takeoverText } from './annotations.js';

export const VIEW_MARKER = 'ledger-view through seq';

/** The marker line both views carry: which record they were rendered through. */
export function throughLine(log: WorkLog): string {
  return log.through ? `${VIEW_MARKER} ${log.through.seq} ${log.through.id}` : `${VIEW_MARKER} none`;
}

function indent(lines: string[], by = '  '): string[] {
  return lines.map((l) => (l === '' ? '' : by + l));
}

/** `- **Label:** value`, with a multi-line value continued inside the list item. */
function field(label: string, text: string): string[] {
  const lines = plainText(text).replace(/\n+$/, '').split('\n');
  if (lines.length === 1) return [`- **${label}:** ${lines[0]}`];
  return [`- **${label}:**`, ...indent(lines)];
}

function list(label: string, items: string[], none: string): string[] {
  if (items.length === 0) return [`- **${label}:** ${none}`];
  return [`- **${label}:**`, ...items.flatMap((i) => {
    const [first, ...rest] = plainText(i).split('\n');
    return [`  - ${first}`, ...indent(rest, '    ')];
  })];
}

/** A fenced block that no backtick run inside the text can close early. */
function fenced(text: string, by = '  '): string[] {
  const body = plainText(text).replace(/\n+$/, '');
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return indent([fence + 'text', ...body.split('\n'), fence], by);
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
    ? `- **Tests:** \`${oneLineCode(t.command)}\` run by the ledger, exit code ${t.exit_code ?? 'unknown'}; ${size}${t.digest} (${where}); last lines:`
    : `- **Tests:** output as reported by ${r.agent} (not run by the ledger); ${size}${t.digest} (${where}); last lines:`;
  return [head, '', ...fenced(t.excerpt === '' ? '(no output)' : t.excerpt)];
}

function oneLineCode(cmd: string): string {
  return plainText(cmd).replace(/\s+/g, ' ').replace(/`/g, "'");
}

function entryLines(e: Entry): string[] {
  const r = e.record;
  const out = [`### ${r.ts} · ${r.agent} · ${r.kind} · ${r.logical_operation_id}`, ''];
  out.push(`- **Record:** seq ${e.seq}, ${shortId(e.id)}…, execution ${r.execution_id}`);
  if (e.stray) out.push('- **Not from the owning execution:** written around the CLI; it changed no ownership');
  if (r.kind === 'start') {
    out.push(...field('Summary', r.summary));
    out.push(`- **Lease:** until ${r.lease_until}`);
    if (r.takeover) {
      out.push(r.takeover.agent === r.agent
        ? `- **Restarted:** replaces ${r.agent}'s own execution ${r.takeover.execution_id} (lease was until ${r.takeover.lease_until}), which ended without a finish`
        : r.takeover.forced
          ? `- **TAKEN OVER:** ${takeoverText({ ...r.takeover, by: r.agent, at: r.ts, seq: e.seq })} (execution ${r.takeover.execution_id})`
          : `- **Took over:** from ${r.takeover.agent} (execution ${r.takeover.execution_id}, lease lapsed at ${r.takeover.lease_until})${r.takeover.reason !== undefined ? `: ${plainText(r.takeover.reason).replace(/\s+/g, ' ').trim()}` : ''}`);
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
  if (names.length) out.push(...list('Evidence', names.map((n) => `${n}: ${evidence[n].source} ${evidence[n].digest}`), ''));
  if (r.kind === 'finish') {
    const inv = Object.keys(r.invariants).sort();
    out.push(...list('Invariants', inv.map((n) => `${n}: ${r.invariants[n].ok ? 'ok' : 'FAIL'}${r.invariants[n].detail ? ` — ${r.invariants[n].detail}` : ''}`), 'none'));
    out.push(...list('Depends on', r.depends_on.map((d) => `${d.logical_operation_id} (${d.outcome})`), 'nothing'));
    if (r.supersedes?.length) out.push(...list('Supersedes', r.supersedes, ''));
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
    `<!-- Written by \`ledger\` from the signed ledger${log.genesis ? ` (genesis ${log.genesis})` : ''}. Do not edit: \`ledger render --check\` reports any change and \`ledger render\` rewrites this file. Write through \`ledger start | checkpoint | finish | release | note\`. -->`,
    '',
    '## Open work items',
    '',
  ];
  const open = openItems(log);
  if (open.length === 0) out.push('None.');
  for (const i of open) {
    const who = i.released ? releaseLine(i.released) : `owned by ${i.owner} (execution ${i.execution_id}), lease until ${i.lease_until}`;
    out.push(`- **${i.slug}**: ${who} — ${plainText(i.summary).replace(/\s+/g, ' ').trim()}${i.taken_over ? ` — **${takeoverLine(i.taken_over)}**` : ''}${i.notes.length ? ` (${i.notes.length} note${i.notes.length === 1 ? '' : 's'} in the log)` : ''}`);
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
