// git: evidence: a commit, and at the gate whether that commit is what the work tree holds.
//
// Git runs here on a repository that may be hostile (issue 13 finding 7), so:
// - the real git binary runs with a scrubbed environment: every GIT_* variable of the caller is
//   dropped (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, GIT_CONFIG_PARAMETERS, ...), no pager, no
//   prompt, no optional locks (the gate never rewrites the index), no replace objects, and a
//   timeout, so a check that cannot finish holds instead of hanging;
// - no command the repository's config names is run: core.fsmonitor is off, every configured
//   filter driver (clean/process) is blanked, protocol.allow=never stops a partial clone's lazy
//   fetch; and git is made to look: core.ignoreStat, core.untrackedCache, core.checkStat and
//   core.trustctime are forced to their careful values, and the index's stat cache, which any
//   git run with the repository's filters refreshes, is not trusted: the work tree is compared
//   with the commit through a fresh index too, so every tracked file is read;
// - what git was told not to look at holds (Policy: the gate never calls a tree clean that git
//   was told to skip): index entries flagged skip-worktree or assume-unchanged (`ls-files -v`
//   tags S/s and lowercase), a sparse checkout, a work tree that does not hold the project root
//   (core.worktree elsewhere); intent-to-add entries show as changes;
// - untracked files count unless the tree's own .gitignore files ignore them: .git/info/exclude
//   and core.excludesFile live outside the tree the commit names, where anyone who can write
//   .git could hide a file (Policy);
// - a populated submodule is checked the same way, recursively (its own config included);
// - and it runs as the caller, never as a key owner acting for one (project/git.ts callerGit,
//   issue 23): the blanking above is a list of what git is known to run, and a repository's
//   config may name more; a process that acts for a caller it cannot become runs no git here
//   (the evidence is refused, the gate holds).
import { chownSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { digestOf } from '../../canonical.js';
import type { Evidence } from '../../record.js';
import { badEvidence } from './read-ops.js';
import type { EvidenceCheck, EvidenceContext } from './types.js';
import { LedgerError } from '../../errors.js';
import { callerGit, callerGitOrNull } from '../../project/git.js';

/** git/v1: SHA-256 of "handoff-ledger/git/v1 <commit oid>". */
export function gitCommitDigest(oid: string): string {
  return digestOf(`handoff-ledger/git/v1 ${oid}`);
}

// node:child_process is loaded only when git: evidence is digested: most commands never need it,
// and every command pays for what it loads.
let childProcess: typeof import('node:child_process') | null = null;

const GIT_TIMEOUT_MS = 60_000;
const MAX_SUBMODULE_DEPTH = 8;

/** A git run that failed, or that could not decide (one line for the gate's reason). */
class GitFailed extends Error {}

/** Forced on every run: git looks at every file and runs nothing the repository names. */
export const CAREFUL = ['core.fsmonitor=false', 'core.untrackedCache=false', 'core.ignoreStat=false', 'core.checkStat=default', 'core.trustctime=true', 'protocol.allow=never', 'core.pager=cat'];

interface Run { status: number | null; stdout: string; stderr: string }

function spawnGit(args: string[], cwd: string, extra: readonly string[] = [], index?: string): Run {
  const as = callerGit(); // OP_PERMISSION (exit 3) where git may not run as the caller
  childProcess ??= process.getBuiltinModule('node:child_process');
  const config = [...CAREFUL, ...extra].flatMap((c) => ['-c', c]);
  const r = childProcess.spawnSync('git', ['--no-pager', ...config, ...args], {
    cwd,
    ...as,
    env: index === undefined ? as.env : { ...as.env, GIT_INDEX_FILE: index },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: GIT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  });
  if (r.error) throw new GitFailed(`git did not finish (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function git(args: string[], cwd: string, extra: readonly string[] = [], index?: string): string {
  const r = spawnGit(args, cwd, extra, index);
  if (r.status !== 0) throw new GitFailed(`git ${args[0]} failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.status}`}`);
  return r.stdout;
}

/**
 * `-c` settings that blank every filter driver the repository's config (any scope, includes
 * followed) defines, so `git status` never runs one. A driver whose name `-c` cannot spell holds.
 */
function blankFilters(cwd: string): string[] {
  const r = spawnGit(['config', '-z', '--name-only', '--get-regexp', '^filter\\.'], cwd);
  if (r.status === 1) return []; // none configured
  if (r.status !== 0) throw new GitFailed(`git config failed: ${r.stderr.trim().split('\n')[0]}`);
  const names = new Set<string>();
  for (const key of r.stdout.split('\0')) {
    const last = key.lastIndexOf('.');
    if (!key.startsWith('filter.') || last <= 7) continue;
    const driver = key.slice(7, last);
    if (/[=\n\0]/.test(driver)) throw new GitFailed(`the repository configures a filter driver named ${JSON.stringify(driver)} that cannot be switched off`);
    names.add(driver);
  }
  return [...names].flatMap((d) => [`filter.${d}.clean=`, `filter.${d}.process=`, `filter.${d}.smudge=`, `filter.${d}.required=false`]);
}

export function resolveGitRev(rev: string, root: string): string {
  if (!rev || rev.startsWith('-')) throw badEvidence(`git evidence needs a revision, got "${rev}"`, `git:${rev}`);
  let r: Run;
  try {
    r = spawnGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], root);
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    throw badEvidence(`git:${rev}: ${(e as Error).message}`, `git:${rev}`);
  }
  const oid = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9a-f]{40,64}$/.test(oid)) throw badEvidence(`git:${rev} does not name a commit in the repository at ${root}`, `git:${rev}`);
  return oid;
}

const realOr = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};
const slashed = (p: string) => p.split(sep).join('/');

/** What git shows of one work tree: what it was told to skip, and what changed. */
interface Findings { skipped: string[]; changed: string[] }

/** The findings of the repository whose top is `top` (paths prefixed with `prefix`), submodules included. */
function worktreeFindings(top: string, prefix: string, depth: number): Findings {
  const extra = blankFilters(top);
  const out: Findings = { skipped: [], changed: [] };
  const sparse = spawnGit(['config', '--bool', 'core.sparseCheckout'], top, extra);
  if (sparse.stdout.trim() === 'true') out.skipped.push(`${prefix || '.'} (a sparse checkout)`);
  // ls-files -v -s: "<tag> <mode> <oid> <stage>\t<path>"; a lowercase tag is assume-unchanged,
  // S/s skip-worktree, and mode 160000 a submodule.
  const gitlinks: string[] = [];
  for (const entry of git(['ls-files', '-v', '-s', '-z'], top, extra).split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const tag = entry[0];
    const path = prefix + entry.slice(tab + 1);
    if (tag === 'S' || tag === 's') out.skipped.push(`${path} (skip-worktree)`);
    else if (tag !== tag.toUpperCase()) out.skipped.push(`${path} (assume-unchanged)`);
    if (entry.startsWith('160000 ', 2)) gitlinks.push(entry.slice(tab + 1));
  }
  // Tracked changes, staged or not (intent-to-add included); submodule commits, not their trees.
  const changed = new Set(trackedChanges(top, extra));
  // Policy: the index's stat cache is not taken on trust. Any git run with the repository's own
  // filters (a shell prompt's `git status`, an editor) refreshes it, and a clean filter that
  // turns an edited file back into the commit's content records the edited file's stat as
  // clean; the filter-less status above then matches the stat and never reads the file. So the
  // work tree is compared with the commit once more through a fresh index read from HEAD (no
  // stat data, in a temp folder: the repository's own index is never written), which makes git
  // read and hash every tracked file, filters blanked.
  const fresh = mkdtempSync(join(process.getBuiltinModule('node:os').tmpdir(), 'ledger-git-index-'));
  try {
    // git runs as the caller: the folder (0700) is theirs to write the index in.
    const as = callerGitOrNull();
    if (!('refused' in as) && as.uid !== undefined) chownSync(fresh, as.uid, as.gid!);
    const index = join(fresh, 'index');
    git(['read-tree', 'HEAD'], top, extra, index);
    for (const path of trackedChanges(top, extra, index)) changed.add(path);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  for (const path of changed) out.changed.push(prefix + path);
  // Untracked files, with only the tree's own .gitignore files applied.
  for (const p of git(['ls-files', '-z', '--others', '--exclude-per-directory=.gitignore'], top, extra).split('\0')) if (p) out.changed.push(prefix + p);
  // Populated submodules: the same checks inside each.
  for (const path of gitlinks) {
    // An index is data: a submodule path that climbs out is not followed.
    if (path.split('/').includes('..') || path.startsWith('/')) throw new GitFailed(`the index names a submodule outside the work tree: ${JSON.stringify(path)}`);
    const sub = join(top, path);
    if (!existsSync(join(sub, '.git'))) continue; // not checked out: nothing in it to change
    if (depth >= MAX_SUBMODULE_DEPTH) throw new GitFailed(`submodules nest deeper than ${MAX_SUBMODULE_DEPTH}`);
    const subTop = git(['rev-parse', '--show-toplevel'], sub, extra).trim();
    if (realOr(subTop) !== realOr(sub)) throw new GitFailed(`the submodule ${prefix}${path} is not a repository of its own`);
    const inner = worktreeFindings(sub, `${prefix}${path}/`, depth + 1);
    out.skipped.push(...inner.skipped);
    out.changed.push(...inner.changed);
  }
  return out;
}

/** The paths `git status` shows as changed against the index (`index`: another index file). */
function trackedChanges(top: string, extra: readonly string[], index?: string): string[] {
  const out: string[] = [];
  const fields = git(['status', '--porcelain=v1', '-z', '--untracked-files=no', '--ignore-submodules=dirty'], top, extra, index).split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    out.push(f.slice(3));
    // A rename or copy is followed by its original path, which is not an entry of its own.
    if (f[0] === 'R' || f[0] === 'C') out.push(fields[++i] ?? '');
  }
  return out;
}

const list = (xs: string[]) => `${xs.slice(0, 3).join(', ')}${xs.length > 3 ? ` and ${xs.length - 3} more` : ''}`;

/**
 * git:REV is current when REV still names the recorded commit, that commit is checked out, git
 * was not told to skip any file, and the work tree is clean outside the ledger's own paths.
 */
export function gitCurrency(name: string, ev: Evidence, ctx: EvidenceContext): EvidenceCheck {
  const base = { name, source: ev.source, recorded: ev.digest };
  const hold = (actual: string | null, reason: string): EvidenceCheck => ({ ...base, actual, current: false, reason });
  let oid: string;
  try {
    oid = resolveGitRev(ev.source.slice(4), ctx.root);
  } catch {
    return hold(null, `${ev.source} no longer names a commit in the repository at ${ctx.root}`);
  }
  const actual = gitCommitDigest(oid);
  if (actual !== ev.digest) return hold(actual, `${ev.source} now names commit ${oid.slice(0, 12)}, not the recorded one`);
  let top: string;
  let headOid: string;
  try {
    [top, headOid] = git(['rev-parse', '--show-toplevel', 'HEAD'], ctx.root).trim().split('\n');
  } catch {
    return hold(actual, `cannot read the checked-out commit of the repository at ${ctx.root}`);
  }
  if (headOid !== oid) return hold(actual, `${ev.source} is commit ${oid.slice(0, 12)} but the work tree has ${headOid.slice(0, 12)} checked out`);
  const realTop = realOr(top);
  const realRoot = realOr(ctx.root);
  const rootRel = relative(realTop, realRoot);
  if (rootRel.startsWith('..') || rootRel.startsWith(sep)) return hold(actual, `the repository's work tree ${top} does not hold the project root ${ctx.root} (core.worktree?); git: evidence cannot vouch for it`);
  let found: Findings;
  try {
    found = worktreeFindings(top, '', 0);
  } catch (e) {
    return hold(actual, `cannot read the status of the work tree at ${top}: ${(e as Error).message}`);
  }
  // Policy: what the ledger writes itself (its directory and its two views) does not count as a
  // change to the state the commit names; everything else does, untracked files included.
  const ledgerRel = slashed(relative(realTop, realOr(ctx.ledgerDir)));
  const viewsRel = slashed(relative(realTop, dirname(realOr(ctx.ledgerDir))));
  const own = (p: string) => {
    if (ledgerRel && !ledgerRel.startsWith('..') && (p === ledgerRel || p === ledgerRel + '/' || p.startsWith(ledgerRel + '/'))) return true;
    const inViews = viewsRel === '' ? p : p.startsWith(viewsRel + '/') ? p.slice(viewsRel.length + 1) : null;
    return inViews === 'HANDOFF.md' || inViews === 'HANDOFF.yml';
  };
  const skipped = found.skipped.filter((p) => !own(p.replace(/ \([^)]*\)$/, '')));
  if (skipped.length) return hold(actual, `git was told not to look at part of the work tree of commit ${oid.slice(0, 12)}: ${list(skipped)}; the gate cannot call it clean`);
  const changed = found.changed.filter((p) => p !== '' && !own(p));
  if (changed.length) return hold(actual, `the work tree of commit ${oid.slice(0, 12)} has uncommitted changes: ${list(changed)}`);
  return { ...base, actual, current: true, reason: `commit ${oid.slice(0, 12)} is checked out and the work tree is clean` };
}
