// Evidence lives inside the project root (SPEC 9, issue 13 finding 13): a path a record names is
// resolved here, one component at a time, and nothing outside the root is ever lstat'ed, opened,
// read or digested, so the gate is no hash oracle for /etc/shadow or ../../x.
//
// Policy: a path is inside when every step of its resolution stays inside: `..` at the root, an
// absolute path elsewhere, or a symbolic link (in any component) whose target leaves the root is
// outside, even if a later step would come back in. Links that stay inside are followed for
// `file:`/`dir:` names (a link inside a dir: tree is recorded as a link, never followed).
// Policy: the ledger directory and the two views beside it (HANDOFF.md, HANDOFF.yml in the
// project root) change with every write, so evidence may not name them, and a dir: digest skips
// them (`ledgerOwnPaths`).
import { realpathSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { badEvidence, errnoOf, type EvidenceReadOps } from './read-ops.js';

/** A path resolved inside the root: where it really is, and how a record names it. */
export interface Located {
  /** The real path: every component a link was resolved, no `..`. */
  real: string;
  /** As recorded: relative to the project root, '/'-separated, '.' for the root itself. */
  recorded: string;
  /** lstat of `real` (never a symbolic link). */
  st: Stats;
}

const MAX_LINKS = 40; // as Linux's own limit on links followed in one path resolution

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** `p` relative to `base` when it is `base` or below it ('' for base itself), else null. */
function under(base: string, p: string): string | null {
  const rel = relative(base, p);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel)) return null;
  return rel;
}

export function outsideRoot(source: string, root: string): ReturnType<typeof badEvidence> {
  return badEvidence(`evidence ${source} names a path outside the project root ${root}; evidence is read only inside it`, source, { outside: true });
}

/** The real project root and the ledger's own paths in it, which evidence never digests. */
export function ledgerOwnPaths(root: string, ledgerDir: string): { realRoot: string; own: string[] } {
  const realRoot = realOr(root);
  // The ledger directory first: dir/v1 skipped it alone.
  return { realRoot, own: [realOr(ledgerDir), join(realRoot, 'HANDOFF.md'), join(realRoot, 'HANDOFF.yml')] };
}

/** Whether `real` is one of the ledger's own paths or inside one. */
export function isOwnPath(real: string, own: readonly string[]): boolean {
  return own.some((o) => under(o, real) !== null);
}

/**
 * Resolves `given` (relative to `base`, or absolute) inside `root`. Throws INPUT_EVIDENCE: outside
 * the root (data.outside), missing, unreadable, or a link loop. Never touches a path outside.
 */
export function locateInsideRoot(ops: EvidenceReadOps, given: string, base: string, root: string, source: string): Located {
  const realRoot = realOr(root);
  // Policy: the path as given is normalised lexically (as path.resolve does: `a/../b` is `b`
  // whatever `a` is), so it can only ever name a place under the root; `..` inside a link's
  // target is walked the POSIX way below.
  const abs = resolve(base, given);
  // The lexical check first: a path that is outside as written is refused before any lstat.
  const rel = under(resolve(root), abs) ?? under(realRoot, abs);
  if (rel === null) throw outsideRoot(source, root);
  const recorded = rel === '' ? '.' : rel.split(sep).join('/');

  const parts = rel.split(sep).filter((c) => c !== '' && c !== '.');
  let cur = realRoot;
  let st: Stats = lstatOrThrow(ops, cur, source);
  let links = 0;
  while (parts.length) {
    const c = parts.shift()!;
    if (c === '..') {
      if (cur === realRoot) throw outsideRoot(source, root);
      cur = cur.slice(0, cur.lastIndexOf('/')) || '/';
      st = lstatOrThrow(ops, cur, source);
      continue;
    }
    const next = join(cur, c);
    st = lstatOrThrow(ops, next, source);
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++links > MAX_LINKS) throw badEvidence(`evidence ${source}: too many symbolic links (a loop?)`, source);
    const target = readlinkOrThrow(ops, next, source);
    if (isAbsolute(target)) {
      // Textually under the root (either spelling), then walked component by component again.
      const inside = [realRoot, resolve(root)].map((r) => (target === r ? '' : target.startsWith(r + '/') ? target.slice(r.length + 1) : null)).find((x) => x !== null);
      if (inside === undefined || inside === null) throw outsideRoot(source, root);
      cur = realRoot;
      parts.unshift(...inside.split('/').filter((x) => x !== '' && x !== '.'));
    } else {
      parts.unshift(...target.split('/').filter((x) => x !== '' && x !== '.'));
    }
    st = lstatOrThrow(ops, cur, source);
  }
  return { real: cur, recorded, st };
}

function lstatOrThrow(ops: EvidenceReadOps, path: string, source: string): Stats {
  try {
    return ops.lstat(Buffer.from(path));
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw badEvidence(`evidence ${source}: no such file or directory`, source, { missing: true });
    throw badEvidence(`evidence ${source}: cannot look at ${path} (${code ?? 'error'})`, source);
  }
}

function readlinkOrThrow(ops: EvidenceReadOps, path: string, source: string): string {
  try {
    return ops.readlink(Buffer.from(path)).toString('utf8');
  } catch (e) {
    throw badEvidence(`evidence ${source}: cannot read the link ${path} (${errnoOf(e) ?? 'error'})`, source);
  }
}
