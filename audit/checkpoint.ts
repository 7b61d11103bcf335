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
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fromBase64url } from '../src/canonical.js';
import type { Trust } from '../src/keys/trust.js';
import type { Head } from '../src/record.js';
import { verifyFast } from '../src/sign.js';
import type { FindingCollector } from './findings.js';
import { readAt, readLines, type ReadEnd } from './lines.js';

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** The root of the first `size` lines of records.jsonl (RFC 6962), or null when there are fewer. */
function rootOfLines(fd: number, size: number, end: number): Buffer | null {
  if (size === 0) return sha256();
  const edge: Buffer[] = [];
  let n = 0;
  const done: ReadEnd = { consumed: 0, trailing: 0, short: false };
  for (const line of readLines(fd, 0, end, 0, done)) {
    let h = sha256(LEAF, line.bytes);
    for (let k = n; k % 2 === 1; k = Math.floor(k / 2)) h = sha256(NODE, edge.pop()!, h);
    edge.push(h);
    if (++n === size) break;
  }
  if (n !== size) return null;
  let r = edge[edge.length - 1];
  for (let i = edge.length - 2; i >= 0; i--) r = sha256(NODE, edge[i], r);
  return r;
}

function keyId(name: string, type: number, key: Uint8Array): number {
  return sha256(Buffer.from(name, 'utf8'), Buffer.from([0x0a, type]), key).readUInt32BE(0);
}

/** Checks `dir/checkpoint` against HEAD and the records; adds findings, returns warnings. */
export function checkCheckpoint(dir: string, head: Head, trust: Trust, recordsFd: number, sink: FindingCollector): string[] {
  const path = join(dir, 'checkpoint');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    return [`the checkpoint ${path} cannot be opened (${(e as NodeJS.ErrnoException).code}): the tree root was not checked`];
  }
  let bytes: Buffer;
  try {
    if (!fstatSync(fd).isFile()) return [`the checkpoint ${path} is not a regular file: the tree root was not checked`];
    bytes = readAt(fd, 0, 65537);
  } finally {
    closeSync(fd);
  }
  const fail = (expected: string, actual: string, reason: string) => {
    sink.add({ layer: 'linkage', code: 'LINKAGE_CHECKPOINT', seq: null, id: head.tail, expected, actual, reason });
    return [];
  };
  // Attacker-controlled: the whole file.
  const text = bytes.toString('utf8');
  const m = /^([^\n]+)\n(0|[1-9][0-9]{0,15})\n([A-Za-z0-9+/]{43}=)\n\n((?:\u2014 [^\n]+\n)+)$/.exec(text);
  const origin = 'handoff-ledger/' + head.genesis.replace(/^sha256:/, '');
  if (!m || bytes.length > 65536) return fail('a signed checkpoint (origin, size, root, signatures)', `${bytes.length} bytes that are not one`, 'the checkpoint beside HEAD is malformed');
  const [, cpOrigin, sizeText, rootB64] = m;
  const size = Number(sizeText);
  if (cpOrigin !== origin) return fail(origin, cpOrigin, 'the checkpoint names another ledger');
  // Policy: a checkpoint past the audited HEAD is not checked, with a warning. A writer replaces
  // the checkpoint just after HEAD, so a reader that read HEAD before an append and the checkpoint
  // after it sees exactly this; the records past HEAD are outside the audit. A consumer under a
  // witness policy still requires the checkpoint to be HEAD's exactly (src/witness/enforce.ts).
  if (size > head.seq + 1) return [`the checkpoint covers ${size} records, past the audited HEAD's ${head.seq + 1} (an append since the audit began?): its root was not checked`];
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
  if (!signed) return fail('a signature by HEAD\'s key or a pinned key', 'none that verifies', 'the checkpoint is not signed by a pinned key');
  const root = rootOfLines(recordsFd, size, head.size);
  if (root === null || root.toString('base64') !== rootB64) {
    return fail(`the root of the first ${size} records`, root === null ? 'fewer records' : root.toString('base64'), `the checkpoint's root ${rootB64} is not the root of the records it covers`);
  }
  return size < head.seq + 1 ? [`the checkpoint covers ${size} of HEAD's ${head.seq + 1} records (the next append here signs one for all)`] : [];
}
