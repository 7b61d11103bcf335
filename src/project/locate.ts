// Which ledger a command in some folder uses, found as git finds its repository (SPEC 3):
//
//   1. --dir, else $LEDGER_DIR: that directory, as named (relative to the working directory);
//   2. else the nearest `.ledger/` in the working directory or a folder above it, up to the top
//      of the git worktree it is in (../store/discover.ts says what counts as a ledger);
//   3. inside a linked worktree (`git worktree add`) that has none: the one beside the main
//      worktree (`git rev-parse --git-common-dir`), so every worktree of a clone shares one;
//   4. else on above the worktree (a project nested in a folder that has a ledger);
//   5. else none: `.ledger` in the working directory, where `ledger init` would create it.
//
// The project root is the folder that holds the ledger directory: keys/ and the views default
// to it, never to the working directory. Git is run only in a linked worktree (its `.git` is a
// file), so in a plain checkout finding the ledger costs a few lstat calls.
import { dirname, join, resolve } from 'node:path';
import { LedgerError } from '../errors.js';
import { LEDGER_DIR_NAME, ledgerIn } from '../store/discover.js';
import { gitEntryAt, mainWorktreeOf } from './git.js';

export type LedgerSource = 'flag' | 'env' | 'nearest' | 'main-worktree' | 'none';

export interface LedgerLocation {
  /** The ledger directory (absolute). With source "none", where `init` would create one. */
  dir: string;
  /** The project root: the folder that holds `dir`. */
  root: string;
  /** How it was found: --dir, $LEDGER_DIR, the upward search, the main worktree, or not at all. */
  source: LedgerSource;
  /**
   * Set when the working directory is inside a linked git worktree: its top and the main
   * worktree's. (A submodule, or a worktree of a bare repository, has no main worktree: null.)
   */
  linkedWorktree: { top: string; main: string } | null;
}

export interface LocateOptions {
  cwd: string;
  /** --dir as typed, if given. */
  dir?: string;
  /** $LEDGER_DIR, if set and not empty. */
  envDir?: string;
}

export function locateLedger(o: LocateOptions): LedgerLocation {
  const cwd = resolve(o.cwd);
  const named = o.dir ?? o.envDir;
  if (named !== undefined) {
    const dir = resolve(cwd, named);
    return { dir, root: dirname(dir), source: o.dir !== undefined ? 'flag' : 'env', linkedWorktree: null };
  }
  return searchFrom(cwd);
}

function searchFrom(cwd: string): LedgerLocation {
  let linked: LedgerLocation['linkedWorktree'] = null;
  let inWorktree = false;
  for (let d = cwd; ; ) {
    const found = ledgerIn(d);
    if (found) return { dir: found, root: d, source: 'nearest', linkedWorktree: linked };
    // The first `.git` on the way up is the top of the worktree we are in (as for git itself).
    const git = inWorktree ? null : gitEntryAt(d);
    if (git) {
      inWorktree = true;
      if (git === 'file') {
        const main = mainWorktree(d);
        if (main !== null && main !== d) {
          linked = { top: d, main };
          const beside = ledgerIn(main);
          if (beside) return { dir: beside, root: main, source: 'main-worktree', linkedWorktree: linked };
        }
      }
    }
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  return { dir: join(cwd, LEDGER_DIR_NAME), root: cwd, source: 'none', linkedWorktree: linked };
}

/**
 * Policy: fail closed. In a linked worktree, a git that cannot name the main worktree stops the
 * command (exit 3) rather than letting it go on as if there were no ledger: that path ends in a
 * second `ledger init`, a fork of the clone's log.
 */
function mainWorktree(top: string): string | null {
  try {
    return mainWorktreeOf(top);
  } catch (e) {
    throw new LedgerError('OP_IO', `${join(top, '.git')} is a file (a linked git worktree or a submodule), but ${(e as Error).message}, so the ledger beside its main worktree cannot be found`, { path: top }, 'install git or fix the worktree (`git worktree repair`), or pass --dir / set LEDGER_DIR to the ledger');
  }
}
