// The per-user state directory (SPEC 5): what a writer must remember about a ledger where the
// ledger's own directory cannot reach it, since anyone who can write `.ledger/` could rewrite it
// there. Three kinds of file, each named by a digest of what it is about:
//
//   marks/<ledger>-<key>.json   the highest HEAD this user published with this key (head-guard.ts)
//   chain/<ledger>.json         how far records.jsonl was verified, and as what file (chain-memo.ts)
//   head/<ledger>               the HEAD bytes whose signature this user verified last (head-memo.ts)
//
// `<ledger>` digests the realpath of the ledger directory and its genesis id, so two copies of
// one fixture in different temp folders never share a file, and a ledger replaced by another
// (a new genesis) starts afresh. Where it is: $LEDGER_STATE_DIR, else
// $XDG_STATE_HOME/handoff-ledger, else ~/.local/state/handoff-ledger, from the environment the
// caller passes (the CLI passes its own; a library caller, OpenOptions.env or .stateDir).
//
// Each is a state log (state-log.ts): entries appended in place, the newest whole one read.
// Policy: these files need not survive a power cut, so they are written without the fsyncs
// (fs/durable.ts appendFileUnsynced, replaceFileUnsynced): a mark lost with the last seconds
// before a power cut leaves an older mark, which still guards everything below it; a lost memo
// costs one full check. The directory is made 0700 and the files 0600: they say which ledgers a
// user writes.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sha256Hex } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import { confineRoot } from '../fs/confine.js';
import { realFileOps } from '../fs/ops.js';
import type { LedgerPaths } from './paths.js';

export type Env = Record<string, string | undefined>;

const set = (env: Env, name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);

/** The state directory for `env` (SPEC 5; docs/guarantees.md "The per-user state directory"). */
export function stateDirFrom(env: Env): string {
  const dir = stateDirNamed(env);
  // A strict root (fs/confine.ts): nothing below it is a link, and what this user writes there
  // must be its own and writable by no one else (issue 23: it was trusted unchecked).
  confineRoot(dir, true);
  return dir;
}

function stateDirNamed(env: Env): string {
  const explicit = set(env, 'LEDGER_STATE_DIR');
  if (explicit !== undefined) return resolve(explicit);
  const xdg = set(env, 'XDG_STATE_HOME');
  if (xdg !== undefined) return resolve(xdg, 'handoff-ledger');
  // Policy: without HOME in the environment, the account's home directory (os.homedir reads
  // the password database), so a writer run with a scrubbed environment keeps the same marks.
  return join(set(env, 'HOME') ?? process.getBuiltinModule('node:os').homedir(), '.local', 'state', 'handoff-ledger');
}

/**
 * The ledger directory as its state is keyed: its realpath, so `./.ledger`, an absolute path and
 * a path through a link name one ledger. Policy: a directory that does not resolve on this disk
 * (a simulated one in the fault tests) is keyed by its absolute path.
 */
export function ledgerKeyPath(dir: string): string {
  try {
    return realpathSync.native(dir);
  } catch {
    return resolve(dir);
  }
}

const digest = (...parts: string[]) => sha256Hex(parts.join('\0')).slice(0, 32);

/** The part of a state file's name that says which ledger it is about. */
export function ledgerStateName(realDir: string, genesis: string): string {
  return digest('ledger', realDir, genesis);
}

/** The part that says which signing key. */
export function keyStateName(publicKey: string): string {
  return digest('key', publicKey);
}

/** Reads a state file; null when it is not there. Only a regular file is read, never a link. */
export function readStateFile(path: string): Buffer | null {
  try {
    return realFileOps.readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e instanceof LedgerError ? e : ioError(e, 'read', path);
  }
}

/** The per-user state directory a ledger's paths name, else the one this process's environment does. */
export function stateDirOf(paths: Pick<LedgerPaths, 'stateDir'>): string {
  if (paths.stateDir !== undefined) confineRoot(paths.stateDir, true);
  return paths.stateDir ?? stateDirFrom(process.env);
}

/** Makes `stateDir/sub` (0700); a writer calls this before it publishes, so a refusal changes nothing. */
export function ensureStateDir(stateDir: string, sub: string): string {
  confineRoot(stateDir, true);
  const dir = join(stateDir, sub);
  try {
    realFileOps.mkdir(dir, 0o700);
  } catch (e) {
    throw new LedgerError('OP_STATE', `cannot create the per-user state directory ${dir} (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { path: dir }, 'set LEDGER_STATE_DIR to a directory you can write');
  }
  return dir;
}
