// This user's own trust floor for a ledger (issue 26, item 3): where a gate without `--floor`
// starts its chain audit, as the read verbs start from this user's verified-chain memo.
//
// `<state>/floor/<ledger>-<trust>.json`, in the audit's floor format (audit/floor.ts), in the
// per-user state directory (0700, never in `.ledger/`, which anyone who writes the ledger can
// write). It is written after a gate's chain audit passes, and read by the next gate of this
// user on this ledger under the same trust file: the records under it are not audited again,
// the records the decision relies on are still verified one by one (as with `--floor`).
//
// Policy: the floor is keyed by the trust file's content as well as the ledger: a floor kept
// under other trust (a key revoked, a pin changed) is not used, and the gate audits from the
// start. A ledger rolled back below the floor, or rewritten under it, holds the gate (the
// auditor's freshness and linkage layers): this user verified more than the ledger shows now
// (SPEC 11). A missing or unreadable one costs a full audit, never an answer
// (test/causal/gate-own-floor.test.ts).
import { lstatSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readFloor } from '../../audit/floor.js';
import { canonicalJson, canonicalLine, sha256Hex } from '../canonical.js';
import { replaceFileDurable } from '../fs/durable.js';
import { readOwnFileUpTo, realFileOps } from '../fs/ops.js';
import type { Trust } from '../keys/trust.js';
import type { TrustFloor } from '../record.js';
import type { LedgerPaths } from './paths.js';
import { ensureStateDir, ledgerKeyPath, ledgerStateName, stateDirOf } from './state-dir.js';

const SUB = 'floor';

/** The file of this user's floor for the ledger at `paths`, genesis `genesis`, under `trust`. */
export function userFloorPath(paths: Pick<LedgerPaths, 'dir' | 'stateDir'>, genesis: string, trust: Trust): string {
  const trustName = sha256Hex(canonicalJson(trust)).slice(0, 16);
  return join(stateDirOf(paths), SUB, `${ledgerStateName(ledgerKeyPath(paths.dir), genesis)}-${trustName}.json`);
}

/**
 * Whether this user's kept floor at `path` can be started from: `none` (the first gate), `usable`
 * (a regular file that reads as a floor, audit/floor.ts readFloor), or damaged, with why.
 * Policy (the header's: a missing or unreadable one costs a full audit, never an answer): a
 * damaged one (a disk error, a hand edit, a link) is not started from; the gate audits from the
 * genesis, says so, and its pass replaces the file. Found by a property test that damaged every
 * derived file: the gate stopped with INPUT_JSON at every run until the file was removed by hand.
 */
export function userFloorState(path: string): 'none' | 'usable' | { damaged: string } {
  try {
    if (!lstatSync(path).isFile()) return { damaged: 'not a regular file' };
  } catch {
    return 'none';
  }
  try {
    return readFloor(path) === null ? 'none' : 'usable';
  } catch (e) {
    return { damaged: (e as Error).message.replace(`floor file ${path} `, '') };
  }
}

/** Keeps `floor` as this user's (durably: a crash leaves the old floor or the new). Never throws: a floor not kept costs time only. */
export function keepUserFloor(paths: Pick<LedgerPaths, 'stateDir'>, path: string, floor: TrustFloor): void {
  keep(paths, path, floor); // else the next gate audits from the start
}

/** Writes `value` as `path` in this user's floor folder (durably, 0600). Never throws: what is not kept costs time only. */
function keep(paths: Pick<LedgerPaths, 'stateDir'>, path: string, value: object): void {
  try {
    replaceFileDurable(realFileOps, ensureStateDir(stateDirOf(paths), SUB), basename(path), Buffer.from(canonicalLine(value)), 0o600);
  } catch {
    /* not kept */
  }
}

// The tree's right edge at a floor the caller names by file (`gate --floor FILE`): a floor in SPEC
// 8's five fields carries none, and `gate` never rewrites the caller's floor, so without this
// every gate from it would hash the whole tree again to check the checkpoint (SPEC 13): 1.4 s on
// 200,000 records. This user's first gate from such a floor hashes from the genesis and keeps the
// edge there, keyed by the floor's genesis, seq and id; the next gates from the same floor hash
// only what is new. Policy: trusted as the floor is (this user's own audit computed it); a file
// that does not parse, is not this user's own or names another floor is not used (one full
// hashing, then it is replaced).

/** Where this user keeps the edge at a named floor of the ledger at `paths`, under `trust`. */
export function floorTreePath(paths: Pick<LedgerPaths, 'dir' | 'stateDir'>, genesis: string, trust: Trust): string {
  return userFloorPath(paths, genesis, trust).replace(/\.json$/, '.tree.json');
}

/** The edge kept at exactly `floor` (genesis, seq, id), or undefined. Never throws. */
export function readFloorTree(path: string, floor: Pick<TrustFloor, 'genesis' | 'seq' | 'id'>): string[] | undefined {
  const bytes = readOwnFileUpTo(path, 8192);
  if (bytes === null) return undefined;
  try {
    const v = JSON.parse(bytes.toString('utf8')) as { genesis?: unknown; seq?: unknown; id?: unknown; tree?: unknown };
    if (v.genesis !== floor.genesis || v.seq !== floor.seq || v.id !== floor.id) return undefined;
    if (!Array.isArray(v.tree) || v.tree.length > 64 || !v.tree.every((h) => typeof h === 'string')) return undefined;
    return v.tree as string[];
  } catch {
    return undefined;
  }
}

/**
 * For an audit from a floor file the caller names in SPEC 8's five fields (it carries no edge):
 * where this user keeps the edge at that very floor, and the edge kept there, if any. null when
 * the file carries its own edge, names a ledger other than `genesis` (when given), or cannot be
 * read: the auditor reads the floor itself, and refuses it. Never throws.
 */
export function namedFloorTree(paths: Pick<LedgerPaths, 'dir' | 'stateDir'>, floorFile: string, genesis: string | null, trust: Trust): { path: string; tree: string[] | undefined } | null {
  try {
    const floor = readFloor(floorFile);
    if (floor === null || floor.tree !== undefined || (genesis !== null && floor.genesis !== genesis)) return null;
    const at = floorTreePath(paths, floor.genesis, trust);
    return { path: at, tree: readFloorTree(at, floor) };
  } catch {
    return null;
  }
}

/** Keeps the edge at `floor` (durably). Never throws: an edge not kept costs the next gate time only. */
export function keepFloorTree(paths: Pick<LedgerPaths, 'stateDir'>, path: string, floor: Pick<TrustFloor, 'genesis' | 'seq' | 'id'>, tree: string[]): void {
  keep(paths, path, { genesis: floor.genesis, seq: floor.seq, id: floor.id, tree }); // else the next gate hashes from the genesis again
}
