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
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { digestOf, sha256Hex } from '../../canonical.js';
import { regularFileSha256 } from './file.js';
import { badEvidence, changedWhileDigesting, errnoOf, kindOf, shown, type EvidenceReadOps } from './read-ops.js';

export type DirFormat = 'v1' | 'v2';

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
function walkTree(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string, check: (name: Buffer, rel: Buffer) => void): Walked[] {
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

/** dir/v2 of the tree at `top` (a real path). Throws INPUT_EVIDENCE. */
export function dirDigestV2(ops: EvidenceReadOps, top: string, skip: readonly string[], source: string): string {
  const entries = walkTree(ops, top, skip, source, () => {});
  entries.sort((a, b) => Buffer.compare(a.rel, b.rel));
  const hash = createHash('sha256');
  hash.update('handoff-ledger/dir/v2\n');
  for (const e of entries) {
    hash.update(u32(e.rel.length));
    hash.update(e.rel);
    if (e.target) {
      hash.update('l');
      hash.update(u32(e.target.length));
      hash.update(e.target);
    } else if (e.hex) {
      hash.update(e.st.mode & 0o100 ? 'x' : 'f');
      hash.update(Buffer.from(e.hex, 'hex'));
    } else {
      hash.update('d');
    }
  }
  return 'sha256:' + hash.digest('hex');
}

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

export function dirDigestAs(format: DirFormat, ops: EvidenceReadOps, top: string, skip: readonly string[], source: string): string {
  return format === 'v2' ? dirDigestV2(ops, top, skip, source) : dirDigestV1(ops, top, skip, source);
}
