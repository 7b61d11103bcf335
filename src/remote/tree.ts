// The SPEC 11 tree of one publication, built and read with git's plumbing:
//
//   HEAD                         the HEAD line of SPEC 5, covering every record in the tree
//   records/SSSSSS/NNNNNNNNNNNN  one blob per record: exactly its line; NNNNNNNNNNNN is the seq
//                                in 12 digits, SSSSSS floor(seq / 1000) in 6
//   blobs/<64 hex>               the whole test output a record names (blobs.ts), when published
//   checkpoint                   SPEC 13: the C2SP checkpoint of the tree through HEAD, signed by
//                                HEAD's key, with the witnesses' cosignatures (checkpoint.ts)
//
// A commit's records are its parent's plus new ones: building one starts from the parent's tree
// and adds the new blobs and the new HEAD, with exactly one parent (none for genesis).
import { LedgerError } from '../errors.js';
import { nodeCrypto } from '../node-crypto.js';
import { MAX_LINE_BYTES } from '../record.js';
import { gitOk, runGit } from './git.js';

export const SHARD = 1000;

export const shardName = (seq: number): string => String(Math.floor(seq / SHARD)).padStart(6, '0');
export const recordName = (seq: number): string => String(seq).padStart(12, '0');
/** The path of seq's blob in a publication's tree. */
export const recordPath = (seq: number): string => `records/${shardName(seq)}/${recordName(seq)}`;

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
  /** The whole test output the new records name (blobs.ts): put at `blobs/<hex>`. */
  blobs?: readonly { hex: string; bytes: Buffer }[];
  /** SPEC 13: the checkpoint of the tree through this HEAD (a note), put at `checkpoint`. */
  checkpoint?: Buffer | null;
}

const OID_LINE = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Builds the publication's commit (objects written into gitDir; only our scratch ref moves) and
 * returns its id. One `git fast-import` stream does what `hash-object -w`, `mktree` and
 * `commit-tree` would do in a dozen processes: the parent's tree (`from`), each new record's
 * blob and the new HEAD blob at their paths (`M`), one commit with exactly that one parent.
 */
export function buildCommit(gitDir: string, p: Publication): string {
  const last = p.firstSeq + p.lines.length - 1;
  // Policy: a fixed identity and the HEAD's time as the date: the commit says nothing the
  // records do not (who signed is in the records), and no user.name need be configured.
  const date = `${Math.floor(Date.parse(p.ts) / 1000)} +0000`;
  const message = Buffer.from(`ledger seq ${last}\n`);
  const parts: Buffer[] = [Buffer.from(`commit ${BUILT_REF}\nmark :1\ncommitter handoff-ledger <ledger@handoff-ledger.invalid> ${date}\ndata ${message.length}\n`), message];
  // Without a parent, `from` is left out and the ref is reset first: the genesis commit has none.
  if (p.parent) parts.push(Buffer.from(`from ${p.parent}\n`));
  else parts.unshift(Buffer.from(`reset ${BUILT_REF}\n`));
  parts.unshift(Buffer.from('feature get-mark\n'));
  const file = (path: string, bytes: Buffer) => parts.push(Buffer.from(`M 100644 inline ${path}\ndata ${bytes.length}\n`), bytes, Buffer.from('\n'));
  p.lines.forEach((line, i) => file(recordPath(p.firstSeq + i), line));
  for (const b of p.blobs ?? []) file(`blobs/${b.hex}`, b.bytes);
  file('HEAD', p.head);
  // Policy: with no checkpoint of this HEAD (a ledger copied in without one), the parent's entry
  // goes: a publication never carries another HEAD's checkpoint.
  if (p.checkpoint) file('checkpoint', p.checkpoint);
  else if (p.parent) parts.push(Buffer.from('D checkpoint\n'));
  parts.push(Buffer.from('\nget-mark :1\ndone\n'));
  const out = gitOk(['fast-import', '--quiet', '--done', '--force'], { gitDir, input: Buffer.concat(parts) }).toString('utf8').trim();
  if (!OID_LINE.test(out)) throw new LedgerError('OP_REMOTE', `git fast-import did not name the commit it built (${out.slice(0, 80)})`);
  return out;
}

/** Where the commit being built is kept in the private repository (never pushed by name). */
export const BUILT_REF = 'refs/handoff-ledger/built';

/**
 * Policy: what one object of a fetched commit may weigh: a record's blob is one line (at most
 * MAX_LINE_BYTES and its newline), HEAD far less; a commit or the root tree of the ledger's
 * shape is small. Reads are bounded by these before a byte is kept (issue 23: a 600 MB HEAD
 * blob, 600 KB on the wire, once cost every sync 20 s and 1.2 GB): git's output is cut off past
 * the bound of the whole read, and each object is refused past its own.
 */
export const OBJECT_MAX = MAX_LINE_BYTES + 1;
/** What each object of a read may add to git's answer besides its bytes: its header line and newline. */
const HEADER_MAX = 128;

function tooLarge(commit: string, what: string, max = OBJECT_MAX): LedgerError {
  return new LedgerError('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} holds ${what} larger than ${max} bytes; nothing was read from it`, { commit }, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
}

/**
 * The objects of a fetched commit, read by path with one `cat-file --batch` per call.
 * Attacker-controlled: each at most `max` bytes (default OBJECT_MAX; the test output that
 * travels in blobs/ has its own bound), refused past it unkept.
 */
export function readBlobs(gitDir: string, commit: string, paths: readonly string[], max = OBJECT_MAX): (Buffer | null)[] {
  if (paths.length === 0) return [];
  return catBatch(gitDir, paths.map((p) => `${commit}:${p}`), commit, false, max);
}

/** `cat-file --batch` of `names` (each a name git resolves): each a blob's bytes, or null (missing, not a blob). */
function catBatch(gitDir: string, names: readonly string[], commit: string, views = false, max = OBJECT_MAX): (Buffer | null)[] {
  return catObjects(gitDir, names, commit, views, names.length * (max + HEADER_MAX), max).map((o) => (o && o.type === 'blob' ? o.data : null));
}

/**
 * `cat-file --batch` of `names`: each object's type and bytes, or null (missing, ambiguous).
 * Bounded: git's whole answer by OBJECT_MAX per name (it is stopped past that, and the read is
 * refused, REMOTE_SCHEMA), and each object by OBJECT_MAX; `bound` lowers the whole answer's.
 */
function catObjects(gitDir: string, names: readonly string[], commit: string, views = false, bound?: number, max = OBJECT_MAX): ({ type: string; data: Buffer } | null)[] {
  const r = runGit(['cat-file', '--batch'], { gitDir, input: names.map((n) => `${n}\n`).join(''), maxBuffer: bound ?? names.length * (OBJECT_MAX + HEADER_MAX) });
  if (r.overflow) throw tooLarge(commit, 'an object');
  if (r.status !== 0) throw new LedgerError('OP_REMOTE', `git cat-file ${r.timedOut ? 'timed out' : 'failed'} reading ${commit}`, { commit });
  const out: ({ type: string; data: Buffer } | null)[] = [];
  const buf = r.stdout;
  let at = 0;
  for (let i = 0; i < names.length; i++) {
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
    if (size > max) throw tooLarge(commit, `an object (${names[i]})`, max);
    if (at + size > buf.length) throw new LedgerError('OP_REMOTE', 'git cat-file ended early');
    // A view keeps git's whole answer alive; a copy lets it go (a few blobs out of a large tree).
    const data = buf.subarray(at, at + size);
    out.push({ type: m[2], data: views ? data : Buffer.from(data) });
    at += size + 1; // the object, then a newline
  }
  return out;
}

/** One entry of a raw tree object: its mode, name and id (hex). */
interface TreeEntry { mode: number; name: string; oid: string }

/** A tree object's entries, read as git stores them (`<mode> <name>\0<raw id>` each). */
function treeEntries(data: Buffer, idBytes: number, commit: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (let at = 0; at < data.length;) {
    const sp = data.indexOf(0x20, at);
    const nul = sp < 0 ? -1 : data.indexOf(0x00, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + idBytes > data.length) throw new LedgerError('OP_REMOTE', `a tree of ${commit} cannot be read`, { commit });
    out.push({ mode: parseInt(data.subarray(at, sp).toString('latin1'), 8), name: data.subarray(sp + 1, nul).toString('utf8'), oid: data.subarray(nul + 1, nul + 1 + idBytes).toString('hex') });
    at = nul + 1 + idBytes;
  }
  return out;
}

const TREE_MODE = 0o040000;
const BLOB_MODE = 0o100644;

/** What the remote's records/ must hold below a point this machine verified. */
export interface VerifiedBelow {
  /** A commit this machine verified (its anchor) through `seq`: every record through it must be that commit's very object. */
  commit: string;
  seq: number;
}

/** The anchor's commit is not in the private repository (a repository made anew): nothing to compare with. */
export class VerifiedCommitMissing extends Error {}

/**
 * The records/ tree of `commit`, checked whole (issue 23 finding 7: a keyless commit that kept
 * HEAD and rewrote the tree below the anchor was taken, carried forward, and stopped every new
 * join): exactly the shards of seqs 0..last, each a tree holding exactly its seqs' names, each
 * a regular blob (mode 100644), nothing else; and through `below.seq`, every record the very
 * object of `below.commit` (a whole shard by its tree's id, without reading it), else the
 * remote rewrote what this machine verified: a fork (REMOTE_LINKAGE, which holds every writer).
 * `known(seq)`: the blob id a record at or below `from` must have, where no commit says (a
 * local copy joined to a remote). Returns the blob ids of seqs from+1..last, in order: exactly
 * the objects the caller then reads and verifies. Bounded as every read here is.
 */
export function recordOids(gitDir: string, commit: string, last: number, from: number, below: VerifiedBelow | null, known?: (seq: number) => string | null): string[] {
  const idBytes = commit.length / 2;
  const schema = (what: string) => new LedgerError('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} ${what}; a ledger's tree holds exactly HEAD and one blob per record`, { commit }, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
  const rewritten = (lo: number, hi: number) => new LedgerError('REMOTE_LINKAGE', `fork: the remote ledger commit ${commit.slice(0, 12)} rewrote records this machine verified (seq ${lo}-${hi})`, { kind: 'fork', commit, seq: lo });
  const shards = Math.floor(last / SHARD) + 1;
  const shardSeqs = (i: number) => ({ lo: i * SHARD, hi: Math.min(i * SHARD + SHARD - 1, last) });
  const sameThrough = below ? Math.min(below.seq, last) : -1;
  // Which shards are listed: every one but those wholly through below.seq (compared by id).
  const listed: number[] = [];
  for (let i = 0; i < shards; i++) if (!(below && shardSeqs(i).hi <= sameThrough && (i + 1) * SHARD - 1 <= sameThrough)) listed.push(i);
  const names = [`${commit}:records`, ...(below ? [`${below.commit}:records`] : []), ...listed.map((i) => `${commit}:records/${shardName(i * SHARD)}`), ...(below ? listed.filter((i) => i * SHARD <= sameThrough).map((i) => `${below.commit}:records/${shardName(i * SHARD)}`) : [])];
  const objs = catObjects(gitDir, names, commit, false, names.length * (OBJECT_MAX + HEADER_MAX));
  let k = 0;
  const tip = objs[k++];
  const mine = below ? objs[k++] : null;
  if (!tip || tip.type !== 'tree') throw schema('has no records/ tree');
  if (below && (!mine || mine.type !== 'tree')) throw new VerifiedCommitMissing();
  const top = treeEntries(tip.data, idBytes, commit);
  if (top.length !== shards || top.some((e, i) => e.name !== shardName(i * SHARD) || e.mode !== TREE_MODE)) {
    const odd = top.find((e, i) => e.name !== shardName(i * SHARD) || e.mode !== TREE_MODE) ?? null;
    throw schema(odd ? `holds records/${odd.name} (mode ${odd.mode.toString(8)}) where the shards of seq 0-${last} go` : `holds ${top.length} shards under records/, not the ${shards} of seq 0-${last}`);
  }
  const mineTop = mine ? new Map(treeEntries(mine.data, idBytes, below!.commit).map((e) => [e.name, e.oid])) : null;
  for (let i = 0; i < shards; i++) {
    if (listed.includes(i)) continue;
    if (mineTop!.get(shardName(i * SHARD)) !== top[i].oid) throw rewritten(i * SHARD, shardSeqs(i).hi);
  }
  const out: string[] = [];
  const tipShards = listed.map(() => objs[k++]);
  const mineShards = below ? listed.filter((i) => i * SHARD <= sameThrough).map(() => objs[k++]) : [];
  let m = 0;
  listed.forEach((i, j) => {
    const t = tipShards[j];
    if (!t || t.type !== 'tree') throw schema(`has no tree at records/${shardName(i * SHARD)}`);
    const entries = treeEntries(t.data, idBytes, commit);
    const { lo, hi } = shardSeqs(i);
    let mineEntries: Map<string, string> | null = null;
    if (below && lo <= sameThrough) {
      const mt = mineShards[m++];
      if (!mt || mt.type !== 'tree') throw new VerifiedCommitMissing();
      mineEntries = new Map(treeEntries(mt.data, idBytes, below.commit).map((e) => [e.name, e.oid]));
    }
    const byName = new Set(entries.map((e) => e.name));
    for (let seq = lo; seq <= hi; seq++) {
      if (!byName.has(recordName(seq))) throw new LedgerError('REMOTE_LINKAGE', `the remote record at seq ${seq} is missing from the tree`, { seq, commit }, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
    }
    if (entries.length !== hi - lo + 1) {
      const extra = entries.find((e) => !/^\d{12}$/.test(e.name) || Number(e.name) < lo || Number(e.name) > hi)!;
      throw schema(`holds records/${shardName(i * SHARD)}/${extra.name}, which is no record of seq ${lo}-${hi}`);
    }
    entries.forEach((e, n) => {
      const seq = lo + n;
      if (e.name !== recordName(seq) || e.mode !== BLOB_MODE) throw schema(`holds records/${shardName(i * SHARD)}/${e.name} (mode ${e.mode.toString(8)}) where the record at seq ${seq} goes, a regular file`);
      if (seq <= sameThrough && mineEntries!.get(e.name) !== e.oid) throw rewritten(seq, seq);
      if (seq <= from && seq > sameThrough && known) {
        const want = known(seq);
        if (want !== null && want !== e.oid) throw rewritten(seq, seq);
      }
      if (seq > from) out.push(e.oid);
    });
  });
  return out;
}

/** The blobs with ids `oids`, in order (null: missing or not a blob); each bounded by OBJECT_MAX. */
export function readBlobsById(gitDir: string, commit: string, oids: readonly string[]): (Buffer | null)[] {
  if (oids.length === 0) return [];
  // Views: every blob is kept (they are the lines the local copy takes), so git's answer is anyway.
  return catBatch(gitDir, oids, commit, true);
}

/** A record line's git blob id (SHA-1 of "blob <size>\0" and the line): what a tree names it by. */
export function blobOid(line: Uint8Array): string {
  const { createHash } = nodeCrypto();
  return createHash('sha1').update(`blob ${line.length}\0`).update(line).digest('hex');
}

function parentsOf(raw: string): string[] {
  const headerEnd = raw.indexOf('\n\n');
  return (headerEnd < 0 ? raw : raw.slice(0, headerEnd)).split('\n').filter((l) => l.startsWith('parent ')).map((l) => l.slice(7));
}

/**
 * The names at a commit's root, its parents (SPEC 11: exactly HEAD and records; one parent,
 * none at genesis) and the blobs at `paths`, in one `cat-file --batch`: one git process where
 * there were four (`cat-file commit`, `ls-tree`, two batches); a loser of a race runs this on
 * every attempt. The root tree is read as
 * git stores it (`<mode> <name>\0<raw id>` per entry) and each entry typed by its mode as
 * `ls-tree` types it: a directory a tree, a gitlink a commit, anything else a blob.
 */
export function readShapeAndBlobs(gitDir: string, commit: string, paths: readonly string[]): { parents: string[]; root: string[]; blobs: (Buffer | null)[] } {
  const [c, t, ...rest] = catObjects(gitDir, [commit, `${commit}^{tree}`, ...paths.map((p) => `${commit}:${p}`)], commit);
  if (!c || c.type !== 'commit' || !t || t.type !== 'tree') throw new LedgerError('OP_REMOTE', `git cat-file did not find the commit ${commit} and its tree`, { commit });
  const root = treeEntries(t.data, commit.length / 2, commit).map(({ mode, name }) => `${(mode & 0o170000) === TREE_MODE ? 'tree' : (mode & 0o170000) === 0o160000 ? 'commit' : 'blob'}:${name}`);
  return { parents: parentsOf(c.data.toString('utf8')), root, blobs: rest.map((o) => (o && o.type === 'blob' ? o.data : null)) };
}
