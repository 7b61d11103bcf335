// Where the code of a work item is (issue 24.5): what a start, checkpoint or finish records of the
// work tree it was written from, so that whoever resumes it on another machine knows how to get
// that code, or that they cannot:
//   machine   the host name; path: the work tree's top folder there
//   branch    the branch checked out (null: detached), commit: HEAD's commit (null: none yet)
//   pushed_to a remote-tracking ref that holds that commit, as this clone last saw the remotes
//             (null: no remote this clone knows has it, so it exists only on that machine)
//   dirty     whether the tree had changes outside the ledger's files and views
//   content   a digest of the work tree's content as git sees it (tracked files as they are on
//             disk, untracked files that are not ignored; the ledger's files and views left out):
//             the same whatever was committed, so the stop hook compares content, not HEAD
//             (SPEC 12: a commit of exactly the checkpointed work is not a change)
// Read-only, through handoff/git.ts (a scrubbed environment, fsmonitor off, as the caller's user).
import { lstatSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../canonical.js';
import type { CodePlace } from '../record.js';
import type { Boundary } from '../fs/boundary.js';
import { git, isLedgerFile, statusPaths, type LedgerFiles } from './git.js';

export type { CodePlace };

/** Policy: past this many changed paths the content is not digested (null: the stop hook then uses time). */
const MAX_HASHED = 5_000;

/** The work tree at `dir`: its top folder, or null outside one. */
export function workTreeTop(dir: string, as?: Boundary): string | null {
  return git(dir, ['rev-parse', '--show-toplevel'], as)?.replace(/\n$/, '') || null;
}

/**
 * The digest of the work tree's content (see the header), or null when it cannot be told (no
 * git, too many changes). HEAD's tree, listed, with every path `git status` reports replaced by
 * what is on disk (hashed by git, as a commit would store it) or dropped when deleted.
 */
export function workTreeContent(top: string, own: LedgerFiles, as?: Boundary): string | null {
  const entries = new Map<string, string>();
  const listed = git(top, ['ls-tree', '-r', '-z', '--full-tree', 'HEAD'], as);
  // No HEAD yet: nothing committed; the status lists every file.
  for (const e of (listed ?? '').split('\0')) {
    const tab = e.indexOf('\t');
    if (tab < 0) continue;
    const [mode, , oid] = e.slice(0, tab).split(' ');
    entries.set(e.slice(tab + 1), `${mode} ${oid}`);
  }
  const status = git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], as);
  if (status === null) return null;
  const changed = statusPaths(status).map((p) => p.replace(/\/$/, ''));
  if (changed.length > MAX_HASHED) return null;
  const files: string[] = [];
  for (const p of changed) {
    let st;
    try {
      st = lstatSync(join(top, p));
    } catch {
      entries.delete(p); // deleted in the work tree
      continue;
    }
    if (st.isDirectory()) continue; // a submodule: its entry stays as listed
    files.push(p);
  }
  if (files.length) {
    const oids = git(top, ['hash-object', '--stdin-paths'], as, files.map((f) => `${f}\n`).join(''))?.trim().split('\n') ?? [];
    if (oids.length !== files.length) return null;
    files.forEach((f, i) => {
      const st = lstatSync(join(top, f));
      const mode = st.isSymbolicLink() ? '120000' : st.mode & 0o111 ? '100755' : '100644';
      entries.set(f, `${mode} ${oids[i]}`);
    });
  }
  const lines = [...entries.entries()]
    .filter(([p]) => !isLedgerFile(join(top, p), own))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, v]) => `${v}\t${p}\0`);
  return `sha256:${sha256Hex(Buffer.from(lines.join(''), 'utf8'))}`;
}

/** Where the code is now, for the record a start, checkpoint or finish writes (see the header). */
export function codePlace(dir: string, own: LedgerFiles, as?: Boundary): CodePlace {
  const machine = hostname().slice(0, 255) || 'unknown';
  const top = workTreeTop(dir, as);
  if (top === null) return { machine, path: dir, git: null };
  const commitRaw = git(top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], as)?.trim() || null;
  const commit = commitRaw && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(commitRaw) ? commitRaw : null;
  const ref = git(top, ['symbolic-ref', '--quiet', 'HEAD'], as)?.trim() || null;
  const branch = ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  let pushed_to: string | null = null;
  if (commit) {
    const holders = (git(top, ['for-each-ref', '--contains', commit, '--format=%(refname:short)', 'refs/remotes'], as) ?? '').split('\n').filter((r) => r && !r.endsWith('/HEAD'));
    const upstream = git(top, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}'], as)?.trim();
    pushed_to = (upstream && holders.includes(upstream) ? upstream : holders.find((h) => branch !== null && h.endsWith(`/${branch}`)) ?? holders[0]) ?? null;
  }
  const status = git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=normal'], as);
  // Policy: a status that cannot be read is dirty (fail closed: "clean" is a claim).
  const dirty = status === null || !statusPaths(status).every((p) => isLedgerFile(join(top, p.replace(/\/$/, '')), own));
  const content = workTreeContent(top, own, as);
  return { machine, path: top, git: { branch, commit, pushed_to: pushed_to ? pushed_to.slice(0, 4096) : null, dirty, ...(content ? { content } : {}) } };
}
