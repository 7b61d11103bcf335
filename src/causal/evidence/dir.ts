// dir: evidence, a directory tree digested as one value (docs/formats.md "Evidence sources").
//
// dir/v2, written by every new record (recorded source `dir/v2:PATH`), is a byte stream that
// parses back into exactly one tree, whatever bytes the names hold (newlines, non-UTF-8):
//
//   "handoff-ledger/dir/v2\n"
//   then per entry, sorted by the raw bytes of its path (names joined with "/", relative to PATH):
//     u32be(path length) path tag payload
//       tag "d" a directory                    payload: none
//       tag "f" a regular file                 payload: the 32-byte SHA-256 of its bytes
//       tag "x" a regular file, owner may exec payload: the 32-byte SHA-256 of its bytes
//       tag "l" a symbolic link                payload: u32be(target length) target (raw bytes)
//   digest = "sha256:" + SHA-256 of the stream
//
// The tag fixes the payload's length, so the stream has one parse: two different trees (as far
// as the format sees them: names, kinds, contents, link targets, the owner-execute bit) never
// share a digest unless SHA-256 collides. Directories are entries, so an empty one counts.
//
// dir/v3 (recorded source `dir/v3:PATH`), written for a directory inside a git work tree: the
// same entries as v2, less the untracked paths the work tree's `.gitignore` files ignore (a
// `__pycache__/` or `node_modules/` a test run writes), after a header that records those rules:
//
//   "handoff-ledger/dir/v3\n"
//   per `.gitignore` above the tree, from the project root (or the work tree's top, if lower)
//   down to the tree's parent, that exists: an entry as below, its path relative to the root
//   u32be(0xffffffff)
//   then the entries, as v2, sorted the same way
//
// A `.gitignore` inside the tree is an entry and never left out on its own, so every rule that
// left a path out is in the digest. Outside a work tree a new record is dir/v2, as before.
//
// dir/v1 (recorded source `dir:PATH`, records written before v2) is only recomputed, never
// written: a line per file or link, "f|l <hex> <path>\n". A name holding a newline could forge
// lines (issue 13 finding 6), and a name that is not UTF-8 was read lossily, so two trees could
// share a digest. Policy: v1 is still recomputed, exactly as it was, for a tree where it is
// unambiguous; a tree with such a name (or a link target that is not UTF-8) is refused ("old
// format, digest it again"), so an old handoff keeps working and cannot be fooled that way.
//
// Both: links are recorded, never followed (a digest cannot leave the tree or loop); entries
// named `.git` are skipped at any depth; the ledger's own paths (its directory and views) are
// skipped; a FIFO, socket or device is refused, never opened; and a tree that changes while it
// is read (a name listed and then gone, a file replaced or written to, a directory whose
// listing differs when read again at the end) is refused as "changed while digesting".
import { isUtf8 } from 'node:buffer';
import { nodeCrypto } from '../../node-crypto.js';
import type { Stats } from 'node:fs';
import { digestOf, sha256Hex } from '../../canonical.js';
import { regularFileSha256 } from './file.js';
import { badEvidence, changedWhileDigesting, errnoOf, kindOf, shown, type EvidenceReadOps } from './read-ops.js';

export type DirFormat = 'v1' | 'v2' | 'v3';

/** What dir/v3 leaves out, and the rules that said so (evidence/git-ignored.ts). */
export interface V3Rules {
  /** Paths git ignores, relative to the tree, raw bytes; a directory ends in "/". */
  ignored: readonly Buffer[];
  /** The `.gitignore` files above the tree (inside the project root), nearest last: path relative to the root, and where it is. */
  above: readonly { rel: Buffer; abs: Buffer }[];
}

const SLASH = Buffer.from('/');
const DOT_GIT = Buffer.from('.git');

interface Walked {
  rel: Buffer;
  st: Stats;
  /** file: hex of the bytes; link: the raw target. */
  hex?: string;
  target?: Buffer;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** Lists and reads the tree under `top` (a real path, a directory), the skipped paths left out. */
function walkTree(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string, check: (name: Buffer, rel: Buffer) => void, leaveOut?: (name: Buffer, rel: Buffer, st: Stats) => boolean): Walked[] {
  const topBuf = Buffer.from(top);
  const lstatTop = () => {
    try {
      return ops.lstat(topBuf);
    } catch (e) {
      throw changedWhileDigesting(source, `the directory went away (${errnoOf(e) ?? 'error'})`);
    }
  };
  const topSt = lstatTop();
  const skipBufs = skip.map((s) => Buffer.from(s));
  const out: Walked[] = [];
  const listings: { abs: Buffer; names: Buffer[] }[] = [];
  const list = (abs: Buffer): Buffer[] => {
    try {
      return ops.readdir(abs).sort(Buffer.compare);
    } catch (e) {
      const code = errnoOf(e);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw changedWhileDigesting(source, `the directory ${shown(abs)} went away`);
      throw badEvidence(`evidence ${source}: cannot list ${shown(abs)} (${code ?? 'error'})`, source);
    }
  };
  // An explicit stack, not recursion: a deep tree cannot overflow the call stack.
  const stack: { abs: Buffer; rel: Buffer | null }[] = [{ abs: topBuf, rel: null }];
  while (stack.length) {
    const { abs, rel } = stack.pop()!;
    const names = list(abs);
    listings.push({ abs, names });
    for (const name of names) {
      if (name.equals(DOT_GIT)) continue;
      const childAbs = Buffer.concat([abs, SLASH, name]);
      if (skipBufs.some((s) => s.equals(childAbs))) continue;
      const childRel = rel ? Buffer.concat([rel, SLASH, name]) : name;
      check(name, childRel);
      let st: Stats;
      try {
        st = ops.lstat(childAbs);
      } catch (e) {
        const code = errnoOf(e);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw changedWhileDigesting(source, `${shown(childRel)} was listed and then gone`);
        throw badEvidence(`evidence ${source}: cannot look at ${shown(childRel)} (${code ?? 'error'})`, source);
      }
      if (leaveOut?.(name, childRel, st)) continue;
      if (st.isSymbolicLink()) {
        let target: Buffer;
        try {
          target = ops.readlink(childAbs);
        } catch (e) {
          const code = errnoOf(e);
          if (code === 'ENOENT' || code === 'EINVAL') throw changedWhileDigesting(source, `the link ${shown(childRel)} was replaced`);
          throw badEvidence(`evidence ${source}: cannot read the link ${shown(childRel)} (${code ?? 'error'})`, source);
        }
        out.push({ rel: childRel, st, target });
      } else if (st.isFile()) {
        out.push({ rel: childRel, st, hex: regularFileSha256(ops, childAbs, st, source) });
      } else if (st.isDirectory()) {
        out.push({ rel: childRel, st });
        stack.push({ abs: childAbs, rel: childRel });
      } else {
        throw badEvidence(`evidence ${source}: ${shown(childRel)} is ${kindOf(st)}; a dir: tree may hold only files, directories and symbolic links`, source);
      }
    }
  }
  // Read again at the end: a name added or removed behind the walk, or the top replaced, is a
  // change while digesting, not a digest of a tree that never existed.
  for (const { abs, names } of listings) {
    const again = list(abs);
    if (again.length !== names.length || again.some((n, i) => !n.equals(names[i]))) throw changedWhileDigesting(source, `the listing of ${shown(abs)} changed`);
  }
  const topAgain = lstatTop();
  if (topAgain.ino !== topSt.ino || topAgain.dev !== topSt.dev) throw changedWhileDigesting(source, 'the directory was replaced');
  return out;
}

/** The bytes of one entry in the v2/v3 stream (see the top of this file). */
function entryBytes(e: Walked): Buffer {
  const parts = [u32(e.rel.length), e.rel];
  if (e.target) parts.push(Buffer.from('l'), u32(e.target.length), e.target);
  else if (e.hex) parts.push(Buffer.from(e.st.mode & 0o100 ? 'x' : 'f'), Buffer.from(e.hex, 'hex'));
  else parts.push(Buffer.from('d'));
  return Buffer.concat(parts);
}

/** A digest and, on request, the stream it hashes (the manifest kept beside a record, manifest.ts). */
export interface DirDigest { digest: string; stream?: Buffer }

function streamDigest(header: Buffer[], entries: Walked[], keep: boolean): DirDigest {
  entries.sort((a, b) => Buffer.compare(a.rel, b.rel));
  const hash = nodeCrypto().createHash('sha256');
  const kept: Buffer[] = [];
  const put = (b: Buffer) => {
    hash.update(b);
    if (keep) kept.push(b);
  };
  for (const h of header) put(h);
  for (const e of entries) put(entryBytes(e));
  return { digest: 'sha256:' + hash.digest('hex'), ...(keep ? { stream: Buffer.concat(kept) } : {}) };
}

/** dir/v2 of the tree at `top` (a real path). Throws INPUT_EVIDENCE. */
export function dirDigestV2(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string, keep = false): DirDigest {
  return streamDigest([Buffer.from(V2_HEADER)], walkTree(ops, top, skip, source, () => {}), keep);
}

export const V2_HEADER = 'handoff-ledger/dir/v2\n';
export const V3_HEADER = 'handoff-ledger/dir/v3\n';
const GITIGNORE = Buffer.from('.gitignore');

/**
 * dir/v3 of the tree at `top`: dir/v2's entries, less what git ignores, after a header that
 * records the rule: the `.gitignore` files above the tree (inside the project root), each as an
 * entry (path relative to the root, "f" + SHA-256, or "l" + target), then u32be(0xffffffff).
 * The `.gitignore` files inside the tree are entries of the tree and are never left out (alone:
 * a whole ignored directory goes with its own), so the rules that left something out are in the
 * digest, and changing them changes it.
 */
export function dirDigestV3(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string, rules: V3Rules, keep = false): DirDigest {
  const header: Buffer[] = [Buffer.from(V3_HEADER)];
  for (const g of rules.above) {
    let st: Stats;
    try {
      st = ops.lstat(g.abs);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') continue;
      throw badEvidence(`evidence ${source}: cannot look at ${shown(g.rel)} (${errnoOf(e) ?? 'error'})`, source);
    }
    if (st.isSymbolicLink()) header.push(entryBytes({ rel: g.rel, st, target: ops.readlink(g.abs) }));
    else if (st.isFile()) header.push(entryBytes({ rel: g.rel, st, hex: regularFileSha256(ops, g.abs, st, source) }));
    else throw badEvidence(`evidence ${source}: ${shown(g.rel)} is ${kindOf(st)}, not a .gitignore file`, source);
  }
  header.push(u32(0xffffffff));
  // Policy: a named directory that git ignores as a whole ("./") leaves nothing out: the caller
  // named it, so all of it is the evidence.
  const whole = rules.ignored.some((p) => p.equals(DOT_SLASH));
  const out = new Set(whole ? [] : rules.ignored.map((p) => p.toString('latin1')));
  const leaveOut = (name: Buffer, rel: Buffer, st: Stats) => {
    if (st.isDirectory()) return out.has(rel.toString('latin1') + '/');
    return !name.equals(GITIGNORE) && out.has(rel.toString('latin1'));
  };
  return streamDigest(header, walkTree(ops, top, skip, source, () => {}, leaveOut), keep);
}
const DOT_SLASH = Buffer.from('./');

/** dir/v1 of the tree at `top`, recomputed as it always was, or refused where it is ambiguous. */
export function dirDigestV1(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string): string {
  const old = (what: string) => badEvidence(`evidence ${source} is in the old dir/v1 format, which cannot tell this tree apart (${what}); append a new handoff to digest it with dir/v2`, source, { format: 'v1' });
  const entries = walkTree(ops, top, skip, source, (name, rel) => {
    if (name.includes(0x0a)) throw old(`a name holds a newline: ${JSON.stringify(shown(rel))}`);
    if (!isUtf8(name)) throw old(`a name is not UTF-8: ${JSON.stringify(shown(rel))}`);
  });
  const lines: string[] = [];
  for (const e of entries) {
    const rel = e.rel.toString('utf8');
    if (e.target) {
      if (!isUtf8(e.target)) throw old(`the link ${JSON.stringify(rel)} has a target that is not UTF-8`);
      lines.push(`l ${sha256Hex(e.target.toString('utf8'))} ${rel}\n`);
    } else if (e.hex) lines.push(`f ${e.hex} ${rel}\n`);
    // v1: directories add no line.
  }
  // v1 sorted by the bytes of "<path>\n", exactly as it did.
  const key = (line: string) => Buffer.from(line.slice(line.indexOf(' ', 2) + 1));
  lines.sort((a, b) => Buffer.compare(key(a), key(b)));
  return digestOf('handoff-ledger/dir/v1\n' + lines.join(''));
}

export function dirDigestAs(format: DirFormat, ops: EvidenceReadOps, top: string, skip: readonly string[], source: string, rules: V3Rules | null, keep = false): DirDigest {
  if (format === 'v3') {
    if (!rules) throw badEvidence(`evidence ${source} is dir/v3, which leaves out what git ignores, but ${shown(top)} is not in a git work tree now`, source);
    return dirDigestV3(ops, top, skip, source, rules, keep);
  }
  return format === 'v2' ? dirDigestV2(ops, top, skip, source, keep) : { digest: dirDigestV1(ops, top, skip, source) };
}
