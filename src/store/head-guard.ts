// What a writer (and `recover`) may build on (SPEC 5; issue 13 finding 1, issue 14 item 10):
//
//   1. trust: HEAD's key is the writer's own signing key, or is pinned in the trust file and
//      valid at HEAD's seq (SPEC 7). A HEAD signed by any other key is a keyless attacker's:
//      building on it would quarantine published records and re-sign the rest. OP_UNTRUSTED_HEAD.
//   2. the mark: never below the highest HEAD this writer (this user, with this key) has
//      published to this ledger. The mark lives in the per-user state directory (state-dir.ts)
//      and holds that HEAD's seq, its tail id and where the tail's line starts, so a check is
//      O(1): HEAD's seq below the mark is a rollback (OP_ROLLBACK: an older genuine HEAD copied
//      back, a `git checkout` of a committed .ledger/); the record at the mark's seq not being
//      the mark's tail is a fork (OP_FORK).
// Each refusal exits 3, names the cause and changes nothing: it is made under the lock, before
// anything is written.
import { LedgerError, RUN_AUDIT } from '../errors.js';
import { LineProblem, decodeRecordLine } from '../record-line.js';
import { linesForward, openToRead } from '../fs/lines.js';
import { readdirBelow, type FileOps } from '../fs/ops.js';
import { readTrust } from '../keys/trust-file.js';
import type { Trust } from '../keys/trust.js';
import { acceptProblem, pinOf, type Grants } from '../keys/grants.js';
import type { Head } from '../record.js';
import type { LedgerPaths } from './paths.js';
import { ensureStateDir, keyStateName, ledgerStateName } from './state-dir.js';
import { appendStateLog, readStateLog } from './state-log.js';

/** Where a writer finds the pins that HEAD's key is checked against: a trust file, the parsed keys, or none. */
export type TrustRef = { path: string } | { trust: Trust } | null;

/** A writer's guard: its per-user state directory and its trust file. */
export interface WriterGuard {
  stateDir: string;
  trust: TrustRef;
}

const short = (k: string) => (k.length > 12 ? `${k.slice(0, 12)}…` : k);

function untrusted(head: Head, why: string): LedgerError {
  return new LedgerError('OP_UNTRUSTED_HEAD', `refusing to build on HEAD (seq ${head.seq}): it is signed by key ${short(head.sig.key)}, ${why}`, { seq: head.seq, key: head.sig.key }, 'a HEAD signed by a key that is neither pinned nor yours was not written by a writer you trust: run `ledger audit`, and restore the ledger from a trusted copy');
}

/**
 * The trust a writer checks against, parsed; null when none was given, or (Policy) when the
 * trust file named does not exist: then no audit can run either, and `ledger init` makes one.
 * A trust file that exists but cannot be read or parsed is refused (fail closed).
 */
export function writerTrust(trust: TrustRef): Trust | null {
  if (trust === null) return null;
  if ('trust' in trust) return trust.trust;
  try {
    return readTrust(trust.path);
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'INPUT_TRUST' && /^no trust file at /.test(e.message)) return null;
    throw e;
  }
}

/**
 * Step 1. Throws OP_UNTRUSTED_HEAD. `ownKey`: the writer's public key (null: it has none, as
 * `recover`). `grants`: the keys `key` records authorized (SPEC 7), asked for only when HEAD's
 * key is not pinned.
 */
export function assertTrustedHead(head: Head, ownKey: string | null, trust: TrustRef, grants?: (trust: Trust) => Grants): void {
  if (ownKey !== null && head.sig.key === ownKey) return;
  const notOwn = ownKey === null ? 'and no signing key was given' : 'not this writer\'s key';
  if (trust === null) throw untrusted(head, `${notOwn}, and no trust file was given to check it against`);
  let keys: Trust;
  if ('trust' in trust) keys = trust.trust;
  else {
    try {
      keys = readTrust(trust.path);
    } catch (e) {
      // Policy: a trust file that cannot be read is no pin: fail closed, saying why.
      throw untrusted(head, `${notOwn}, and the trust file cannot be read (${(e as Error).message})`);
    }
  }
  let problem = acceptProblem(keys, null, head.sig.key, head.seq, null);
  if (problem && !pinOf(keys, head.sig.key) && grants) problem = acceptProblem(keys, grants(keys), head.sig.key, head.seq, null);
  if (problem) throw untrusted(head, `${notOwn}, and ${problem}`);
}

/** The highest HEAD a writer published: its seq, tail id, and where the tail's line starts. */
export interface Mark {
  seq: number;
  tail: string;
  offset: number;
}

interface MarkFile extends Mark {
  v: 1;
  dir: string;
  genesis: string;
  key: string;
}

function markDir(stateDir: string): string {
  return `${stateDir}/marks`;
}

function markName(real: string, genesis: string, key: string): string {
  return `${ledgerStateName(real, genesis)}-${keyStateName(key)}.json`;
}

function badMark(path: string, why: string): LedgerError {
  return new LedgerError('OP_STATE', `the writer mark ${path} ${why}`, { path }, 'if `ledger audit` passes and the ledger is the one you wrote, remove that file (the mark starts again from the next append)');
}

/**
 * Reads one mark file (a state log, state-log.ts: its newest whole entry); null when there is
 * none. Policy: one with no entry that parses is refused, never ignored.
 */
function readMarkFile(path: string, real: string, genesis: string, key: string | null): Mark | null {
  const log = readStateLog(path);
  if (log === null) return null;
  let m: MarkFile;
  try {
    if (log.text === null) throw new Error('no whole entry');
    m = JSON.parse(log.text) as MarkFile;
  } catch {
    throw badMark(path, 'is not JSON');
  }
  const ok = m !== null && typeof m === 'object' && m.v === 1 && m.dir === real && m.genesis === genesis && (key === null || m.key === key) &&
    Number.isSafeInteger(m.seq) && m.seq >= 0 && Number.isSafeInteger(m.offset) && m.offset >= 0 && typeof m.tail === 'string';
  if (!ok) throw badMark(path, 'is not a mark of this ledger and key');
  return { seq: m.seq, tail: m.tail, offset: m.offset };
}

/** This writer's mark for the ledger at `paths` with genesis `genesis`; null when it never published there. */
export function readMark(stateDir: string, paths: LedgerPaths, genesis: string, key: string): Mark | null {
  const real = paths.real;
  return readMarkFile(`${markDir(stateDir)}/${markName(real, genesis, key)}`, real, genesis, key);
}

/** Every mark of this user for the ledger (any key): what `recover`, which may have no key, checks. */
export function readAllMarks(stateDir: string, paths: LedgerPaths, genesis: string): Mark[] {
  const real = paths.real;
  const prefix = `${ledgerStateName(real, genesis)}-`;
  let names: string[];
  try {
    names = readdirBelow(markDir(stateDir));
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(prefix) && n.endsWith('.json')).flatMap((n) => readMarkFile(`${markDir(stateDir)}/${n}`, real, genesis, null) ?? []);
}

/** Step 2. Throws OP_ROLLBACK or OP_FORK. One read, of the line at the mark's offset. */
export function checkMark(ops: FileOps, paths: LedgerPaths, head: Head, mark: Mark): void {
  if (head.seq < mark.seq) {
    throw new LedgerError('OP_ROLLBACK', `refusing to build on HEAD (seq ${head.seq}): this writer has published through seq ${mark.seq}; the ledger was rolled back`, { seq: head.seq, mark: mark.seq }, 'a copied-back HEAD or a `git checkout` of .ledger/ undoes published records: restore the newer ledger, then run `ledger audit`');
  }
  const fork = (why: string) =>
    new LedgerError('OP_FORK', `refusing to build on HEAD (seq ${head.seq}): this writer published seq ${mark.seq} as ${short(mark.tail)}, but ${why}; the ledger was forked`, { seq: head.seq, mark: mark.seq }, RUN_AUDIT);
  if (head.seq === mark.seq) {
    if (head.tail !== mark.tail) throw fork(`HEAD names ${short(head.tail)} at that seq`);
    return;
  }
  let line: Buffer | null = null;
  const fd = openToRead(ops, paths.records);
  try {
    for (const l of linesForward(ops, fd, paths.records, mark.offset, head.size, 4096)) {
      line = l.bytes;
      break;
    }
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'OP_CORRUPT') throw e;
  } finally {
    ops.close(fd);
  }
  const got = line === null ? null : decodeRecordLine(line);
  if (got === null || got instanceof LineProblem) throw fork(`there is no record line at byte ${mark.offset}`);
  if (got.record.seq !== mark.seq || got.id !== mark.tail) throw fork(`the record at byte ${mark.offset} is seq ${String(got.record.seq)} ${short(got.id)}`);
}

/**
 * Raises this writer's mark to what it just published. Policy: called after HEAD is durable,
 * and best effort: the record is published either way, and a mark that could not be written
 * stays at the older HEAD, which still guards everything below it (the state directory was
 * made before the append, so this fails only when the disk refuses).
 */
export function raiseMark(stateDir: string, paths: LedgerPaths, genesis: string, key: string, mark: Mark): void {
  const real = paths.real;
  const file: MarkFile = { v: 1, dir: real, genesis, key, seq: mark.seq, tail: mark.tail, offset: mark.offset };
  try {
    appendStateLog(markDir(stateDir), markName(real, genesis, key), JSON.stringify(file));
  } catch {
    /* see the Policy above */
  }
}

/** Makes the marks directory before an append, so a state directory that refuses is refused up front. */
export function prepareMarks(stateDir: string): void {
  ensureStateDir(stateDir, 'marks');
}
