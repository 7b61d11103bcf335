// Reading and writing HEAD (SPEC 5). The writer re-checks what it reads (canonical bytes,
// schema, signature) before building on it: it must never extend a forged pointer.
import { canonicalLine, headDigest } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import { headProblems, type Head } from '../record.js';
import { makeSig, verifySig, type Signer } from '../sign.js';
import { replaceFileAtomic, type FileOps } from './fsops.js';
import type { LedgerPaths } from './paths.js';
import { isCanonical } from './read.js';

// The last HEAD this process verified or wrote, by its exact bytes. Identical bytes verify
// identically, so a writer appending in a loop checks each new HEAD once, not on every append.
let verified: { bytes: Buffer; head: Head } | null = null;

/** Parses HEAD's bytes strictly. Attacker-controlled input. */
export function parseHead(bytes: Buffer, path: string): Head {
  if (verified && verified.bytes.equals(bytes)) return structuredClone(verified.head);
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LedgerError('OP_CORRUPT', `${path} is not JSON; run \`ledger audit\` to see what happened`, { path });
  }
  const problems = headProblems(value);
  if (problems.length) throw new LedgerError('OP_CORRUPT', `${path} is malformed (${problems[0]}); run \`ledger audit\``, { path, problems });
  if (!isCanonical(value, text)) throw new LedgerError('OP_CORRUPT', `${path} is not canonical JSON; run \`ledger audit\``, { path });
  const head = value as Head;
  if (!verifySig('head', headDigest(head), head.sig)) {
    throw new LedgerError('OP_CORRUPT', `${path} has a signature that does not verify; run \`ledger audit\``, { path });
  }
  verified = { bytes: Buffer.from(bytes), head: structuredClone(head) };
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

export function signHead(unsigned: Omit<Head, 'sig'>, signer: Signer): Head {
  return { ...unsigned, sig: makeSig('head', headDigest(unsigned), signer) };
}

/** Publishes HEAD with the durable replace recipe (temp, fsync, rename, fsync directory). */
export function writeHead(ops: FileOps, paths: LedgerPaths, head: Head): void {
  const bytes = Buffer.from(canonicalLine(head));
  replaceFileAtomic(ops, paths.dir, 'HEAD', bytes);
  verified = { bytes, head: structuredClone(head) };
}
