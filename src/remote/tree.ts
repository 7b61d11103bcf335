// The SPEC 11 tree of one publication, built and read with git's plumbing:
//
//   HEAD                         the HEAD line of SPEC 5, covering every record in the tree
//   records/SSSSSS/NNNNNNNNNNNN  one blob per record: exactly its line; NNNNNNNNNNNN is the seq
//                                in 12 digits, SSSSSS floor(seq / 1000) in 6
//   blobs/<64 hex>               the whole test output a record names (blobs.ts), when published
//
// A commit's records are its parent's plus new ones: building one starts from the parent's tree
// and adds the new blobs and the new HEAD, with exactly one parent (none for genesis).
import { LedgerError } from '../errors.js';
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
  parts.push(Buffer.from('\nget-mark :1\ndone\n'));
  const out = gitOk(['fast-import', '--quiet', '--done', '--force'], { gitDir, input: Buffer.concat(parts) }).toString('utf8').trim();
  if (!OID_LINE.test(out)) throw new LedgerError('OP_REMOTE', `git fast-import did not name the commit it built (${out.slice(0, 80)})`);
  return out;
}

/** Where the commit being built is kept in the private repository (never pushed by name). */
export const BUILT_REF = 'refs/handoff-ledger/built';

/** The objects of a fetched commit, read by path with one `cat-file --batch` per call. Attacker-controlled. */
export function readBlobs(gitDir: string, commit: string, paths: readonly string[]): (Buffer | null)[] {
  if (paths.length === 0) return [];
  return catBatch(gitDir, paths.map((p) => `${commit}:${p}`), commit);
}

/** `cat-file --batch` of `names` (each a name git resolves): each a blob's bytes, or null (missing, not a blob). */
function catBatch(gitDir: string, names: readonly string[], commit: string, views = false): (Buffer | null)[] {
  return catObjects(gitDir, names, commit, views).map((o) => (o && o.type === 'blob' ? o.data : null));
}

/** `cat-file --batch` of `names`: each object's type and bytes, or null (missing, ambiguous). */
function catObjects(gitDir: string, names: readonly string[], commit: string, views = false): ({ type: string; data: Buffer } | null)[] {
  const r = runGit(['cat-file', '--batch'], { gitDir, input: names.map((n) => `${n}\n`).join('') });
  if (r.status !== 0) throw new LedgerError('OP_REMOTE', `git cat-file failed reading ${commit}`, { commit });
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
    if (at + size > buf.length) throw new LedgerError('OP_REMOTE', 'git cat-file ended early');
    // A view keeps git's whole answer alive; a copy lets it go (a few blobs out of a large tree).
    const data = buf.subarray(at, at + size);
    out.push({ type: m[2], data: views ? data : Buffer.from(data) });
    at += size + 1; // the object, then a newline
  }
  return out;
}

/**
 * Below this many records, each is read by its path; from it on, the shards' entries are listed
 * first and the blobs read by id. A path lookup walks commit, root, records/ and the shard's
 * 1000 entries again for every record: 100,000 of them cost more than the signatures do.
 */
export const LIST_FROM = 256;

/**
 * The blobs of records `seqs` (ascending) in a fetched commit, in order; null where the path is
 * missing or not a blob. Policy: a large range lists only the shards it reads (`ls-tree -r` of
 * those), takes each expected path's entry from the listing and reads exactly those objects;
 * an extra entry in a shard is listed but never read, as before.
 */
export function readRecordBlobs(gitDir: string, commit: string, seqs: readonly number[]): (Buffer | null)[] {
  if (seqs.length < LIST_FROM) return readBlobs(gitDir, commit, seqs.map(recordPath));
  const shards = [...new Set(seqs.map((seq) => `records/${shardName(seq)}`))];
  const listing = gitOk(['--literal-pathspecs', 'ls-tree', '-r', '-z', commit, '--', ...shards], { gitDir });
  const blobs = new Map<string, string>();
  for (const line of listing.toString('utf8').split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [, type, oid] = line.slice(0, tab).split(' ');
    if (type === 'blob' && OID_LINE.test(oid)) blobs.set(line.slice(tab + 1), oid);
  }
  const oids = seqs.map((seq) => blobs.get(recordPath(seq)) ?? null);
  // Views: every blob is kept (they are the lines the local copy takes), so git's answer is anyway.
  const read = catBatch(gitDir, oids.filter((o): o is string => o !== null), commit, true);
  let k = 0;
  return oids.map((o) => (o === null ? null : read[k++]));
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
  const idBytes = commit.length / 2;
  const root: string[] = [];
  for (let at = 0; at < t.data.length;) {
    const sp = t.data.indexOf(0x20, at);
    const nul = sp < 0 ? -1 : t.data.indexOf(0x00, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + idBytes > t.data.length) throw new LedgerError('OP_REMOTE', `the tree of ${commit} cannot be read`, { commit });
    const mode = parseInt(t.data.subarray(at, sp).toString('latin1'), 8);
    const type = (mode & 0o170000) === 0o040000 ? 'tree' : (mode & 0o170000) === 0o160000 ? 'commit' : 'blob';
    root.push(`${type}:${t.data.subarray(sp + 1, nul).toString('utf8')}`);
    at = nul + 1 + idBytes;
  }
  return { parents: parentsOf(c.data.toString('utf8')), root, blobs: rest.map((o) => (o && o.type === 'blob' ? o.data : null)) };
}
