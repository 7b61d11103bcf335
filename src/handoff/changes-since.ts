// `resume`'s "what changed since" (issue 14.6): the commits and files since the commit that the
// item's last test run recorded (`tests.workdir.git.commit`, written by `--tests-cmd`), so whoever
// takes over sees what happened after the last thing that was tested.
//
//   - the base: the newest checkpoint or finish of the item (from its owner) whose test run was in
//     a git work tree with a commit
//   - the tip: the branch that run recorded, when the repository still has it (worktrees share
//     their branches, so this works from the main checkout too), else the project's HEAD
//   - commits base..tip (newest first), and the files that differ, the work tree's own changes
//     and untracked files included when the tip is what the project has checked out
// Policy: the ledger's own files (the ledger directory) and the views (HANDOFF.md, HANDOFF.yml)
// are never counted: every checkpoint rewrites them. Lists are cut at LIST_MAX in --json, and
// shorter in the text (the caller's budget); the counts are always whole.
// git runs with git.ts's scrubbed environment, in the project root, as whoever runs `resume`.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { git, isLedgerFile, type GitFacts } from './git.js';
import { oneLine } from '../text/lines.js';
import type { WorkItem } from './workitems.js';

const LIST_MAX = 50;

export interface ChangesSince {
  /** The checkpoint or finish whose commit is the base. */
  as_of_seq: number;
  commit: string;
  branch: string | null;
  /** What the base was compared with: `refs/heads/<branch>`, or `HEAD` of the project. */
  tip: string;
  /** False when this repository does not have the commit (then nothing below is known). */
  known: boolean;
  commits: { count: number; list: { oid: string; subject: string }[] };
  files: { count: number; list: string[] };
}

export interface ChangesContext {
  root: string;
  ledgerDir: string;
  git: GitFacts | null;
}

function baseOf(item: WorkItem): { seq: number; commit: string; branch: string | null } | null {
  for (let i = item.entries.length - 1; i >= 0; i--) {
    const e = item.entries[i];
    if (e.stray || e.record.kind === 'start') continue;
    const g = e.record.tests?.workdir?.git;
    if (g?.commit) return { seq: e.seq, commit: g.commit, branch: g.branch };
  }
  return null;
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** null when the project is not a git work tree or no test run of the item recorded a commit. */
export function changesSince(item: WorkItem, ctx: ChangesContext): ChangesSince | null {
  if (ctx.git === null) return null;
  const base = baseOf(item);
  if (!base) return null;
  const root = ctx.root;
  const branchRef = base.branch === null ? null : `refs/heads/${base.branch}`;
  const tip = branchRef !== null && git(root, ['rev-parse', '--verify', '--quiet', `${branchRef}^{commit}`]) !== null ? branchRef : 'HEAD';
  const out: ChangesSince = { as_of_seq: base.seq, commit: base.commit, branch: base.branch, tip, known: false, commits: { count: 0, list: [] }, files: { count: 0, list: [] } };
  if (git(root, ['cat-file', '-e', `${base.commit}^{commit}`]) === null) return out;
  out.known = true;
  const range = `${base.commit}..${tip}`;
  out.commits.count = Number(git(root, ['rev-list', '--count', range])?.trim() ?? 0) || 0;
  const log = git(root, ['log', `-${LIST_MAX}`, '--format=%h%x09%s', range]) ?? '';
  out.commits.list = log.split('\n').filter(Boolean).map((l) => {
    const tab = l.indexOf('\t');
    return { oid: l.slice(0, tab), subject: l.slice(tab + 1) };
  });
  // The tip checked out here: compare with the work tree (its edits and new files count too).
  const checkedOut = tip === 'HEAD' || git(root, ['symbolic-ref', '--quiet', 'HEAD'])?.trim() === tip;
  const names = new Set<string>();
  const diff = git(root, ['diff', '--name-only', '-z', '--no-renames', base.commit, ...(checkedOut ? [] : [tip]), '--']) ?? '';
  for (const n of diff.split('\0')) if (n) names.add(n);
  if (checkedOut) for (const n of (git(root, ['ls-files', '--others', '--exclude-standard', '-z']) ?? '').split('\0')) if (n) names.add(n);
  const top = git(root, ['rev-parse', '--show-toplevel'])?.replace(/\n$/, '') ?? root;
  const own = { ledgerDir: real(ctx.ledgerDir), views: [join(real(root), 'HANDOFF.md'), join(real(root), 'HANDOFF.yml')] };
  const files = [...names].filter((n) => !isLedgerFile(join(top, n), own)).sort();
  out.files = { count: files.length, list: files.slice(0, LIST_MAX) };
  return out;
}

/** The section's lines for `resume`: at most `max` commits and `max` files, each list with its remainder counted. */
export function changesSinceLines(c: ChangesSince | null, max: number): string[] {
  if (c === null) return [];
  const head = `since the commit of the last test run (seq ${c.as_of_seq}, ${c.commit.slice(0, 10)}${c.branch === null ? ', detached' : ` on ${oneLine(c.branch, 80)}`})`;
  if (!c.known) return [`${head}: that commit is not in this repository`];
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const out = [`${head}: ${plural(c.commits.count, 'commit')}, ${plural(c.files.count, 'file')} changed (the ledger's files and the views not counted)`];
  const list = (items: string[], count: number) => {
    const keep = count > max ? Math.max(0, max - 1) : count;
    out.push(...items.slice(0, keep));
    if (keep < count) out.push(`  … (${count - keep} more; --json lists ${Math.min(count, LIST_MAX)})`);
  };
  list(c.commits.list.map((x) => `  commit ${x.oid} ${oneLine(x.subject, 100)}`), c.commits.count);
  list(c.files.list.map((f) => `  file ${oneLine(f, 160)}`), c.files.count);
  return out;
}
