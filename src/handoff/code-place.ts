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
import { lstatSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../canonical.js';
import type { CodePlace } from '../record.js';
import type { Boundary } from '../fs/boundary.js';
import { git, isLedgerFile, treeSnapshot, type LedgerFiles, type TreeSnapshot } from './git.js';

export type { CodePlace };

/** Policy: past this many changed paths the content is not digested (null: the stop hook then uses time). */
const MAX_HASHED = 5_000;

/** The repository's object format, asked only when no commit shows it. */
function objectFormat(top: string, as?: Boundary): string | null {
  return git(top, ['rev-parse', '--show-object-format'], as)?.trim() ?? null;
}

/** git's blob id of a symbolic link: the hash of "blob <length>", a NUL and the name the link holds. */
function linkBlob(path: string, algorithm: 'sha1' | 'sha256'): string | null {
  let target: Buffer;
  try {
    target = readlinkSync(path, { encoding: 'buffer' });
  } catch {
    return null;
  }
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash(algorithm).update(`blob ${target.length}\0`).update(target).digest('hex');
}

/**
 * The digest of the work tree's content (see the header), or null when it cannot be told (no
 * git, too many changes). HEAD's tree, listed, with every path `git status` reports replaced by
 * what is on disk (hashed by git, as a commit would store it) or dropped when deleted.
 */
function contentOf(snap: TreeSnapshot, own: LedgerFiles, as?: Boundary): string | null {
  const { top, status: st, listed } = snap;
  if (st === null || listed === null) return null;
  const entries = new Map<string, string>();
  for (const e of listed.split('\0')) {
    const tab = e.indexOf('\t');
    if (tab < 0) continue;
    const [mode, , oid] = e.slice(0, tab).split(' ');
    entries.set(e.slice(tab + 1), `${mode} ${oid}`);
  }
  // The ledger's own files and views are left out of the digest: not hashed at all.
  const changed = st.paths.map((p) => p.replace(/\/$/, '')).filter((p) => !isLedgerFile(join(top, p), own));
  if (changed.length > MAX_HASHED) return null;
  const files: string[] = [];
  for (const p of changed) {
    let lst;
    try {
      lst = lstatSync(join(top, p));
    } catch {
      entries.delete(p); // deleted in the work tree
      continue;
    }
    if (lst.isDirectory()) continue; // a submodule: its entry stays as listed
    if (lst.isSymbolicLink()) {
      // git stores a link as a blob of its target's name; `hash-object` would read the file it
      // points at (and a link could point anywhere), so its blob id is computed here.
      const id = linkBlob(join(top, p), st.commit?.length === 64 || (st.commit === null && objectFormat(top, as) === 'sha256') ? 'sha256' : 'sha1');
      if (id === null) return null;
      entries.set(p, `120000 ${id}`);
      continue;
    }
    files.push(p);
  }
  if (files.length) {
    const oids = git(top, ['hash-object', '--stdin-paths'], as, files.map((f) => `${f}\n`).join(''))?.trim().split('\n') ?? [];
    if (oids.length !== files.length) return null;
    for (const [i, f] of files.entries()) {
      const lst = lstatSync(join(top, f));
      // Turned into a link since it was listed: hash-object read what it points at.
      if (lst.isSymbolicLink()) return null;
      entries.set(f, `${lst.mode & 0o111 ? '100755' : '100644'} ${oids[i]}`);
    }
  }
  const lines = [...entries.entries()]
    .filter(([p]) => !isLedgerFile(join(top, p), own))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, v]) => `${v}\t${p}\0`);
  return `sha256:${sha256Hex(Buffer.from(lines.join(''), 'utf8'))}`;
}

/** The content digest of the work tree at or above `dir` (the stop hook's comparison), or null when it cannot be told. */
export function workTreeContent(dir: string, own: LedgerFiles, as?: Boundary): string | null {
  const snap = treeSnapshot(dir, false, as);
  return snap === null ? null : contentOf(snap, own, as);
}

/**
 * Where the code is now, for the record a start, checkpoint or finish writes (see the header).
 * Two processes at most: one /bin/sh for the top, HEAD, the status, the remote refs holding the
 * commit and HEAD's tree (git.ts treeSnapshot), and `hash-object` when files changed.
 */
export function codePlace(dir: string, own: LedgerFiles, as?: Boundary): CodePlace {
  const machine = hostname().slice(0, 255) || 'unknown';
  const snap = treeSnapshot(dir, true, as);
  if (snap === null) return { machine, path: dir, git: null };
  const { top, status: st } = snap;
  const commit = st?.commit ?? null;
  const branch = st?.branch ?? null;
  let pushed_to: string | null = null;
  if (commit) {
    const holders = (snap.holders ?? []).filter((r) => !r.endsWith('/HEAD'));
    const upstream = st?.upstream;
    pushed_to = (upstream && holders.includes(upstream) ? upstream : holders.find((h) => branch !== null && h.endsWith(`/${branch}`)) ?? holders[0]) ?? null;
  }
  // Policy: a status that cannot be read is dirty (fail closed: "clean" is a claim).
  const dirty = st === null || !st.paths.every((p) => isLedgerFile(join(top, p.replace(/\/$/, '')), own));
  const content = contentOf(snap, own, as);
  return { machine, path: top, git: { branch, commit, pushed_to: pushed_to ? pushed_to.slice(0, 4096) : null, dirty, ...(content ? { content } : {}) } };
}
