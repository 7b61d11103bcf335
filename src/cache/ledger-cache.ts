// The one cache layer (README.md in this folder is its policy: every cache, where it lives, how it
// is keyed, what makes it invalid, the owner and mode it must have, and the bench target it pays
// for). A cache is never the truth: the code that owns it checks what it gets against the ledger
// before it believes it, and a cache that is missing, torn or refused costs time, never an answer.
//
// Every cache is this Ledger's (a LedgerCache is made by `Ledger` and reaches the code below it
// through LedgerPaths.cache and StoreOptions.cache), never a module's: two Ledgers in one process
// share nothing but the files, and a test needs no reset. Code given no LedgerCache uses none.
//
// One switch: LEDGER_NO_CACHE=1 (read where the environment is read, `Ledger`'s constructor, and
// passed down in the LedgerCache). Then no cache is read or written, in memory or on disk, and
// every verb gives the same answers (test/cache/no-cache.test.ts): each Cache below is a no-op,
// and the record index is built in memory for the one command (RecordIndex `fresh`, no segment
// written). LEDGER_NO_CACHE=fold,fold-memo turns off the caches named (how the bench measures
// what each one pays).
import { join } from 'node:path';
import { LedgerError } from '../errors.js';
import { replaceFileDurable, replaceFileUnsynced } from '../fs/durable.js';
import { readOwnFileUpTo, readRegularFileUpTo, realFileOps, type FileOps } from '../fs/ops.js';
import { ensureStateDir } from '../store/state-dir.js';
import { LOG_LIMIT, appendStateLog, newestEntry, parsesWhole } from '../store/state-log.js';

/** Every cache there is (README.md: one row each). */
export type CacheName =
  | 'head' // the HEAD last verified or written, by its bytes (store/head.ts)
  | 'chain' // how far records.jsonl was checked, and as what file (store/chain-memo.ts)
  | 'fold' // the work-log and outcome folds this Ledger ended a fold with (handoff/fold-kept.ts)
  | 'fold-memo' // <ledger>/index/work-fold.json, which locates the records a fold uses (handoff/fold-memo.ts)
  | 'index' // the record index's segments, <ledger>/index/*.seg (causal/index/)
  | 'index-tail' // the last scan of the records past the last segment (causal/index/tail-memo.ts)
  | 'head-memo' // the HEAD this user last verified, by its exact bytes, <state>/head/<ledger> (store/head-memo.ts)
  | 'floor'; // this user's trust floor, where a gate without --floor starts its audit (store/user-floor.ts)

/** One cache as the code that owns it uses it: what it may believe after its own checks, or nothing. */
export interface Cache<T> {
  get(): T | null;
  set(value: T): void;
}

const NONE: Cache<never> = { get: () => null, set: () => undefined };

/** The variable that turns the caches off. */
export const NO_CACHE_VARIABLE = 'LEDGER_NO_CACHE';

const NAMES: readonly CacheName[] = ['head', 'chain', 'fold', 'fold-memo', 'index', 'index-tail', 'floor', 'head-memo'];

/** Which caches are off: every one, or the ones named. */
export type CachesOff = 'all' | ReadonlySet<CacheName>;

/**
 * Which caches `env` turns off. LEDGER_NO_CACHE=1: every one (the switch CI runs the command-line
 * and scenario tests with). A comma-separated list of cache names (README.md): those only, as the
 * bench measures what each pays for. Policy: unset, empty or "0" turns none off (an empty value
 * counts as unset, as for every LEDGER_ variable, SPEC 10); any other value that is not a list
 * of names turns every one off (turning a cache off never changes an answer).
 */
export function cachesOff(env: Record<string, string | undefined>): CachesOff {
  const v = env[NO_CACHE_VARIABLE];
  if (v === undefined || v === '' || v === '0') return new Set();
  const names = v.split(',').map((n) => n.trim());
  return names.every((n) => (NAMES as readonly string[]).includes(n)) ? new Set(names as CacheName[]) : 'all';
}

/** Whether `off` (cachesOff's answer) leaves cache `name` on. */
export function cacheOn(off: CachesOff, name: CacheName): boolean {
  return off !== 'all' && !off.has(name);
}

/** `off` with cache `name` off too (`true`: none was off). */
export function withOff(off: true | ReadonlySet<CacheName>, name: CacheName): ReadonlySet<CacheName> {
  return new Set([...(off === true ? [] : off), name]);
}

/** A cache file larger than this is not read (a planted file must not cost memory). */
const LEDGER_FILE_MAX = 16 << 20;

export class LedgerCache {
  private readonly memory = new Map<CacheName, unknown>();

  /**
   * `off`: the caches that are off (LEDGER_NO_CACHE; `true` for none, `false` for all, as a
   * library caller says it). `stateDir`: the per-user state directory (store/state-dir.ts)
   * where the user's caches live.
   */
  constructor(off: CachesOff | boolean, readonly stateDir: string) {
    this.off = off === true ? new Set() : off === false ? 'all' : off;
  }

  private readonly off: CachesOff;

  /** Whether cache `name` is on. */
  on(name: CacheName): boolean {
    return cacheOn(this.off, name);
  }

  /** This Ledger's in-memory cache `name` (one value: the ledger is the Ledger's). */
  inMemory<T>(name: CacheName): Cache<T> {
    if (!this.on(name)) return NONE;
    return {
      get: () => (this.memory.get(name) as T | undefined) ?? null,
      set: (value) => void this.memory.set(name, value),
    };
  }

  /**
   * A cache kept as a state log of this user's (store/state-log.ts: entries appended in place,
   * the newest whole one read), `<stateDir>/<sub>/<file>`: get is the newest entry's text, set
   * appends one (making the directory, 0700, first).
   */
  userLog(name: 'chain', sub: string, file: string): Cache<string> {
    if (!this.on(name)) return NONE;
    return {
      // Policy: believed only from a file of this user's own that no one else can write (as
      // userFile); its entries are told whole by their text (state-log.ts parsesWhole): the memo's
      // owner checks every field against the ledger before it believes it.
      get: () => {
        const bytes = readOwnFileUpTo(join(this.stateDir, sub, file), 4 * LOG_LIMIT);
        return bytes === null ? null : newestEntry(bytes.toString('utf8'), parsesWhole);
      },
      set: (json) => appendStateLog(ensureStateDir(this.stateDir, sub), file, json),
    };
  }

  /**
   * A small file of this user's, `<stateDir>/<sub>/<file>`, replaced whole (by rename, so it is
   * never torn) and read only when it is this user's own and writable by no one else (a file
   * another user could have written is no cache, fs/ops.ts readOwnFileUpTo); at most 64 KiB.
   * Unsynced (state-dir.ts): a file lost with a power cut costs the work it saved.
   */
  userFile(name: 'head-memo', sub: string, file: string): Cache<Buffer> {
    if (!this.on(name)) return NONE;
    return {
      get: () => readOwnFileUpTo(join(this.stateDir, sub, file), 64 << 10),
      set: (bytes) => {
        try {
          replaceFileUnsynced(realFileOps, ensureStateDir(this.stateDir, sub), file, bytes, 0o600);
        } catch (e) {
          // Policy: a cache the disk refuses is a cost, never a failure.
          if (!(e instanceof LedgerError) && !(e as NodeJS.ErrnoException).code) throw e;
        }
      },
    };
  }

  /**
   * A cache file in the ledger directory, `<dir>/<file>` (derived data, SPEC 3: anyone who can
   * write the ledger can write it, so its owner believes nothing it only says): its bytes, read
   * only from a regular file of at most 16 MiB; written by the durable recipe, 0644.
   */
  ledgerFile(name: 'fold-memo', ops: FileOps, dir: string, file: string): Cache<Buffer> {
    if (!this.on(name)) return NONE;
    return {
      get: () => {
        try {
          return readRegularFileUpTo(join(dir, file), LEDGER_FILE_MAX);
        } catch {
          return null;
        }
      },
      set: (bytes) => {
        try {
          ops.mkdir(dir, 0o755);
          replaceFileDurable(ops, dir, file, bytes);
        } catch (e) {
          // Policy: a cache the disk refuses is a cost, never a failure.
          if (!(e instanceof LedgerError) && !(e as NodeJS.ErrnoException).code) throw e;
        }
      },
    };
  }

  /** How the record index may use its segment files: read and write them, or neither (built in memory). */
  indexOptions(): { write?: boolean; fresh?: boolean } {
    return this.on('index') ? {} : { write: false, fresh: true };
  }
}
