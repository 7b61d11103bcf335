// Reading and writing HEAD (SPEC 5). The writer re-checks what it reads (canonical bytes,
// schema, signature) before building on it: it must never extend a forged pointer.
import { canonicalAroundSig, digestOf, idFromLine } from '../canonical.js';
import { LineProblem, canonicalValue } from '../record-line.js';
import { LedgerError, ioError, RUN_AUDIT } from '../errors.js';
import { headProblems, type Head } from '../record.js';
import { makeSig, verifySig, type Sig, type Signer } from '../sign.js';
import { replaceFileDurable } from '../fs/durable.js';
import type { FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';
import type { LedgerCache } from '../cache/ledger-cache.js';
import { headVouched, rememberVerifiedHead, type HeadMemoPaths } from './head-memo.js';

/**
 * The HEAD this Ledger last verified or wrote, by its exact bytes (../cache/ 'head'): identical
 * bytes verify identically, so a writer appending in a loop checks each new HEAD once, and a
 * verb that reads HEAD again under a lock verifies it once.
 */
const verifiedHead = (cache: LedgerCache | undefined) => cache?.inMemory<{ bytes: Buffer; head: Head }>('head');

/**
 * A copy of a HEAD that shares nothing with it, so neither the cache nor a caller can change the
 * other's. Cheaper than structuredClone: a HEAD that passed headProblems (or one we built) has
 * exactly the schema's members, all primitives but `sig`, whose three members are strings.
 */
function copyHead(h: Head): Head {
  return { v: h.v, genesis: h.genesis, seq: h.seq, tail: h.tail, size: h.size, ts: h.ts, sig: { alg: h.sig.alg, key: h.sig.key, value: h.sig.value } };
}

/**
 * Parses HEAD's bytes strictly. Attacker-controlled input. `user`: the ledger's paths, when this
 * user's memo of the HEAD it verified last may spare verifying the signature again (head-memo.ts).
 */
export function parseHead(bytes: Buffer, path: string, cache?: LedgerCache, user?: HeadMemoPaths): Head {
  const memo = verifiedHead(cache);
  const verified = memo?.get();
  if (verified && verified.bytes.equals(bytes)) return copyHead(verified.head);
  // SPEC 5: HEAD is JCS(head) + "\n" (UTF-8 and canonical, as a record line: record-line.ts),
  // and its digest is computed like a record id.
  const newline = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
  const line = canonicalValue(newline ? bytes.subarray(0, -1) : bytes);
  if (line instanceof LineProblem && line.kind !== 'canonical') throw new LedgerError('OP_CORRUPT', `${path} ${line.why}`, { path }, RUN_AUDIT);
  // Parsed again only on the way to a refusal, to name what is malformed before what is not canonical.
  const value = line instanceof LineProblem ? JSON.parse(bytes.toString('utf8')) as unknown : line.value;
  const problems = headProblems(value);
  if (problems.length) throw new LedgerError('OP_CORRUPT', `${path} is malformed (${problems[0]})`, { path, problems }, RUN_AUDIT);
  if (line instanceof LineProblem || !newline) throw new LedgerError('OP_CORRUPT', `${path} is not canonical JSON`, { path }, RUN_AUDIT);
  const head = value as Head;
  // Every check above is made on every read; only the signature's may be skipped, for exactly
  // the bytes this user verified before.
  if (user === undefined || !headVouched(user, head.genesis, bytes)) {
    const digest = idFromLine(line.text, head);
    if (!verifySig('head', digest, head.sig)) {
      throw new LedgerError('OP_CORRUPT', `${path} has a signature that does not verify`, { path }, RUN_AUDIT);
    }
    if (user !== undefined) rememberVerifiedHead(user, head.genesis, bytes);
  }
  memo?.set({ bytes: Buffer.from(bytes), head: copyHead(head) });
  return head;
}

/** HEAD, or null when the ledger has none (never initialised, or a crash during init). */
export function readHead(ops: FileOps, paths: LedgerPaths): Head | null {
  return readHeadWithBytes(ops, paths)?.head ?? null;
}

/** HEAD and the exact bytes it was parsed from, or null when there is no HEAD. */
export function readHeadWithBytes(ops: FileOps, paths: LedgerPaths): { head: Head; bytes: Buffer } | null {
  let bytes: Buffer;
  try {
    bytes = ops.readFile(paths.head);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'read', paths.head);
  }
  return { head: parseHead(bytes, paths.head, paths.cache, paths), bytes };
}

/** A HEAD signed, with its exact line (one canonicalisation for the digest and the bytes). */
export interface SignedHead {
  head: Head;
  bytes: Buffer;
}

export function signHead(unsigned: Omit<Head, 'sig'>, signer: Signer): SignedHead {
  const fields: Omit<Head, 'sig'> = { v: unsigned.v, genesis: unsigned.genesis, seq: unsigned.seq, tail: unsigned.tail, size: unsigned.size, ts: unsigned.ts };
  const placed = canonicalAroundSig(fields);
  // SPEC 5: the digest is over HEAD without "sig", computed like a record id (headDigest).
  const sig: Sig = makeSig('head', digestOf(placed.unsignedText), signer);
  return { head: { ...fields, sig }, bytes: Buffer.from(placed.lineWithSig(sig)) };
}

/** Publishes HEAD with the durable replace recipe (temp, fsync, rename, fsync directory). */
export function writeHead(ops: FileOps, paths: LedgerPaths, signed: SignedHead): void {
  replaceFileDurable(ops, paths.dir, 'HEAD', signed.bytes);
  verifiedHead(paths.cache)?.set({ bytes: signed.bytes, head: copyHead(signed.head) });
}
