// No link is followed below a root, and a writer's roots are held to StrictModes (issue 23). A
// root is a folder the ledger works in: the ledger directory and the per-user state directory
// (strict), the folder the views and the key are written to (not strict: it is the caller's).
// Every path the real FileOps (ops.ts) is given that lies below a registered root is resolved
// here, the way sshd's StrictModes and an openat(2) walk would:
//
//   1. the root is opened (O_DIRECTORY | O_NOFOLLOW, so a root that is a link is refused) and
//      fstat-checked; on Linux the operation then goes through /proc/self/fd/N, the very folder
//      checked, so renaming or replacing the root's entry (its parent is the caller's to write)
//      between the check and the use changes nothing
//   2. each folder below it on the way is lstat-checked: a symbolic link is refused
//      (OP_SYMLINK), never followed; so is anything but a folder
//   3. the last component is opened O_NOFOLLOW, and a file opened to be read or written must be
//      the one lstat saw (same device and inode, fstat of the descriptor): a file swapped in
//      meanwhile, or a hard link to another (a write-open of a file with more than one name
//      below a strict root), is refused
//   4. StrictModes, for an operation that writes below a strict root: the root, each folder on
//      the way and the file written must belong to this process's effective user or to root,
//      and be writable by no one else (no group or other write bit); otherwise OP_INSECURE_PATH
//      (exit 3), naming the path and the fix. Below a strict root only its owner can then
//      create, rename or remove an entry, so steps 2 and 3 cannot be raced either.
//
// Policy: a path below no root (a file the caller names: --key, --trust, --floor, evidence) is
// not walked here; its readers open it with O_NOFOLLOW where it must not be a link. A reader
// (no write) gets steps 1-3 only: agents read a ledger its key owner keeps.
// Policy: where /proc/self/fd is missing (not Linux), steps 2-4 run on the path itself: the
// check is then as good as lstat before open, and the strict modes are what keep it so.
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, type Stats } from 'node:fs';
import { LedgerError } from '../errors.js';

// Root folder -> strict. Policy: a folder once registered strict stays strict (a ledger
// directory may also be where some views are written).
const roots = new Map<string, boolean>();

/** Registers `dir` (absolute, resolved) as a root; strict: its writes are held to StrictModes. */
export function confineRoot(dir: string, strict: boolean): void {
  if (dir === '/' || dir === '' || roots.get(dir) === true || roots.get(dir) === strict) return;
  roots.set(dir, strict);
}

/**
 * Registers `dir` as a root that is not strict, unless a root above it holds it already: the
 * folder a file of the durable recipe is written to (a view, a trust file, a key) is then
 * reached through the folder checked (step 1), and nothing below it is followed.
 */
export function confineFolder(dir: string): void {
  if (dir === '/' || dir === '' || roots.has(dir) || rootOf(`${dir}/x`) !== null) return;
  roots.set(dir, false);
}

/**
 * The nearest registered root `path` lies below (not the root itself), with the components below
 * it: one map lookup per folder above the path, however many roots a process has registered.
 */
function rootOf(path: string): { root: string; strict: boolean; rel: string[] } | null {
  if (roots.size === 0 || path[0] !== '/') return null;
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const strict = roots.get(path.slice(0, cut));
    if (strict === undefined) continue;
    const rel = path.slice(cut + 1).split('/').filter((c) => c !== '' && c !== '.');
    // A path that climbs out ("..") is not resolved below the root: refused.
    if (rel.includes('..')) throw new LedgerError('OP_INSECURE_PATH', `${path} leaves the folder ${path.slice(0, cut)}`, { path });
    return rel.length === 0 ? null : { root: path.slice(0, cut), strict, rel };
  }
  return null;
}

const PROC = process.platform === 'linux' && existsSync('/proc/self/fd');
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

const euid = () => process.geteuid?.() ?? -1;

/** StrictModes for one path (see step 4); null when it passes. */
export function strictProblem(st: Stats, path: string): LedgerError | null {
  const me = euid();
  if (me < 0) return null; // no uids here (Windows): nothing to compare
  if (st.uid !== me && st.uid !== 0) {
    return new LedgerError('OP_INSECURE_PATH', `${path} belongs to uid ${st.uid}, not to this user (uid ${me}) or root: whoever owns it could change what ledger writes there`, { path, owner: st.uid }, `the key owner must own it: \`chown ${me} ${path}\`, or remove it if you did not make it`);
  }
  if (st.mode & 0o022) {
    const who = st.mode & 0o002 ? 'anyone' : 'its group';
    return new LedgerError('OP_INSECURE_PATH', `${path} is writable by ${who} (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}), so it is refused`, { path, mode: st.mode & 0o7777 }, `run \`chmod go-w ${path}\``);
  }
  return null;
}

/**
 * StrictModes for a strict root itself, checked by a writer before it reads anything there
 * (what it would read, someone else could have written): an absent folder passes (init makes
 * it), a link or another owner's or a writable-by-others folder is refused.
 */
export function assertStrictRoot(dir: string): void {
  const st = lstatOrNull(dir);
  if (st === null) return;
  if (st.isSymbolicLink()) throw linkRefused(dir);
  const problem = strictProblem(st, dir);
  if (problem) throw problem;
}

export function linkRefused(path: string): LedgerError {
  return new LedgerError('OP_SYMLINK', `${path} is a symbolic link; no link is followed below the ledger's folders`, { path }, 'replace the link with the file or folder itself');
}

const lstatOrNull = (p: string): Stats | null => {
  try {
    return lstatSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw e;
  }
};

/** What an operation below a root is done through: a path the kernel resolves, and the check of step 3. */
export interface Confined {
  /** The path to hand the system call. */
  sys: string;
  /** The last component as lstat saw it before the call (null: absent); the caller compares an fstat with it. */
  seen: Stats | null;
  strict: boolean;
  release(): void;
}

const NONE: Omit<Confined, 'sys'> = { seen: null, strict: false, release: () => {} };

/**
 * Resolves `path` for one operation (steps 1, 2 and 4 for the folders; the last component is
 * lstat'ed for step 3). `write`: the operation writes (StrictModes apply below a strict root).
 * A path below no root comes back as it is. Call `release` when the operation is done.
 */
export function confine(path: string, write: boolean): Confined {
  const r = rootOf(path);
  if (r === null) return { sys: path, ...NONE };
  let fd: number | null = null;
  let base = r.root;
  const checkWrites = write && r.strict;
  try {
    if (PROC) {
      try {
        fd = openSync(r.root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // O_NOFOLLOW | O_DIRECTORY on a link: ELOOP, or ENOTDIR on some kernels: ask lstat which.
        const st = code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT' ? lstatOrNull(r.root) : undefined;
        if (st?.isSymbolicLink()) throw linkRefused(r.root);
        // Absent (init makes it), or not a folder: the operation fails as it would, without
        // ever resolving the path by name (a link planted there a moment later is not followed).
        if (code === 'ELOOP') throw linkRefused(r.root);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw Object.assign(new Error(`${code}: no such folder, '${path}'`), { code, path });
        throw e;
      }
      base = `/proc/self/fd/${fd}`;
      if (checkWrites) {
        const problem = strictProblem(fstatSync(fd), r.root);
        if (problem) throw problem;
      }
    } else {
      const st = lstatOrNull(r.root);
      if (st?.isSymbolicLink()) throw linkRefused(r.root);
      if (st === null) throw Object.assign(new Error(`ENOENT: no such folder, '${path}'`), { code: 'ENOENT', path });
      if (st && checkWrites) {
        const problem = strictProblem(st, r.root);
        if (problem) throw problem;
      }
    }
    // 2 (and 4): every folder on the way.
    let at = base;
    let shown = r.root;
    for (let i = 0; i < r.rel.length - 1; i++) {
      at = `${at}/${r.rel[i]}`;
      shown = `${shown}/${r.rel[i]}`;
      const st = lstatOrNull(at);
      if (st === null) break; // absent: the operation fails on it (or mkdir makes it)
      if (st.isSymbolicLink()) throw linkRefused(shown);
      if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, '${shown}'`), { code: 'ENOTDIR', path: shown });
      if (checkWrites) {
        const problem = strictProblem(st, shown);
        if (problem) throw problem;
      }
    }
    const sys = `${base}/${r.rel.join('/')}`;
    const seen = lstatOrNull(sys);
    const held = fd;
    fd = null;
    return { sys, seen, strict: r.strict, release: () => (held === null ? undefined : closeSync(held)) };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Step 3 for a descriptor opened through `c`: it must be the file lstat saw (when one was
 * there), and, opened to write below a strict root, pass StrictModes and have no second name.
 * Returns the fstat; throws (the caller closes the descriptor) otherwise.
 */
export function checkOpened(fd: number, c: Confined, path: string, write: boolean): Stats {
  const st = fstatSync(fd);
  if (c.seen !== null && (c.seen.dev !== st.dev || c.seen.ino !== st.ino)) {
    throw new LedgerError('OP_INSECURE_PATH', `${path} was replaced while it was being opened; nothing was read or written`, { path, replaced: true }, 'run the command again; if it happens again, someone is changing the ledger\'s files');
  }
  if (write && c.strict && st.isFile()) {
    const problem = strictProblem(st, path);
    if (problem) throw problem;
    if (st.nlink > 1) throw new LedgerError('OP_INSECURE_PATH', `${path} has ${st.nlink} names (a hard link); a ledger file is written only under its one name`, { path, nlink: st.nlink }, `copy it to a file of its own: \`cp ${path} ${path}.new && mv ${path}.new ${path}\``);
  }
  return st;
}

/** Runs `f` on the confined form of `path` (see confine), releasing it after. */
export function through<T>(path: string, write: boolean, f: (c: Confined) => T): T {
  const c = confine(path, write);
  try {
    return f(c);
  } finally {
    c.release();
  }
}
