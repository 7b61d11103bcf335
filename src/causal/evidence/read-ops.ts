// The reads evidence digests make, behind one small seam: the real calls by default, and in a
// test a wrapper that changes the tree at a chosen step (delete a file after its directory was
// listed, say), so "changed while digesting" is proven deterministically, not by a race.
//
// Every path here is a Buffer, so a name that is not UTF-8 reaches the disk byte for byte.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { LedgerError } from '../../errors.js';

export interface EvidenceReadOps {
  lstat(path: Buffer): Stats;
  /** The names in a directory, raw bytes, in whatever order the file system gives. */
  readdir(path: Buffer): Buffer[];
  readlink(path: Buffer): Buffer;
  /** Opens for reading: O_RDONLY | O_NOFOLLOW | O_NONBLOCK (a FIFO or a device never blocks). */
  openRead(path: Buffer): number;
  fstat(fd: number): Stats;
  read(fd: number, buf: Buffer): number;
  close(fd: number): void;
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

export const realEvidenceOps: EvidenceReadOps = {
  lstat: (p) => lstatSync(p),
  readdir: (p) => readdirSync(p, { encoding: 'buffer' }),
  readlink: (p) => readlinkSync(p, { encoding: 'buffer' }),
  openRead: (p) => openSync(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK),
  fstat: (fd) => fstatSync(fd),
  read: (fd, buf) => readSync(fd, buf, 0, buf.length, null),
  close: (fd) => closeSync(fd),
};

export function badEvidence(message: string, source: string, data: Record<string, unknown> = {}): LedgerError {
  return new LedgerError('INPUT_EVIDENCE', message, { source, ...data });
}

/** The one refusal for a tree or file that moved under the digest: retry when it is still. */
export function changedWhileDigesting(source: string, what: string): LedgerError {
  return badEvidence(`evidence ${source} changed while digesting (${what}); digest it again when it is still`, source, { changed: true });
}

export const errnoOf = (e: unknown): string | null => {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
};

/** What an lstat, fstat or mode says the thing is, in words for a refusal. */
export function kindOf(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'an unknown kind of file';
}

/** Paths in messages: bytes that are not UTF-8 show as U+FFFD (the CLI's sinks neutralise the rest). */
export const shown = (p: Buffer | string): string => (typeof p === 'string' ? p : p.toString('utf8'));
