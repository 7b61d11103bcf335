// Evidence digests (SPEC 6, SPEC 10): every SOURCE form is digested *now*, and can be digested
// again later to tell whether the state it names is still current (the gate's "state current").
//
// Forms, and what is recorded as `source`:
//   sha256:HEX   a digest the caller already has; recorded as given, cannot be re-checked
//   file:PATH    the bytes of a regular file (symlinks to files are followed)
//   dir:PATH     a directory tree, digested by the dir/v1 format below
//   git:REV      a commit in the git repository that holds the project root
//   PATH         a bare path: recorded as file:PATH or dir:PATH by what it is now
//
// Policy: relative paths are resolved against the project root (the folder that holds the ledger
// directory) and recorded relative to it, so a later check from another working directory reads
// the same thing. A path outside the project root is recorded absolute.
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DIGEST_RE, digestOf, sha256Hex } from '../canonical.js';
import { LedgerError } from '../errors.js';
import type { Evidence } from '../record.js';

export interface EvidenceContext {
  /** The folder that holds the ledger directory; relative sources resolve against it. */
  root: string;
  /** The ledger directory itself, skipped inside `dir:` digests. */
  ledgerDir: string;
  /** Where the command was run; relative paths on the command line are resolved against it. */
  cwd?: string;
}

// node:child_process is loaded only when git: evidence is digested: most commands never need it,
// and every command pays for what it loads.
let childProcess: typeof import('node:child_process') | null = null;
/** Runs a command and returns its stdout as text (throws when it exits non-zero). */
function execText(cmd: string, args: string[], opts: { cwd: string; maxBuffer?: number }): string {
  childProcess ??= createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  return childProcess.execFileSync(cmd, args, { ...opts, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

function badEvidence(message: string, source: string): LedgerError {
  return new LedgerError('INPUT_EVIDENCE', message, { source });
}

/** SHA-256 of everything readable from an open file, read in 1 MiB chunks, and its length. */
export function hashOpenFile(fd: number): { hex: string; bytes: number } {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(1 << 20);
  let bytes = 0;
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    bytes += n;
  }
  return { hex: hash.digest('hex'), bytes };
}

function fileSha256Hex(path: string): string {
  const fd = openSync(path, 'r');
  try {
    return hashOpenFile(fd).hex;
  } finally {
    closeSync(fd);
  }
}

/**
 * dir/v1: SHA-256 over "handoff-ledger/dir/v1\n" followed by one line per entry, sorted by the
 * entry's path relative to the directory ('/'-separated, compared as UTF-8 bytes):
 *   "f <sha256 hex of the file's bytes> <path>\n"     for a regular file
 *   "l <sha256 hex of the link's target text> <path>\n" for a symbolic link
 * Policy: symbolic links are recorded, never followed, so a digest cannot escape the tree or
 * loop, and retargeting a link changes the digest. Directories themselves, empty ones included,
 * add no line; `.git` and the ledger directory are skipped; other entry types are refused.
 */
export function dirDigest(dir: string, skip: readonly string[] = []): string {
  const entries: string[] = [];
  const skipAbs = new Set(skip.map((s) => resolve(s)));
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs)) {
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      if (name === '.git' || skipAbs.has(childAbs)) continue;
      const st = lstatSync(childAbs);
      if (st.isSymbolicLink()) entries.push(`l ${sha256Hex(readlinkSync(childAbs))} ${childRel}\n`);
      else if (st.isFile()) entries.push(`f ${fileSha256Hex(childAbs)} ${childRel}\n`);
      else if (st.isDirectory()) walk(childAbs, childRel);
      else throw badEvidence(`dir evidence ${childAbs} is neither a file, a directory nor a symlink`, childAbs);
    }
  };
  walk(dir, '');
  const byPath = (line: string) => Buffer.from(line.slice(line.indexOf(' ', 2) + 1));
  entries.sort((a, b) => Buffer.compare(byPath(a), byPath(b)));
  return digestOf('handoff-ledger/dir/v1\n' + entries.join(''));
}

/** git/v1: SHA-256 of "handoff-ledger/git/v1 <commit oid>". */
export function gitCommitDigest(oid: string): string {
  return digestOf(`handoff-ledger/git/v1 ${oid}`);
}

export function resolveGitRev(rev: string, root: string): string {
  if (!rev || rev.startsWith('-')) throw badEvidence(`git evidence needs a revision, got "${rev}"`, `git:${rev}`);
  try {
    return execText('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: root }).trim();
  } catch {
    throw badEvidence(`git:${rev} does not name a commit in the repository at ${root}`, `git:${rev}`);
  }
}

function recordedPath(abs: string, root: string): string {
  const rel = relative(root, abs);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) return abs;
  return rel.split(sep).join('/');
}

/** Digests one SOURCE now; returns the evidence entry to record. Throws INPUT_EVIDENCE. */
export function digestSource(source: string, ctx: EvidenceContext): Evidence {
  if (source.length === 0 || source.length > 1024) throw badEvidence(`evidence source must be 1-1024 chars, got ${source.length}`, source);
  if (source.startsWith('sha256:')) {
    if (!DIGEST_RE.test(source)) throw badEvidence(`"${source}" is not "sha256:" + 64 lowercase hex`, source);
    return { digest: source, source };
  }
  if (source.startsWith('git:')) {
    const oid = resolveGitRev(source.slice(4), ctx.root);
    return { digest: gitCommitDigest(oid), source };
  }
  let form: 'file' | 'dir' | 'path' = 'path';
  let p = source;
  if (source.startsWith('file:')) [form, p] = ['file', source.slice(5)];
  else if (source.startsWith('dir:')) [form, p] = ['dir', source.slice(4)];
  if (!p) throw badEvidence(`evidence "${source}" names no path`, source);
  const abs = resolve(ctx.cwd ?? ctx.root, p);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw badEvidence(`evidence ${source}: no such file or directory (${abs})`, source);
  }
  if (st.isFile() && form !== 'dir') return { digest: 'sha256:' + fileSha256Hex(abs), source: `file:${recordedPath(abs, ctx.root)}` };
  if (st.isDirectory() && form !== 'file') return { digest: dirDigest(abs, [ctx.ledgerDir]), source: `dir:${recordedPath(abs, ctx.root)}` };
  throw badEvidence(`evidence ${source}: ${abs} is ${st.isDirectory() ? 'a directory (use dir:)' : st.isFile() ? 'a file (use file:)' : 'not a regular file or directory'}`, source);
}

/**
 * Digests a recorded source again, now, from the project root. Returns the digest, or null when
 * the source cannot be re-checked (a bare sha256:) — a caller that must decide treats null as
 * "cannot tell" and fails closed. Throws INPUT_EVIDENCE when the thing is gone.
 */
export function redigestSource(source: string, ctx: EvidenceContext): string | null {
  if (source.startsWith('sha256:')) return null;
  return digestSource(source, { ...ctx, cwd: ctx.root }).digest;
}

// ---------------------------------------------------------------------------------------------
// Currency: is the state a piece of evidence named still the state now? (SPEC 9, term 4)
//
//   file:PATH, dir:PATH, PATH  the bytes (or the dir/v1 tree) digest the same now
//   git:REV                    REV still names the recorded commit, that commit is checked out
//                              (HEAD), and the work tree is clean: no staged, unstaged or
//                              untracked (non-ignored) change anywhere in the repository, except
//                              inside the ledger directory and the HANDOFF.md / HANDOFF.yml views
//                              beside it, which the ledger itself writes
//   sha256:HEX                 names no thing that can be read again: not current unless the
//                              consumer says opaque digests are acceptable (allowOpaque)

export interface EvidenceCheck {
  name: string;
  source: string;
  recorded: string;
  /** The digest now, when it could be computed. */
  actual: string | null;
  current: boolean;
  /** One line: why it is or is not current. */
  reason: string;
}

export interface CurrencyOptions {
  /** Count bare sha256: evidence as current (it names content, not a place). Default false. */
  allowOpaque?: boolean;
}

function git(args: string[], cwd: string): string {
  return execText('git', args, { cwd, maxBuffer: 64 << 20 });
}

/** Paths with changes in the work tree (porcelain v1 -z), relative to the repository's top. */
function dirtyPaths(cwd: string): string[] {
  const out = git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none'], cwd);
  const fields = out.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    paths.push(f.slice(3));
    // A rename or copy is followed by its original path, which is not an entry of its own.
    if (f[0] === 'R' || f[0] === 'C') paths.push(fields[++i] ?? '');
  }
  return paths;
}

function gitCurrency(name: string, ev: Evidence, ctx: EvidenceContext): EvidenceCheck {
  const base = { name, source: ev.source, recorded: ev.digest };
  const rev = ev.source.slice(4);
  let oid: string;
  try {
    oid = resolveGitRev(rev, ctx.root);
  } catch {
    return { ...base, actual: null, current: false, reason: `${ev.source} no longer names a commit in the repository at ${ctx.root}` };
  }
  const actual = gitCommitDigest(oid);
  if (actual !== ev.digest) return { ...base, actual, current: false, reason: `${ev.source} now names commit ${oid.slice(0, 12)}, not the recorded one` };
  let top: string;
  let headOid: string;
  try {
    [top, headOid] = git(['rev-parse', '--show-toplevel', 'HEAD'], ctx.root).trim().split('\n');
  } catch {
    return { ...base, actual, current: false, reason: `cannot read the checked-out commit of the repository at ${ctx.root}` };
  }
  if (headOid !== oid) return { ...base, actual, current: false, reason: `${ev.source} is commit ${oid.slice(0, 12)} but the work tree has ${headOid.slice(0, 12)} checked out` };
  let dirty: string[];
  try {
    dirty = dirtyPaths(ctx.root);
  } catch {
    return { ...base, actual, current: false, reason: `cannot read the status of the work tree at ${top}` };
  }
  // Policy: what the ledger writes itself (its directory and its two views) does not count as a
  // change to the state the commit names; everything else does, untracked files included.
  let realTop = top;
  let realLedger = resolve(ctx.ledgerDir);
  try {
    realTop = realpathSync(top);
    realLedger = realpathSync(ctx.ledgerDir);
  } catch {
    /* compare as given */
  }
  const ledgerRel = relative(realTop, realLedger).split(sep).join('/');
  const viewsRel = relative(realTop, dirname(realLedger)).split(sep).join('/');
  const own = (p: string) => {
    if (ledgerRel && !ledgerRel.startsWith('..') && (p === ledgerRel || p.startsWith(ledgerRel + '/'))) return true;
    const inViews = viewsRel === '' ? p : p.startsWith(viewsRel + '/') ? p.slice(viewsRel.length + 1) : null;
    return inViews === 'HANDOFF.md' || inViews === 'HANDOFF.yml';
  };
  const changed = dirty.filter((p) => p !== '' && !own(p));
  if (changed.length) {
    const shown = changed.slice(0, 3).join(', ');
    return { ...base, actual, current: false, reason: `the work tree of commit ${oid.slice(0, 12)} has uncommitted changes: ${shown}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''}` };
  }
  return { ...base, actual, current: true, reason: `commit ${oid.slice(0, 12)} is checked out and the work tree is clean` };
}

/** Whether one recorded piece of evidence is still current, recomputed now. Never throws. */
export function checkEvidence(name: string, ev: Evidence, ctx: EvidenceContext, opts: CurrencyOptions = {}): EvidenceCheck {
  const base = { name, source: ev.source, recorded: ev.digest };
  if (ev.source.startsWith('sha256:')) {
    // Policy: fail closed. An opaque digest proves what was produced, not that it is still so.
    if (opts.allowOpaque) return { ...base, actual: null, current: true, reason: `${name} is an opaque digest, accepted as given (--allow-opaque-evidence)` };
    return { ...base, actual: null, current: false, reason: `${name} is an opaque digest (${ev.source.slice(0, 19)}…) that cannot be recomputed; pass --allow-opaque-evidence to accept it` };
  }
  if (ev.source.startsWith('git:')) return gitCurrency(name, ev, ctx);
  let actual: string;
  try {
    actual = digestSource(ev.source, { ...ctx, cwd: ctx.root }).digest;
  } catch (e) {
    return { ...base, actual: null, current: false, reason: `${ev.source} cannot be digested now: ${(e as Error).message}` };
  }
  if (actual !== ev.digest) return { ...base, actual, current: false, reason: `${ev.source} has changed: it digests to ${actual.slice(0, 19)}…, the handoff recorded ${ev.digest.slice(0, 19)}…` };
  return { ...base, actual, current: true, reason: `${ev.source} is unchanged` };
}
