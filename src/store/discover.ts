// Which ledger a folder belongs to, on disk alone (SPEC 3): the nearest `.ledger/` in the folder
// or one above it. Read-only. Git worktrees (the ledger beside the main worktree) are the
// concern of ../project/locate.ts, which calls these; the store uses them only to say, when a
// directory holds no ledger, where the nearest one is instead of advising `ledger init`.
import { lstatSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { LedgerError, ioError } from '../errors.js';

/** The ledger directory's name when nobody names another (SPEC 3). */
export const LEDGER_DIR_NAME = '.ledger';

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    // Fail closed: a folder we may not look into might hold the ledger; guessing past it could
    // pick another one (or none, and `init` a second).
    throw ioError(e, 'look for a ledger in', dirname(path));
  }
}

/**
 * `folder/.ledger` when it is a ledger: a real directory holding `HEAD` or `records.jsonl` (a
 * damaged ledger is still this folder's ledger, so nothing searches past it or `init`s over it).
 *
 * Policy: an empty `.ledger/` directory, or a `.ledger` that is a plain file, is not a ledger (it
 * is someone else's, or an `init` that never wrote a byte) and the search goes on above it. A
 * `.ledger` that is a symbolic link is refused (exit 3), not followed and not skipped: a link
 * planted in a repository could send this user's signed records into another ledger, and
 * skipping it would silently pick a different one. So is a `.ledger/` owned by someone other
 * than this user, root, or the owner of the folder that holds it (a ledger planted in a shared
 * folder such as /tmp). Either is used on purpose by naming it: `--dir` or `LEDGER_DIR`.
 */
export function ledgerIn(folder: string): string | null {
  const dir = join(resolve(folder), LEDGER_DIR_NAME);
  const st = lstatOrNull(dir);
  if (st === null) return null;
  if (st.isSymbolicLink()) {
    throw new LedgerError('OP_INSECURE_PATH', `${dir} is a symbolic link; a ledger found by searching must be a real directory`, { path: dir }, `to use the ledger it points to on purpose, pass --dir ${dir} or set LEDGER_DIR`);
  }
  if (!st.isDirectory()) return null;
  if (lstatOrNull(join(dir, 'HEAD')) === null && lstatOrNull(join(dir, 'records.jsonl')) === null) return null;
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  if (uid !== null && st.uid !== uid && st.uid !== 0) {
    const parent = lstatOrNull(dirname(dir));
    if (parent === null || parent.uid !== st.uid) {
      throw new LedgerError('OP_INSECURE_PATH', `${dir} is owned by uid ${st.uid}, neither you (uid ${uid}) nor the owner of ${dirname(dir)}: anyone could have put it there`, { path: dir, owner: st.uid }, `to use it on purpose, pass --dir ${dir} or set LEDGER_DIR`);
    }
  }
  return dir;
}

/** The nearest ledger in `start` or a folder above it (disk only), or null. */
export function nearestLedger(start: string): string | null {
  for (let d = resolve(start); ; ) {
    const found = ledgerIn(d);
    if (found) return found;
    const up = dirname(d);
    if (up === d) return null;
    d = up;
  }
}
