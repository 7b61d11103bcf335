// Where a ledger's files live (SPEC 3). Anything beyond records.jsonl, HEAD and quarantine/ is
// ours, derivable from those two files, and never trusted by the auditor.
import { lstatSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LedgerCache } from '../cache/ledger-cache.js';
import { confineRoot } from '../fs/confine.js';
import { ledgerKeyPath, ledgerStateName } from './state-dir.js';

export interface LedgerPaths {
  dir: string;
  records: string;
  head: string;
  lock: string;
  quarantine: string;
  /**
   * The per-user state directory (state-dir.ts) whose verified-chain memo the readers of these
   * paths use; undefined: the one process.env names. Writers are given theirs explicitly.
   */
  stateDir?: string;
  /**
   * What the Ledger that reads these paths has cached about them (../cache/): every reader and
   * writer below the Ledger finds its caches here; undefined: none at all.
   */
  cache?: LedgerCache;
  /**
   * The ledger directory as its per-user state is keyed (state-dir.ts ledgerKeyPath: its
   * realpath), taken the first time it is asked of these paths: an append asks it for the
   * writer's mark and the chain memo four times, each realpath a readlink per folder. A folder
   * renamed while these paths are in use keeps the name they first had.
   */
  readonly real: string;
  /**
   * state-dir.ts ledgerStateName(real, genesis), taken once per genesis for these paths: every
   * read verb names two state files by it (the chain memo, the HEAD memo), each a SHA-256.
   */
  stateName?(genesis: string): string;
}

/** The part of a state file's name that says which ledger `paths` is, with this genesis. */
export const stateNameOf = (paths: Pick<LedgerPaths, 'real' | 'stateName'>, genesis: string): string =>
  paths.stateName ? paths.stateName(genesis) : ledgerStateName(paths.real, genesis);

/**
 * The ledger directory as its files are reached: absolute, and, when the name given is itself a
 * symbolic link (a ledger named on purpose through one: discovery never finds one), the folder
 * it points to, resolved once here. Below it nothing is followed: it is a strict root of
 * fs/confine.ts (no link at any folder on the way, StrictModes for every write).
 */
export function ledgerDirOf(dir: string): string {
  const d = resolve(dir);
  try {
    if (lstatSync(d).isSymbolicLink()) return realpathSync.native(d);
  } catch {
    /* absent (init makes it), or unreadable: used as named, and refused where it is used */
  }
  return d;
}

export function ledgerPaths(dir: string, stateDir?: string, cache?: LedgerCache): LedgerPaths {
  const d = ledgerDirOf(dir);
  confineRoot(d, true);
  let real: string | undefined;
  let named: { genesis: string; name: string } | undefined;
  return {
    get real() {
      return (real ??= ledgerKeyPath(d));
    },
    stateName(genesis: string) {
      if (named?.genesis !== genesis) named = { genesis, name: ledgerStateName(this.real, genesis) };
      return named.name;
    },
    dir: d,
    records: join(d, 'records.jsonl'),
    head: join(d, 'HEAD'),
    lock: join(d, 'lock'),
    quarantine: join(d, 'quarantine'),
    ...(stateDir !== undefined ? { stateDir } : {}),
    ...(cache !== undefined ? { cache } : {}),
  };
}
