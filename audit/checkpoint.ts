// The checkpoint beside HEAD (SPEC 13): `.ledger/checkpoint`, a C2SP checkpoint signed by a pinned
// key, whose root must be the RFC 6962 root of the records it covers (linkage, exit 11). Written
// here again, apart from src/tlog/ (the auditor is the independent second reader: it must not
// share the writer's tree code), from RFC 6962 and the C2SP texts: leaf = SHA-256(0x00 || line),
// node = SHA-256(0x01 || left || right), a right edge of complete subtrees folded right to left.
//
// Policy: a ledger without a checkpoint file is audited as before, silently (ledgers from before
// SPEC 13, and copies generated in tests): removing it hides nothing a consumer relies on, since
// a consumer that requires witnessed checkpoints refuses a state without one; a checkpoint that covers fewer records than HEAD (a joined ledger that took
// the remote's records) is checked at its own size, with a warning, and one past HEAD is not
// checked (a race with an append; below); one not signed by a pinned key, or whose root is not
// the records', is a linkage finding.
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fromBase64url } from '../src/canonical.js';
import type { Trust } from '../src/keys/trust.js';
import type { Head } from '../src/record.js';
import { verifyFast } from '../src/sign.js';
import type { FindingCollector } from './findings.js';
import { readAt, readLines, type ReadEnd } from './lines.js';

// Speed: node:crypto is loaded at the first hash, not at import (every verb's bundle imports this
// file; loading node:crypto costs a read verb about 9 ms it otherwise never pays).
const sha256 = (...parts: Uint8Array[]) => {
  const h = process.getBuiltinModule('node:crypto').createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
/** How a damaged or unsigned checkpoint is mended, said with its finding (src/store/checkpoint.ts writes one after HEAD). */
const MENDED = '(it is derived: the next append by a writer of this ledger replaces it)';
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/**
 * The tree's right edge after `size` leaves: the roots of its complete subtrees, largest (left)
 * first, one per set bit of `size`. The floor carries it (SPEC 7 and 8: "the floor carries what it
 * needs"), so an audit from a floor hashes only the records after it.
 */
export interface TreeEdge {
  size: number;
  hashes: Buffer[];
}

/** The edge of the empty tree. */
export const EMPTY_EDGE: TreeEdge = { size: 0, hashes: [] };

/** Whether `hashes` can be the edge of a tree of `size` leaves (one hash per set bit). */
export function edgeFits(size: number, hashes: readonly unknown[]): boolean {
  let bits = 0;
  for (let n = size; n > 0; n = Math.floor(n / 2)) bits += n % 2;
  return hashes.length === bits;
}

/**
 * Extends `edge` over the lines of records.jsonl from `offset` (the line of leaf `edge.size`)
 * until it has `size` leaves, showing `watch` the edge at every size on the way (its hashes are
 * the walk's own: copied by a watcher that keeps them); null when the file ends first. The edge
 * given is copied, never changed.
 */
function extendEdge(fd: number, edge: TreeEdge, offset: number, end: number, size: number, watch: (n: number, hashes: readonly Buffer[]) => void): TreeEdge | null {
  const hashes = [...edge.hashes];
  let n = edge.size;
  watch(n, hashes);
  if (n === size) return { size: n, hashes };
  const done: ReadEnd = { consumed: 0, trailing: 0, short: false };
  for (const line of readLines(fd, offset, end, n, done)) {
    let h = sha256(LEAF, line.bytes);
    for (let k = n; k % 2 === 1; k = Math.floor(k / 2)) h = sha256(NODE, hashes.pop()!, h);
    hashes.push(h);
    watch(++n, hashes);
    if (n === size) break;
  }
  return n === size ? { size: n, hashes } : null;
}

/** The root of the tree whose right edge is `hashes` (RFC 6962: folded right to left). */
function rootOf(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) return sha256();
  let r = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) r = sha256(NODE, hashes[i], r);
  return r;
}

function keyId(name: string, type: number, key: Uint8Array): number {
  return sha256(Buffer.from(name, 'utf8'), Buffer.from([0x0a, type]), key).readUInt32BE(0);
}

/** What the checkpoint file claims once its form, origin and signature hold: a root at a size. */
interface Claim {
  size: number;
  root: string;
}

/** Reads and checks `dir/checkpoint` up to its root; a claim to check against the records, or null (with warnings or a finding). */
function readClaim(dir: string, head: Head, trust: Trust, sink: FindingCollector, warnings: string[]): Claim | null {
  const path = join(dir, 'checkpoint');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    warnings.push(`the checkpoint ${path} cannot be opened (${(e as NodeJS.ErrnoException).code}): the tree root was not checked`);
    return null;
  }
  let bytes: Buffer;
  try {
    if (!fstatSync(fd).isFile()) {
      warnings.push(`the checkpoint ${path} is not a regular file: the tree root was not checked`);
      return null;
    }
    bytes = readAt(fd, 0, 65537);
  } finally {
    closeSync(fd);
  }
  const fail = (expected: string, actual: string, reason: string) => {
    sink.add({ layer: 'linkage', code: 'LINKAGE_CHECKPOINT', seq: null, id: head.tail, expected, actual, reason });
    return null;
  };
  // Attacker-controlled: the whole file.
  const text = bytes.toString('utf8');
  const m = /^([^\n]+)\n(0|[1-9][0-9]{0,15})\n([A-Za-z0-9+/]{43}=)\n\n((?:\u2014 [^\n]+\n)+)$/.exec(text);
  const origin = 'handoff-ledger/' + head.genesis.replace(/^sha256:/, '');
  if (!m || bytes.length > 65536) return fail('a signed checkpoint (origin, size, root, signatures)', `${bytes.length} bytes that are not one`, `the checkpoint beside HEAD is malformed ${MENDED}`);
  const [, cpOrigin, sizeText, rootB64] = m;
  const size = Number(sizeText);
  if (cpOrigin !== origin) return fail(origin, cpOrigin, 'the checkpoint names another ledger');
  // Policy: a checkpoint past the audited HEAD is not checked, with a warning. A writer replaces
  // the checkpoint just after HEAD, so a reader that read HEAD before an append and the checkpoint
  // after it sees exactly this; the records past HEAD are outside the audit. A consumer under a
  // witness policy still requires the checkpoint to be HEAD's exactly (src/witness/enforce.ts).
  if (size > head.seq + 1) {
    warnings.push(`the checkpoint covers ${size} records, past the audited HEAD's ${head.seq + 1} (an append since the audit began?): its root was not checked`);
    return null;
  }
  // Signed by a key the trust file pins (or HEAD's own, which the key-pin layer checked).
  const body = Buffer.from(text.slice(0, text.indexOf('\n\n') + 1), 'utf8');
  const keys = [head.sig.key, ...trust.keys.map((k) => k.key)];
  const signed = m[4].split('\n').filter(Boolean).some((line) => {
    const [, name, b64] = /^\u2014 (\S+) (\S+)$/.exec(line) ?? [];
    if (name !== origin || !b64) return false;
    const raw = Buffer.from(b64, 'base64');
    if (raw.length !== 68 || raw.toString('base64') !== b64) return false;
    return keys.some((k) => {
      const pub = fromBase64url(k, 32);
      return pub !== null && raw.readUInt32BE(0) === keyId(origin, 0x01, pub) && verifyFast(raw.subarray(4), body, pub);
    });
  });
  if (!signed) return fail('a signature by HEAD\'s key or a pinned key', 'none that verifies', `the checkpoint is not signed by a pinned key ${MENDED}`);
  if (size < head.seq + 1) warnings.push(`the checkpoint covers ${size} of HEAD's ${head.seq + 1} records (the next append here signs one for all)`);
  return { size, root: rootB64 };
}

/** Where the tree is known already: the floor's edge, and the offset of the line after the floor's record. */
export interface TreeStart {
  edge: TreeEdge;
  offset: number;
}

/**
 * Checks `dir/checkpoint` against HEAD and the records (a finding when its root is not theirs),
 * hashing from `from` (the floor's edge) when it lies at or below the checkpoint, else from
 * genesis. With `wantEdge`, also walks on to HEAD and returns the edge there, for the next floor
 * (none without a checkpoint).
 */
export function checkTree(dir: string, head: Head, trust: Trust, fd: number, sink: FindingCollector, from: TreeStart | null, wantEdge: boolean, floorSize: number | null = null): { warnings: string[]; edge: TreeEdge | null; floorEdge: TreeEdge | null } {
  const warnings: string[] = [];
  const claim = readClaim(dir, head, trust, sink, warnings);
  if (sink.failedLayer() !== null) return { warnings, edge: null, floorEdge: null };
  // Policy: a ledger without a checkpoint (from before SPEC 13) gets no edge in its floor either:
  // nothing to check, so nothing is hashed; the first audit after a checkpoint appears hashes
  // from genesis once and keeps the edge.
  if (claim === null) return { warnings, edge: null, floorEdge: null };
  const headSize = head.seq + 1;
  // Policy: a checkpoint below the floor (a joined ledger's that lags) is checked from genesis.
  const start = from !== null && from.edge.size <= claim.size ? from : null;
  // Hashed from genesis past a floor that carried no edge: the edge at the floor, for the caller to keep.
  const keepAt = start === null && floorSize !== null && floorSize > 0 ? floorSize : -1;
  let root: Buffer | null = null;
  let floorEdge: TreeEdge | null = null;
  const edge = extendEdge(fd, start?.edge ?? EMPTY_EDGE, start?.offset ?? 0, head.size, Math.max(wantEdge ? headSize : claim.size, keepAt), (n, hashes) => {
    if (n === claim.size) root = rootOf(hashes);
    if (n === keepAt) floorEdge = { size: n, hashes: [...hashes] };
  });
  const got = root as Buffer | null;
  if (got === null || got.toString('base64') !== claim.root) {
    sink.add({ layer: 'linkage', code: 'LINKAGE_CHECKPOINT', seq: null, id: head.tail, expected: `the root of the first ${claim.size} records`, actual: got === null ? 'fewer records' : got.toString('base64'), reason: `the checkpoint's root ${claim.root} is not the root of the records it covers` });
    return { warnings, edge: null, floorEdge: null };
  }
  return { warnings, edge: edge !== null && edge.size === headSize ? edge : null, floorEdge };
}
