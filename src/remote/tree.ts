// The SPEC 11 tree of one publication, built and read with git's plumbing:
//
//   HEAD                         the HEAD line of SPEC 5, covering every record in the tree
//   records/SSSSSS/NNNNNNNNNNNN  one blob per record: exactly its line; NNNNNNNNNNNN is the seq
//                                in 12 digits, SSSSSS floor(seq / 1000) in 6
//
// A commit's records are its parent's plus new ones, so building one touches only the shard
// trees that gain a record, the records tree and the root: `hash-object -w --stdin` per new
// blob (`fast-import` for many), `mktree` per changed tree, `commit-tree` with exactly one parent (none for genesis).
import { createHash } from 'node:crypto';
import { LedgerError } from '../errors.js';
import { gitOk, runGit } from './git.js';

export const SHARD = 1000;

export const shardName = (seq: number): string => String(Math.floor(seq / SHARD)).padStart(6, '0');
export const recordName = (seq: number): string => String(seq).padStart(12, '0');
/** The path of seq's blob in a publication's tree. */
export const recordPath = (seq: number): string => `records/${shardName(seq)}/${recordName(seq)}`;

interface TreeEntry { mode: string; type: string; oid: string; name: string }

function lsTree(gitDir: string, treeish: string): TreeEntry[] {
  const r = runGit(['ls-tree', '-z', treeish], { gitDir });
  if (r.status !== 0) return [];
  return r.stdout.toString('utf8').split('\0').filter(Boolean).map((line) => {
    const tab = line.indexOf('\t');
    const [mode, type, oid] = line.slice(0, tab).split(' ');
    return { mode, type, oid, name: line.slice(tab + 1) };
  });
}

function mktree(gitDir: string, entries: readonly TreeEntry[]): string {
  const input = entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\0`).join('');
  return gitOk(['mktree', '-z'], { gitDir, input }).toString('utf8').trim();
}

function hashBlob(gitDir: string, bytes: Buffer): string {
  return gitOk(['hash-object', '-w', '--stdin'], { gitDir, input: bytes }).toString('utf8').trim();
}

/** Git's id of a blob (SHA-1 object format, which the private repository uses). */
function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * Writes many blobs with one process. Policy: up to 8 blobs, one `hash-object -w --stdin`
 * each (an append writes one or two); more (a batch, a ledger published whole at join) go
 * through one `fast-import` stream, and their ids are computed here: `mktree` then refuses any
 * that git did not write, so a wrong id cannot reach a tree.
 */
function writeBlobs(gitDir: string, blobs: readonly Buffer[]): string[] {
  if (blobs.length <= 8) return blobs.map((b) => hashBlob(gitDir, b));
  const parts: Buffer[] = [];
  for (const b of blobs) parts.push(Buffer.from(`blob\ndata ${b.length}\n`), b, Buffer.from('\n'));
  parts.push(Buffer.from('done\n'));
  gitOk(['fast-import', '--quiet', '--done'], { gitDir, input: Buffer.concat(parts) });
  return blobs.map(blobId);
}

/** Replaces or adds entries by name; git's tree order is by name for blobs and these trees alike (no name is a prefix of another). */
function withEntries(base: readonly TreeEntry[], add: readonly TreeEntry[]): TreeEntry[] {
  const byName = new Map(base.map((e) => [e.name, e]));
  for (const e of add) byName.set(e.name, e);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface Publication {
  /** The parent commit, null for the genesis publication. */
  parent: string | null;
  /** The seq of the first new line. */
  firstSeq: number;
  /** The new record lines, each with its newline. */
  lines: readonly Buffer[];
  /** The HEAD line covering them. */
  head: Buffer;
  /** The HEAD's ts: the commit's date, so the same publication builds the same commit. */
  ts: string;
}

/** Builds the publication's commit (objects written into gitDir, no ref moved); returns its id. */
export function buildCommit(gitDir: string, p: Publication): string {
  const rootBase = p.parent ? lsTree(gitDir, `${p.parent}^{tree}`) : [];
  const recordsBase = p.parent ? lsTree(gitDir, `${p.parent}:records`) : [];
  const byShard = new Map<string, TreeEntry[]>();
  const oids = writeBlobs(gitDir, p.lines);
  p.lines.forEach((_, i) => {
    const seq = p.firstSeq + i;
    const shard = shardName(seq);
    if (!byShard.has(shard)) byShard.set(shard, []);
    byShard.get(shard)!.push({ mode: '100644', type: 'blob', oid: oids[i], name: recordName(seq) });
  });
  const shardTrees: TreeEntry[] = [];
  for (const [shard, blobs] of byShard) {
    const existing = recordsBase.some((e) => e.name === shard) && p.parent ? lsTree(gitDir, `${p.parent}:records/${shard}`) : [];
    shardTrees.push({ mode: '040000', type: 'tree', oid: mktree(gitDir, withEntries(existing, blobs)), name: shard });
  }
  const recordsTree = mktree(gitDir, withEntries(recordsBase, shardTrees));
  const root = mktree(gitDir, withEntries(rootBase.filter((e) => e.name === 'HEAD' || e.name === 'records'), [
    { mode: '100644', type: 'blob', oid: hashBlob(gitDir, p.head), name: 'HEAD' },
    { mode: '040000', type: 'tree', oid: recordsTree, name: 'records' },
  ]));
  const last = p.firstSeq + p.lines.length - 1;
  // Policy: a fixed identity and the HEAD's time as the date: the commit says nothing the
  // records do not (who signed is in the records), and no user.name need be configured.
  const date = `${Math.floor(Date.parse(p.ts) / 1000)} +0000`;
  const env = { GIT_AUTHOR_NAME: 'handoff-ledger', GIT_AUTHOR_EMAIL: 'ledger@handoff-ledger.invalid', GIT_AUTHOR_DATE: date, GIT_COMMITTER_NAME: 'handoff-ledger', GIT_COMMITTER_EMAIL: 'ledger@handoff-ledger.invalid', GIT_COMMITTER_DATE: date };
  const args = ['commit-tree', root, ...(p.parent ? ['-p', p.parent] : []), '-m', `ledger seq ${last}`];
  return gitOk(args, { gitDir, env }).toString('utf8').trim();
}

/** The objects of a fetched commit, read by path with one `cat-file --batch` per call. Attacker-controlled. */
export function readBlobs(gitDir: string, commit: string, paths: readonly string[]): (Buffer | null)[] {
  if (paths.length === 0) return [];
  const r = runGit(['cat-file', '--batch'], { gitDir, input: paths.map((p) => `${commit}:${p}\n`).join('') });
  if (r.status !== 0) throw new LedgerError('OP_REMOTE', `git cat-file failed reading ${commit}`, { commit });
  const out: (Buffer | null)[] = [];
  const buf = r.stdout;
  let at = 0;
  for (let i = 0; i < paths.length; i++) {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) throw new LedgerError('OP_REMOTE', 'git cat-file ended early');
    const header = buf.subarray(at, nl).toString('utf8');
    at = nl + 1;
    const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
    if (!m) {
      out.push(null); // "<path> missing" or "ambiguous"
      continue;
    }
    const size = Number(m[3]);
    out.push(m[2] === 'blob' ? Buffer.from(buf.subarray(at, at + size)) : null);
    at += size + 1; // the object, then a newline
  }
  return out;
}

/** The names at a commit's root, and how many parents it has (SPEC 11: exactly HEAD and records; one parent, none at genesis). */
export function commitShape(gitDir: string, commit: string): { parents: string[]; root: string[] } {
  const raw = gitOk(['cat-file', 'commit', commit], { gitDir }).toString('utf8');
  const headerEnd = raw.indexOf('\n\n');
  const parents = (headerEnd < 0 ? raw : raw.slice(0, headerEnd)).split('\n').filter((l) => l.startsWith('parent ')).map((l) => l.slice(7));
  return { parents, root: lsTree(gitDir, `${commit}^{tree}`).map((e) => `${e.type}:${e.name}`) };
}
