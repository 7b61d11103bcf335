// Keeping the secret key and the ledger out of git (issue 14.2): what git would do with a path
// (`doctor` reads it), and the lines `init` adds to the work tree's .gitignore so that one
// `git add -A` cannot commit the signing key or this machine's ledger.
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { fsyncDir, removeQuietly, replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { runGit, workTreeTop } from './git.js';

/** What git would do with a path, as far as this machine's git says. */
export type GitExposure =
  | { state: 'outside' }
  /** In a work tree: `tracked` (committed or staged), `ignored` (by the ignore rules). */
  | { state: 'inside'; top: string; rel: string; tracked: boolean; ignored: boolean }
  /** git could not say (not installed, a repository it refuses, a failure): treat as exposed. */
  | { state: 'unknown'; why: string };

/** `path` with its existing part resolved through symbolic links, as git names paths. */
function realish(path: string): { existing: string; full: string } {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return { existing: realpathSync(existing), full: join(realpathSync(existing), ...rest.reverse()) };
    } catch {
      const up = dirname(existing);
      if (up === existing) return { existing, full: resolve(path) };
      rest.push(basename(existing));
      existing = up;
    }
  }
}

/** A path to ask git about: a file, or with `isDir` a directory; it need not exist yet. */
export interface GitPath { path: string; isDir: boolean }

/** Where one path stands before git is asked what it holds: outside, unknown, or a rel in a work tree. */
type Placed = GitExposure | { state: 'placed'; top: string; rel: string };

/** The folder `path` is in, as git names it, and its work tree's top (`tops`: one `rev-parse` per folder). */
function place(p: GitPath, tops: Map<string, ReturnType<typeof workTreeTop>>): Placed {
  const { existing, full } = realish(p.path);
  const folder = existing === full ? (p.isDir ? full : dirname(full)) : existing;
  if (!tops.has(folder)) tops.set(folder, workTreeTop(folder));
  const wt = tops.get(folder)!;
  if (wt === null) return { state: 'outside' };
  if ('unknown' in wt) return { state: 'unknown', why: wt.unknown };
  const rel = relative(wt.top, full);
  if (rel === '' || rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel)) return { state: 'outside' };
  return { state: 'placed', top: wt.top, rel: rel.split(sep).join('/') };
}

/** What `check-ignore` is given for a path: a directory is ignored when a file in it would be (its own rule, or one of a folder above). */
const probeOf = (rel: string, isDir: boolean) => (isDir ? `${rel}/HEAD` : rel);

/**
 * Which of `probes` (paths from `top`) the ignore rules ignore: one `check-ignore --stdin` for
 * all of them. Speed: the paths are asked in one process, not one each (an `init --remote` asks
 * about four paths, twice). A batch git fails (one path it refuses) is asked again a path at a
 * time, so that one bad path makes only itself unknown, as when each was asked alone.
 */
function ignoredIn(top: string, probes: readonly string[], rules: 'this machine' | 'the repository'): (boolean | { unknown: string })[] {
  const only = rules === 'the repository' ? ['-c', 'core.excludesFile=/dev/null'] : [];
  const failed = (r: { code: number | null; error: string }) => ({ unknown: `git check-ignore failed: ${r.error || `exit ${r.code}`}` });
  if (probes.length > 1 && !probes.some((p) => p.includes('\0'))) {
    const r = runGit(top, [...only, 'check-ignore', '--no-index', '-z', '--stdin'], probes.map((p) => `${p}\0`).join(''));
    // Without -v, check-ignore names each ignored path as it was given, NUL-terminated.
    const named = r.stdout === '' ? [] : r.stdout.replace(/\0$/, '').split('\0');
    if ((r.code === 0 || r.code === 1) && named.every((n) => probes.includes(n)) && (r.code === 0) === (named.length > 0)) return probes.map((p) => named.includes(p));
  }
  return probes.map((p) => {
    const r = runGit(top, [...only, 'check-ignore', '-q', '--no-index', '--', p]);
    return r.code === 0 || r.code === 1 ? r.code === 0 : failed(r);
  });
}

/**
 * Which of `rels` (paths from `top`, a directory standing for every file in it) git tracks: one
 * `ls-files` for all of them, each file it names counted for the path it is or is in. A batch
 * git fails, or a name that is none of them nor in one, is asked again a path at a time.
 */
function trackedIn(top: string, rels: readonly string[]): (boolean | { unknown: string })[] {
  const ask = (paths: readonly string[]) => runGit(top, ['--literal-pathspecs', 'ls-files', '-z', '--cached', '--', ...paths]);
  if (rels.length > 1) {
    const r = ask(rels);
    const named = r.stdout === '' ? [] : r.stdout.replace(/\0$/, '').split('\0');
    const under = (n: string, rel: string) => n === rel || n.startsWith(`${rel}/`);
    if (r.code === 0 && named.every((n) => rels.some((rel) => under(n, rel)))) return rels.map((rel) => named.some((n) => under(n, rel)));
  }
  return rels.map((rel) => {
    const r = ask([rel]);
    return r.code === 0 ? r.stdout !== '' : { unknown: `git ls-files failed: ${r.error || `exit ${r.code}`}` };
  });
}

/**
 * Where each path stands with git: outside any work tree, inside one (tracked? ignored?), or
 * unknown. Ignored means by the ignore rules alone (`check-ignore --no-index`): a tracked file
 * stays tracked whatever they say. `rules`: every rule git applies on this machine (the user's
 * global excludes too: what `git add -A` here would do), or the repository's own (its .gitignore
 * files and .git/info/exclude). Speed: git is asked once per folder where the work tree's top
 * is, and once per work tree for what it tracks and once for what it ignores, whatever the
 * number of paths.
 */
export function gitExposures(paths: readonly GitPath[], rules: 'this machine' | 'the repository' = 'this machine'): GitExposure[] {
  const tops = new Map<string, ReturnType<typeof workTreeTop>>();
  const placed = paths.map((p) => place(p, tops));
  const out: GitExposure[] = placed.map((p) => (p.state === 'placed' ? { state: 'unknown', why: 'not asked' } : p));
  const byTop = new Map<string, number[]>();
  placed.forEach((p, i) => {
    if (p.state === 'placed') byTop.set(p.top, [...(byTop.get(p.top) ?? []), i]);
  });
  for (const [top, at] of byTop) {
    const rels = at.map((i) => (placed[i] as { rel: string }).rel);
    const tracked = trackedIn(top, rels);
    const ignored = ignoredIn(top, at.map((i, k) => probeOf(rels[k], paths[i].isDir)), rules);
    at.forEach((i, k) => {
      const t = tracked[k];
      const g = ignored[k];
      if (typeof t !== 'boolean') out[i] = { state: 'unknown', why: t.unknown };
      else if (typeof g !== 'boolean') out[i] = { state: 'unknown', why: g.unknown };
      else out[i] = { state: 'inside', top, rel: rels[k], tracked: t, ignored: g };
    });
  }
  return out;
}

/** A path as a .gitignore pattern matching exactly it, from the work tree's top. */
function literalPattern(rel: string): string {
  if (/[\n\r]/.test(rel)) throw new LedgerError('USAGE', `cannot name ${JSON.stringify(rel)} in .gitignore: it has a line break`);
  return '/' + rel.replace(/[\\*?[]/g, '\\$&').replace(/ $/, '\\ ');
}

/** Every `*.key` beside the key (`ledger keygen --out keys/ci.key` is as secret as this one). */
function keyPattern(rel: string): string {
  if (!rel.endsWith('.key')) return literalPattern(rel);
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? '/*.key' : `${literalPattern(rel.slice(0, slash))}/*.key`;
}

export interface KeptOut {
  /** The .gitignore that was written, or null when every path was ignored already. */
  file: string | null;
  /** The patterns added to it (none when they were there). */
  added: string[];
  /** Paths that git tracks already: ignoring them does not take them out of git. */
  tracked: string[];
  /** Puts every .gitignore written back as it was (an `init --remote` whose join was refused). */
  undo: () => void;
}

export const GITIGNORE_COMMENT = '# handoff-ledger: the secret signing key and this machine\'s ledger stay out of git (its README, "Using it with git")';

/**
 * Makes git ignore the secret key file (every `*.key` beside it) and the ledger directory, by
 * lines added to the .gitignore at the top of the work tree they are in. Idempotent: a path git
 * ignores already adds nothing. Returns null when neither is inside a git work tree.
 *
 * Policy: the work tree's own .gitignore, not .git/info/exclude: the rule travels with the
 * repository to every clone and every worktree, where the next `init` would otherwise make the
 * same key on the same path; and it is a file the user sees and reviews. Patterns are anchored
 * (a leading `/`) so they match these paths only. Policy: fail closed: when git cannot say, or
 * still does not ignore a path after the lines are added (a later `!` rule, a .gitignore further
 * down), nothing more is written and the caller refuses before it creates the key.
 */
export function keepOutOfGit(keyPath: string, ledgerDir: string, views: readonly string[] = []): KeptOut | null {
  // Policy: a rule in this user's global excludes does not count: it does not travel with the
  // repository, so another clone (CI, a colleague) would commit what this one ignores.
  // Policy (issue 24.3): in a ledger joined to a remote the views are each machine's rendering
  // of its verified copy and follow it at every sync; committed, they would change the work tree
  // of every clone that syncs (a `git checkout` of a teammate's branch then refuses), so a join
  // keeps them out of git too.
  const asked = [
    { path: keyPath, isDir: false, what: 'the secret key' },
    { path: ledgerDir, isDir: true, what: 'the ledger directory' },
    ...views.map((path) => ({ path, isDir: false, what: 'the view' })),
  ];
  const exposures = gitExposures(asked, 'the repository');
  const targets = asked.map((t, i) => ({ ...t, exposure: exposures[i] }));
  for (const t of targets) {
    if (t.exposure.state !== 'unknown') continue;
    throw new LedgerError('OP_IO', `cannot ask git whether it would commit ${t.what} ${t.path}: ${t.exposure.why}`, { path: t.path }, 'fix git (or install it), or put the key and the ledger outside the work tree with --key and --dir');
  }
  const inside = targets.flatMap((t) => (t.exposure.state === 'inside' ? [{ ...t, exposure: t.exposure }] : []));
  if (inside.length === 0) return null;
  // Two work trees (the key in one, the ledger in another) each get their own lines.
  const byTop = new Map<string, typeof inside>();
  for (const t of inside) byTop.set(t.exposure.top, [...(byTop.get(t.exposure.top) ?? []), t]);
  const undos: (() => void)[] = [];
  const result: KeptOut = { file: null, added: [], tracked: inside.filter((t) => t.exposure.tracked).map((t) => t.path), undo: () => undos.splice(0).reverse().forEach((u) => u()) };
  for (const [top, list] of byTop) {
    const patterns = list.filter((t) => !t.exposure.ignored).map((t) => (t.isDir ? `${literalPattern(t.exposure.rel)}/` : keyPattern(t.exposure.rel)));
    if (patterns.length === 0) continue;
    const file = join(top, '.gitignore');
    const undo = appendLines(file, patterns);
    undos.push(undo);
    result.file = file;
    result.added.push(...patterns);
    // Writing a .gitignore moves no path into or out of a work tree, nor changes what git
    // tracks: what it ignores now is the one question asked again.
    const after = ignoredIn(top, list.map((t) => probeOf(t.exposure.rel, t.isDir)), 'the repository');
    for (const [k, t] of list.entries()) {
      if (after[k] !== true) {
        // A refused init changes nothing: the .gitignore goes back to what it was.
        undo();
        throw new LedgerError('OP_INSECURE_PATH', `git still does not ignore ${t.what} ${t.path} after ${file} got ${patterns.join(' and ')}: a later rule, or a .gitignore further down, un-ignores it`, { path: t.path, gitignore: file }, 'fix the ignore rules so that `git check-ignore` names it, then run `ledger init` again');
      }
    }
  }
  return result;
}

/**
 * Appends the comment and `patterns` to a .gitignore, durably, and returns how to put it back.
 * Refuses one that is not a plain file (a link is not written through).
 */
function appendLines(file: string, patterns: string[]): () => void {
  let before: string | null = null;
  let mode = 0o644;
  try {
    const st = lstatSync(file);
    if (!st.isFile()) {
      throw new LedgerError('OP_INSECURE_PATH', `${file} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; it is not written through`, { path: file }, `add these lines to it yourself, then run \`ledger init\` again: ${patterns.join(' ')}`);
    }
    mode = st.mode & 0o777;
    before = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError(e, 'read', file);
  }
  const old = before ?? '';
  const text = `${old}${old === '' || old.endsWith('\n') ? '' : '\n'}${old === '' ? '' : '\n'}${GITIGNORE_COMMENT}\n${patterns.join('\n')}\n`;
  const write = (t: string) => {
    try {
      replaceFileDurable(realFileOps, dirname(file), basename(file), new TextEncoder().encode(t), mode);
    } catch (e) {
      throw ioError(e, 'write', file);
    }
  };
  write(text);
  return () => {
    if (before !== null) write(before);
    else {
      removeQuietly(realFileOps, file);
      fsyncDir(realFileOps, dirname(file));
    }
  };
}
