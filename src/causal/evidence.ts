// Evidence digests (SPEC 6, SPEC 9): every SOURCE form is digested *now*, and can be digested
// again later to tell whether the state it names is still current (the gate's "state current").
// This file is the way in: it tells the forms apart; evidence/ holds one module per kind (see its
// README).
//
// Forms given on the command line, and what is recorded as `source`:
//   sha256:HEX          a digest the caller already has; recorded as given, cannot be re-checked
//   file:PATH           the bytes of a regular file (a link inside the root is followed)
//   dir:PATH            a directory tree: inside a git work tree digested by dir/v3 (what git
//                       ignores left out), recorded as dir/v3:PATH; elsewhere by dir/v2
//   dir/v2:PATH         a dir/v2 digest, as recorded
//   dir/v3:PATH         a dir/v3 digest, as recorded
//   git:REV             a commit in the git repository that holds the project root
//   PATH                a bare path: recorded as file:PATH or dir/v2:PATH by what it is now
// A recorded `dir:PATH` (or a bare directory path) is an old dir/v1 digest: recomputed as v1.
//
// Policy: paths are resolved against the working directory (on the command line) or the project
// root (recorded ones), must lie inside the project root (evidence/inside-root.ts), and are
// recorded relative to it, so a later check from another working directory reads the same thing.
import { realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { DIGEST_RE } from '../canonical.js';
import { LedgerError } from '../errors.js';
import { charCount, isTextOf, type Evidence } from '../record.js';
import { dirDigestAs, dirDigestV2, type DirFormat, type V3Rules } from './evidence/dir.js';
import { gitIgnoredUnder } from './evidence/git-ignored.js';
import { firstDifference, type KeptManifests } from './evidence/manifest.js';
import { regularFileSha256 } from './evidence/file.js';
import { gitCommitDigest, gitCurrency, resolveGitRev } from './evidence/git.js';
import { isOwnPath, ledgerOwnPaths, locateInsideRoot } from './evidence/inside-root.js';
import { badEvidence, kindOf, realEvidenceOps } from './evidence/read-ops.js';
import type { CurrencyOptions, EvidenceCheck, EvidenceContext } from './evidence/types.js';

export type { CurrencyOptions, EvidenceCheck, EvidenceContext } from './evidence/types.js';
export type { EvidenceReadOps } from './evidence/read-ops.js';
export { hashOpenFile } from './evidence/file.js';
export { gitCommitDigest, resolveGitRev } from './evidence/git.js';

type PathForm = 'file' | 'dir' | 'path';

/** The path forms, longest prefix first (`dir/v2:` before `dir:`). */
const PATH_FORMS: readonly { prefix: string; form: PathForm; dir: DirFormat }[] = [
  { prefix: 'file:', form: 'file', dir: 'v2' },
  { prefix: 'dir/v2:', form: 'dir', dir: 'v2' },
  { prefix: 'dir/v3:', form: 'dir', dir: 'v3' },
  { prefix: 'dir:', form: 'dir', dir: 'v1' },
];

/**
 * The v3 rules for the directory `real` (a real path inside the project root), or null when it
 * is not in a git work tree. `required`: a recorded v3 digest, where git failing is a refusal.
 */
function v3Rules(real: string, root: string, source: string): V3Rules | null {
  const answer = gitIgnoredUnder(real);
  if (answer.kind === 'failed') throw badEvidence(`evidence ${source}: cannot ask git what it ignores: ${answer.why}`, source);
  if (answer.kind === 'none') return null;
  let realRoot: string;
  let top: string;
  try {
    realRoot = realpathSync(root);
    top = realpathSync(answer.tree.top);
  } catch {
    throw badEvidence(`evidence ${source}: cannot resolve the git work tree ${answer.tree.top}`, source);
  }
  // Policy: the rules above the tree are read from the project root down (or from the work
  // tree's top, when it is lower); a .gitignore above the root is git's to apply but is never
  // read here (SPEC 9: nothing outside the root is read).
  const within = (outer: string, inner: string) => inner === outer || inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);
  const start = within(realRoot, top) ? top : realRoot;
  const above: V3Rules['above'][number][] = [];
  if (within(start, real)) {
    const steps = real === start ? [] : real.slice(start.length + (start.endsWith(sep) ? 0 : 1)).split(sep);
    let dir = start;
    for (let i = 0; i < steps.length; i++) {
      const abs = join(dir, '.gitignore');
      above.push({ rel: Buffer.from(relative(realRoot, abs).split(sep).join('/')), abs: Buffer.from(abs) });
      dir = join(dir, steps[i]);
    }
  }
  return { ignored: answer.tree.ignored, above };
}

/** Digests the path a source names; `dirFormat` is the dir/ format a directory is digested by (null: v3 in a work tree, else v2). */
function digestPath(source: string, ctx: EvidenceContext, base: string, dirFormat: (named: DirFormat) => DirFormat | null, keep = false): Evidence & { stream?: Buffer } {
  const found = PATH_FORMS.find((f) => source.startsWith(f.prefix));
  const form: PathForm = found?.form ?? 'path';
  const p = found ? source.slice(found.prefix.length) : source;
  if (!p) throw badEvidence(`evidence "${source}" names no path`, source);
  const ops = ctx.ops ?? realEvidenceOps;
  const at = locateInsideRoot(ops, p, base, ctx.root, source);
  const { own } = ledgerOwnPaths(ctx.root, ctx.ledgerDir);
  if (isOwnPath(at.real, own)) throw badEvidence(`evidence ${source} names the ledger's own files (its directory or HANDOFF.md/HANDOFF.yml), which change with every write`, source);
  if (at.st.isFile() && form !== 'dir') return { digest: 'sha256:' + regularFileSha256(ops, Buffer.from(at.real), at.st, source), source: `file:${at.recorded}` };
  if (at.st.isDirectory() && form !== 'file') {
    const asked = dirFormat(found?.dir ?? 'v1');
    const rules = asked === null || asked === 'v3' ? v3Rules(at.real, ctx.root, source) : null;
    const fmt: DirFormat = asked ?? (rules && !rules.ignored.some((b) => b.toString('latin1') === './') ? 'v3' : 'v2');
    const skip = fmt === 'v1' ? [own[0]] : own; // v1 skipped only the ledger directory
    const { digest, stream } = dirDigestAs(fmt, ops, at.real, skip, source, rules, keep);
    const prefix = fmt === 'v1' ? 'dir' : `dir/${fmt}`;
    return { digest, source: `${prefix}:${at.recorded}`, ...(stream ? { stream } : {}) };
  }
  const what = at.st.isDirectory() ? 'a directory (use dir:)' : at.st.isFile() ? 'a file (use file:)' : `${kindOf(at.st)}, not a regular file or directory`;
  throw badEvidence(`evidence ${source} is ${what}`, source);
}

/** Digests one SOURCE now, as given on the command line; returns the entry to record. Throws INPUT_EVIDENCE. */
export function digestSource(source: string, ctx: EvidenceContext, keep?: (digest: string, stream: Buffer) => void): Evidence {
  if (!isTextOf(source, 1, 1024)) throw badEvidence(`evidence source must be 1-1024 characters, got ${charCount(source)}`, source);
  if (source.startsWith('sha256:')) {
    if (!DIGEST_RE.test(source)) throw badEvidence(`"${source}" is not "sha256:" + 64 lowercase hex`, source);
    return { digest: source, source };
  }
  if (source.startsWith('git:')) return { digest: gitCommitDigest(resolveGitRev(source.slice(4), ctx.root)), source };
  // Every new directory digest is dir/v3 inside a git work tree, dir/v2 elsewhere, whatever form
  // named it; with `keep`, the stream it hashed is handed over (kept as the manifest that lets a
  // later hold name the first path that differs: evidence/manifest.ts).
  const { stream, ...ev } = digestPath(source, ctx, ctx.cwd ?? ctx.root, () => null, keep !== undefined);
  if (stream && keep) keep(ev.digest, stream);
  return ev;
}

/**
 * Digests a recorded source again, now, from the project root, by the format it was recorded
 * with. Returns the digest, or null when the source cannot be re-checked (a bare sha256:) — a
 * caller that must decide treats null as "cannot tell" and fails closed. Throws INPUT_EVIDENCE.
 */
export function redigestSource(source: string, ctx: EvidenceContext): string | null {
  if (source.startsWith('sha256:')) return null;
  if (source.startsWith('git:')) return gitCommitDigest(resolveGitRev(source.slice(4), ctx.root));
  return digestPath(source, ctx, ctx.root, (named) => named).digest;
}

/** dir/v2 of a directory (the library's primitive): the paths in `skip` are left out. */
export function dirDigest(dir: string, skip: readonly string[] = []): string {
  const real = realpathSync(dir);
  const skipReal = skip.map((s) => {
    try {
      return realpathSync(s);
    } catch {
      return s;
    }
  });
  return dirDigestV2(realEvidenceOps, real, skipReal, `dir/v2:${dir}`).digest;
}

// ---------------------------------------------------------------------------------------------
// Currency: is the state a piece of evidence named still the state now? (SPEC 9, term 4)
//
//   file:, dir/v2:, dir:, PATH  the bytes (or the tree, by its recorded format) digest the same now
//   git:REV                     see evidence/git.ts: the commit is checked out, git was told to
//                               skip nothing, and the work tree is clean outside the ledger's own
//                               paths
//   sha256:HEX                  names no thing that can be read again: not current unless the
//                               consumer says opaque digests are acceptable (allowOpaque)

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
    const now = digestPath(ev.source, ctx, ctx.root, (named) => named, ctx.manifests !== undefined);
    actual = now.digest;
    if (actual !== ev.digest && now.stream && ctx.manifests) {
      const diff = firstDifference(ctx.manifests, ev.digest, now.stream);
      if (diff) return { ...base, actual, current: false, reason: `${ev.source} has changed: ${diff} (it digests to ${actual.slice(0, 19)}…, the handoff recorded ${ev.digest.slice(0, 19)}…)` };
    }
  } catch (e) {
    // Policy: whatever stops the digest (outside the root, not a regular file, a tree that moved
    // under it, even a bug) holds; the record's source is named, the thing is not read further.
    const data = e instanceof LedgerError ? e.data : {};
    const why = data.outside ? 'names a path outside the project root and is not read' : `cannot be digested now: ${(e as Error).message}`;
    return { ...base, actual: null, current: false, reason: `${ev.source} ${why}` };
  }
  if (actual !== ev.digest) return { ...base, actual, current: false, reason: `${ev.source} has changed: it digests to ${actual.slice(0, 19)}…, the handoff recorded ${ev.digest.slice(0, 19)}…` };
  return { ...base, actual, current: true, reason: `${ev.source} is unchanged` };
}
