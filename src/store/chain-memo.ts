// Speed, paying for one stated target (the append bench: `ledger append` <= 1.3x `node -e ''`,
// the store's durable append >= 0.5x the raw limit): the verified-chain memo. The chain check
// (chain.ts) is O(n); this memo lets a reader or writer check only the bytes that are new.
//
// It is kept in the per-user state directory (state-dir.ts), never in `.ledger/`, which an
// attacker can write, and it records records.jsonl's identity as a bigint fstat gives it (dev,
// ino, size, mtime and ctime in nanoseconds) with how far the chain was checked (offset, seq,
// tail id). A reader or writer whose open records.jsonl has exactly that identity trusts the
// checked prefix and checks only the lines after it; any difference (another writer, an edit,
// a copy, a restore) means one full check, after which the memo names the file as it is now.
// A writer that appends under the lock writes the memo with the file's identity after its own
// fdatasync: the bytes it just wrote are the ones it checked.
//
// Policy (the residual, docs/guarantees.md): an edit in place that keeps the size, inode and
// device, and lands within the same ctime tick as the memo's fstat (the file system's timestamp
// granularity: nanoseconds on ext4/xfs/btrfs, coarser on some), is not seen until the file
// changes again; so is one made between a writer's write and its fstat. The clock cannot be set
// back for ctime without root. A memo that does not parse is ignored (a full check), never
// believed.
//
// A writer also records the RFC 6962 root of the tree through the chain it checked (SPEC 13),
// which it computed itself from those checked records: the next append by this user on the same
// file believes `.ledger/tree`'s right edge when it gives that root, instead of verifying the
// checkpoint's signature (issue 27's target, the append with the tree <= 1.1x the append without
// it: the verification was about a tenth of an append). Without the root (another writer, no
// cache) the checkpoint is verified as before.
import { fromBase64url, toBase64url } from '../canonical.js';
import { LedgerError } from '../errors.js';
import type { Head } from '../record.js';
import type { FileOps, FileStat } from '../fs/ops.js';
import { checkChain, type ChainPoint } from './chain.js';
import { stateNameOf, type LedgerPaths } from './paths.js';

interface Memo extends ChainPoint {
  dir: string;
  genesis: string;
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  /** The tree's root through `seq` (base64url), when the writer that checked it computed it. */
  root?: string;
}

/** The memo's two places (../cache/): this Ledger's memory, and this user's state log `chain/<ledger>.json`. */
function caches(paths: LedgerPaths, genesis: string) {
  const cache = paths.cache;
  if (!cache?.on('chain')) return null;
  const real = paths.real;
  return { real, memory: cache.inMemory<Memo>('chain'), file: cache.userLog('chain', 'chain', `${stateNameOf(paths, genesis)}.json`) };
}

const sameFile = (m: Memo, st: FileStat) =>
  m.dev === String(st.dev) && m.ino === String(st.ino) && m.size === String(st.size) && m.mtimeNs === String(st.mtimeNs) && m.ctimeNs === String(st.ctimeNs);

function parseMemo(text: string | null, real: string, genesis: string): Memo | null {
  if (text === null) return null;
  try {
    const m = JSON.parse(text) as Memo;
    const ok = m && m.dir === real && m.genesis === genesis && Number.isSafeInteger(m.offset) && Number.isSafeInteger(m.seq) && typeof m.id === 'string' &&
      [m.dev, m.ino, m.size, m.mtimeNs, m.ctimeNs].every((x) => typeof x === 'string' && /^\d+$/.test(x)) &&
      (m.root === undefined || (typeof m.root === 'string' && fromBase64url(m.root, 32) !== null));
    return ok ? m : null;
  } catch {
    return null;
  }
}

/** The checked prefix the memo vouches for on this very file, or null (check from byte 0). */
function trustedPrefix(paths: LedgerPaths, head: Head, st: FileStat): ChainPoint | null {
  const c = caches(paths, head.genesis);
  if (!c) return null;
  let m = c.memory.get();
  if (!m || m.dir !== c.real || m.genesis !== head.genesis || !sameFile(m, st)) {
    let text: string | null = null;
    try {
      text = c.file.get();
    } catch {
      text = null; // Policy: a memo that cannot be read is no memo (a full check), never a failure
    }
    m = parseMemo(text, c.real, head.genesis);
    if (!m || !sameFile(m, st)) return null;
    c.memory.set(m);
  }
  if (m.offset > head.size || m.seq > head.seq) return null;
  return { offset: m.offset, seq: m.seq, id: m.id };
}

/**
 * Records that the file with identity `st` is a checked chain through `through`, and, from a
 * writer that computed it, the tree's root through it. Best effort.
 */
export function rememberChain(paths: LedgerPaths, genesis: string, st: FileStat | null, through: ChainPoint, root?: Uint8Array): void {
  const c = st === null ? null : caches(paths, genesis);
  if (!c || st === null) return;
  const memo: Memo = {
    dir: c.real, genesis, dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs),
    offset: through.offset, seq: through.seq, id: through.id,
    ...(root ? { root: toBase64url(root) } : {}),
  };
  c.memory.set(memo);
  try {
    c.file.set(JSON.stringify(memo));
  } catch (e) {
    // Policy: the memo is a cache; a state directory that refuses it costs the next reader a
    // full check, and never fails a read or a published append.
    if (!(e instanceof LedgerError) && !(e as NodeJS.ErrnoException).code) throw e;
  }
}

/**
 * The chain check of records.jsonl (open as `fd`) through HEAD, believing the memo's prefix
 * where it matches the file exactly. Throws OP_CORRUPT (chain.ts). Returns the file's identity
 * as checked (null when `ops` cannot tell). `stat`: the caller's fstat of `fd`, taken just before.
 */
export function assertChain(ops: FileOps, fd: number, paths: LedgerPaths, head: Head, stat?: FileStat | null): FileStat | null {
  const st = stat !== undefined ? stat : ops.fstat ? ops.fstat(fd) : null;
  const from = st ? trustedPrefix(paths, head, st) : null;
  checkChain(ops, fd, paths, head, from);
  const through = { offset: head.size, seq: head.seq, id: head.tail };
  if (st && !(from && from.offset === through.offset)) rememberChain(paths, head.genesis, st, through);
  return st;
}

/**
 * The tree's root through `head` that this user's writer recorded for the file with identity
 * `st` (the one the chain check just vouched for), or null. Only the memo already in this
 * Ledger's memory is consulted: the chain check that precedes every append put it there.
 */
export function checkedRoot(paths: LedgerPaths, head: Head, st: FileStat | null): Uint8Array | null {
  const c = st === null ? null : caches(paths, head.genesis);
  if (!c || st === null) return null;
  const m = c.memory.get();
  if (!m || m.root === undefined || m.dir !== c.real || m.genesis !== head.genesis || !sameFile(m, st)) return null;
  if (m.offset !== head.size || m.seq !== head.seq || m.id !== head.tail) return null;
  return fromBase64url(m.root, 32);
}
