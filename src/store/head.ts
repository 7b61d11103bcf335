// Reading and writing HEAD (SPEC 5). The writer re-checks what it reads (canonical bytes,
// schema, signature) before building on it: it must never extend a forged pointer.
import { canonicalAroundSig, digestOf, idFromLine, isCanonicalText } from '../canonical.js';
import { LedgerError, ioError, RUN_AUDIT } from '../errors.js';
import { headProblems, type Head } from '../record.js';
import { makeSig, verifySig, type Sig, type Signer } from '../sign.js';
import { replaceFileDurable } from '../fs/durable.js';
import type { FileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

// The last HEAD this process verified or wrote, by its exact bytes. Identical bytes verify
// identically, so a writer appending in a loop checks each new HEAD once, not on every append.
let verified: { bytes: Buffer; head: Head } | null = null;

/**
 * A copy of a HEAD that shares nothing with it, so neither the cache nor a caller can change the
 * other's. Cheaper than structuredClone: a HEAD that passed headProblems (or one we built) has
 * exactly the schema's members, all primitives but `sig`, whose three members are strings.
 */
function copyHead(h: Head): Head {
  return { v: h.v, genesis: h.genesis, seq: h.seq, tail: h.tail, size: h.size, ts: h.ts, sig: { alg: h.sig.alg, key: h.sig.key, value: h.sig.value } };
}

/** Parses HEAD's bytes strictly. Attacker-controlled input. */
export function parseHead(bytes: Buffer, path: string): Head {
  if (verified && verified.bytes.equals(bytes)) return copyHead(verified.head);
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LedgerError('OP_CORRUPT', `${path} is not JSON`, { path }, RUN_AUDIT);
  }
  const problems = headProblems(value);
  if (problems.length) throw new LedgerError('OP_CORRUPT', `${path} is malformed (${problems[0]})`, { path, problems }, RUN_AUDIT);
  // SPEC 5: HEAD is JCS(head) + "\n", and its digest is computed like a record id.
  if (!text.endsWith('\n') || !isCanonicalText(value, text.slice(0, -1))) throw new LedgerError('OP_CORRUPT', `${path} is not canonical JSON`, { path }, RUN_AUDIT);
  const head = value as Head;
  const digest = idFromLine(text, head);
  if (!verifySig('head', digest, head.sig)) {
    throw new LedgerError('OP_CORRUPT', `${path} has a signature that does not verify`, { path }, RUN_AUDIT);
  }
  verified = { bytes: Buffer.from(bytes), head: copyHead(head) };
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
  return { head: parseHead(bytes, paths.head), bytes };
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
  verified = { bytes: signed.bytes, head: copyHead(signed.head) };
}
