// What `ledger init` makes in a project besides the ledger itself (SPEC 3, 7, 10): where it may
// create the ledger, the key's pin in the trust file, and, for `init --remote`, how a refused join
// puts back what init wrote. The key file and the .gitignore lines are keys/key-file.ts's and
// git-ignore.ts's; the ledger is the Ledger's (Ledger.init, Ledger.join).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { LedgerError } from '../errors.js';
import { assertReplaceable, fsyncDir, removeQuietly, replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { readTrust, writeTrust } from '../keys/trust-file.js';
import { trustEntry } from '../keys/trust.js';
import { LEDGER_DIR_NAME } from '../store/discover.js';
import { locateLedger, type LedgerLocation } from './locate.js';

/**
 * Where `init` creates the ledger: --dir or $LEDGER_DIR as named, else `.ledger` in the working
 * directory. Policy: without either, `init` refuses (exit 2) where the search of every other verb
 * would find a ledger (SPEC 3: a second one there would fork the project's log), and in a linked
 * git worktree, whose clone's ledger belongs beside the main worktree, where all its worktrees
 * find it (a ledger inside one worktree dies with it). --dir makes either one on purpose.
 */
export function initTarget(o: { cwd: string; dir?: string; envDir?: string; joining: boolean }): LedgerLocation {
  const loc = locateLedger({ cwd: o.cwd, ...(o.dir !== undefined ? { dir: o.dir } : {}), ...(o.envDir !== undefined ? { envDir: o.envDir } : {}) });
  // Policy: `init --remote` joins the ledger of this folder itself (`.ledger` here, the one every
  // verb run here uses) to a remote: that makes no second ledger, so the search's refusal does
  // not apply (src/remote/sync.ts joinLedger: publish it, or verify the remote's continuation of
  // it; a ledger already joined on this machine is refused there, "run `ledger sync`"). A ledger
  // found above this folder or beside the main worktree is still refused: join it from its root.
  const joiningHere = o.joining && loc.source !== 'none' && loc.root === resolve(o.cwd) && loc.dir === resolve(o.cwd, LEDGER_DIR_NAME);
  if (loc.source === 'flag' || loc.source === 'env' || loc.source === 'none' || joiningHere) {
    if (loc.source === 'none' && loc.linkedWorktree) {
      const { top, main } = loc.linkedWorktree;
      throw new LedgerError('INPUT_REFUSED', `${top} is a linked git worktree of ${main}, and a clone's one ledger lives beside its main worktree`, { dir: loc.dir, main }, `run \`ledger init\` in ${main} (every worktree then finds it), or pass --dir to keep a separate ledger here`);
    }
    return loc;
  }
  const where = loc.root === resolve(o.cwd) ? '' : loc.source === 'main-worktree' ? ', beside the main worktree of this git worktree' : ', in a folder above this one';
  throw new LedgerError('INPUT_EXISTS', `a ledger already exists at ${loc.dir}${where}`, { dir: loc.dir }, where ? `every verb run inside ${loc.root} uses it; to start a separate ledger here on purpose, pass --dir ${LEDGER_DIR_NAME}` : '`ledger init` never overwrites a ledger: use another --dir');
}

/**
 * The trust file `init` would pin into, checked before anything is written: never a symbolic
 * link (fs/durable.ts: it is never followed or replaced), and, when it exists, a trust file.
 */
export function assertTrustFileUsable(path: string): void {
  assertReplaceable(realFileOps, path);
  if (existsSync(path)) readTrust(path);
}

/**
 * Returns whether `publicKey` is pinned afterwards. Policy: `init` creates a trust file, or adds
 * a key it has just generated to an existing one; it never pins a key that already existed,
 * since deciding to trust an existing key is the harness's call, not the writer's.
 */
export function pinKeyInTrustFile(path: string, name: string, publicKey: string, keyWasCreated: boolean): boolean {
  if (!existsSync(path)) {
    if (!keyWasCreated) return false;
    // Issue 25: the first key is an admin, so it can authorize machines in the ledger.
    writeTrust(path, { v: 1, keys: [trustEntry(name, publicKey, 0, { admin: true })] });
    return true;
  }
  const trust = readTrust(path);
  if (trust.keys.some((k) => k.key === publicKey)) return true;
  if (!keyWasCreated) return false;
  const uniqueName = trust.keys.some((k) => k.name === name) ? `${name}-${publicKey.slice(0, 8)}` : name;
  // Only `init --new-ledger` comes here (otherLedgerOf refuses a plain init): the new ledger's first key.
  writeTrust(path, { v: 1, keys: [...trust.keys, trustEntry(uniqueName, publicKey, 0, { admin: true })] });
  return true;
}

/** What `init --remote` found before it wrote anything: the trust file's bytes, the key's folder. */
export interface BeforeJoin { keyPath: string; keyDirExisted: boolean; trustPath: string; trust: { data: Buffer; mode: number } | null }

export function beforeJoin(keyPath: string, trustPath: string): BeforeJoin {
  const trust = existsSync(trustPath) ? { data: readFileSync(trustPath), mode: statSync(trustPath).mode & 0o777 } : null;
  return { keyPath, keyDirExisted: existsSync(dirname(keyPath)), trustPath, trust };
}

/**
 * Refusals of a join that published nothing of this machine's: the remote's answer checked
 * (REMOTE_*: a fork, rollback, bad record or pin), the remote unreachable or refusing the ref,
 * contention that never settled, a bad --remote, a ledger already joined. Not a push that may
 * have landed (`maybe_published`), nor an I/O failure after one.
 */
function publishedNothing(e: unknown): boolean {
  if (!(e instanceof LedgerError) || e.data.maybe_published === true) return false;
  return e.code.startsWith('REMOTE_') || ['OP_REMOTE', 'OP_REMOTE_UNREACHABLE', 'OP_REMOTE_REFUSED', 'OP_REMOTE_CONTENDED', 'OP_LOCK_TIMEOUT', 'INPUT_EXISTS', 'USAGE'].includes(e.code);
}

/**
 * Policy: a refused `init --remote` leaves nothing half-done: when the refusal says nothing of
 * this machine's was published, the .gitignore lines, the key this init created (its folder too,
 * when init made it) and the pin it added are put back as they were, so the same command can be
 * run again once the cause is fixed. After a push that may have landed, or another failure, they
 * stay (the key may sign a published genesis); the error says what to run next. A crash in
 * between leaves them too: the next `init --remote` uses them as any existing key and pin.
 */
export function undoRefusedJoin(e: unknown, before: BeforeJoin, wrote: { created: boolean; kept: { undo: () => void } | null }): void {
  if (!publishedNothing(e)) return;
  wrote.kept?.undo();
  if (before.trust) {
    replaceFileDurable(realFileOps, dirname(before.trustPath), basename(before.trustPath), before.trust.data, before.trust.mode);
  } else if (existsSync(before.trustPath)) {
    removeQuietly(realFileOps, before.trustPath);
    fsyncDir(realFileOps, dirname(before.trustPath));
  }
  if (wrote.created) {
    removeQuietly(realFileOps, before.keyPath);
    fsyncDir(realFileOps, dirname(before.keyPath));
    if (!before.keyDirExisted) {
      try {
        realFileOps.rmdir(dirname(before.keyPath));
      } catch {
        /* not empty: something else is in it, and it stays */
      }
    }
  }
}

/**
 * Issue 25 item 4, no second ledger by accident: the trust file's part. Its trust file pins
 * keys, and not the key this init would sign the genesis with: a teammate's clone, where the
 * committed trust file names the team's ledger (a harness that provisioned a key and its pin
 * before the first init is not refused). The other part, a git remote of the project holding the
 * ledger's ref, is ../remote/probe.ts's (Ledger.remoteHoldingLedger).
 */
export function trustNamesOtherLedger(trustPath: string, publicKey: string | null): string | null {
  if (!existsSync(trustPath)) return null;
  const trust = readTrust(trustPath);
  if (publicKey !== null && trust.keys.some((k) => k.key === publicKey)) return null;
  return `the trust file ${trustPath} pins the keys of this project's ledger (${trust.keys.map((k) => k.name).join(', ')}), and this machine's key is not among them`;
}

/** The refusal of a second genesis (exit 2), with how to join instead. */
export function secondLedgerRefusal(found: { reason: string; remote: string | null }): LedgerError {
  return new LedgerError('INPUT_REFUSED', `not making a new ledger: ${found.reason}`, {}, `join it instead: \`ledger init --remote ${found.remote ?? 'REMOTE'}\` (it prints the one line an admin runs to authorize this machine); to start a second, unrelated ledger on purpose, pass --new-ledger`);
}
