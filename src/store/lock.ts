// The cross-process writer lock: `<dir>/lock`, created with O_EXCL and holding who took it.
//
// Policy: a lock whose holder is gone (same host, pid no longer running) is taken over; a lock
// held by a live process, or by a process on another host (we cannot tell whether it lives), is
// waited for up to a bound, then refused with OP_LOCK_TIMEOUT naming the holder.
// Policy (issue 13 finding 17): a lock records its holder's start time (Linux: /proc/PID/stat's
// starttime); a live pid that started at another time is a reused pid, not the holder, and the
// lock is taken over. A lock that is a symbolic link (dangling or not), a FIFO, a socket or a
// device was made by no writer (ours are regular files, created O_EXCL | O_NOFOLLOW): it is taken
// over too, by unlinking the name itself, never what it points to. A directory there cannot be
// unlinked: it is refused at once (OP_NOT_REGULAR), not waited on. Takeover is
// serialised by a second, short-lived guard (`lock.takeover`), and the stale lock is re-read
// under the guard, so two waiters can never both remove a lock and both believe they hold it.
import { readFileSync } from 'node:fs';
import { nodeCrypto } from '../node-crypto.js';
import { LedgerError, ioError } from '../errors.js';
import { writeAll } from '../fs/durable.js';
import { fsError, type FileOps } from '../fs/ops.js';

export interface LockInfo { pid: number; host: string; nonce: string; since: string; boot?: string; start?: string }

export interface HeldLock { path: string; info: LockInfo; release(): void }

// This host's name as os.hostname() gives it (the kernel's nodename). On Linux it is read from
// /proc, which spares every writer loading the os module (a few tenths of a millisecond of each
// `ledger append`); elsewhere, or if that read fails, os.hostname() itself.
const HOST: string = (() => {
  try {
    const name = readFileSync('/proc/sys/kernel/hostname', 'utf8').trim();
    if (name) return name;
  } catch {
    /* not Linux */
  }
  return process.getBuiltinModule('node:os').hostname();
})();
// This boot of the kernel (Linux). A power cut can bring back a lock whose removal never reached
// the disk; after the reboot its pid may name an unrelated live process, which would hold every
// writer off for good. A lock from another boot of this host is stale whatever its pid.
const BOOT: string | null = (() => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
})();
// A lock file with no parseable content older than this was left by a holder that died between
// creating and writing it.
const UNWRITTEN_GRACE_MS = 2_000;
// The takeover guard is held for a few syscalls; one older than this belongs to a dead waiter.
const GUARD_STALE_MS = 5_000;

/** When process `pid` started, in clock ticks since boot (Linux), or null when it cannot be told. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: fields count from after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19]; // field 22, starttime
    return start !== undefined && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
}
const START: string | null = startTimeOf(process.pid);

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepMs(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface SeenLock { info: LockInfo | null; raw: string; ageMs: number; planted?: 'link' | 'other' }

function readLock(ops: FileOps, path: string): SeenLock | null {
  try {
    let bytes: Buffer;
    try {
      bytes = ops.readFile(path);
    } catch (e) {
      // Not a regular file (fs/ops.ts readFile refuses it): planted, see the Policy above.
      const code = (e as { code?: unknown }).code;
      if (code === 'OP_SYMLINK') return { info: null, raw: 'planted:link', ageMs: Infinity, planted: 'link' };
      if (code === 'OP_NOT_REGULAR' && (e as LedgerError).data.kind !== 'dir') return { info: null, raw: 'planted:other', ageMs: Infinity, planted: 'other' };
      throw e;
    }
    const raw = bytes.toString('utf8');
    let info: LockInfo | null = null;
    try {
      const v = JSON.parse(raw);
      if (Number.isSafeInteger(v.pid) && typeof v.host === 'string' && typeof v.nonce === 'string') info = v;
    } catch {
      info = null;
    }
    // The age only matters for a lock whose holder died before writing who it was.
    const ageMs = info ? 0 : Date.now() - (mtimeOf(ops, path) ?? Date.now());
    return { info, raw, ageMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'read lock', path);
  }
}

function mtimeOf(ops: FileOps, path: string): number | null {
  try {
    return ops.mtimeMs(path);
  } catch {
    return null;
  }
}

// Nonces of locks this thread took and then failed to remove: its own later acquisitions may take
// them over, as they would a dead process's. (Another thread of this process has other nonces.)
const orphaned = new Set<string>();

function isStale(l: SeenLock): boolean {
  if (l.planted) return true;
  if (!l.info) return l.ageMs > UNWRITTEN_GRACE_MS;
  if (l.info.host === HOST && BOOT !== null && typeof l.info.boot === 'string' && l.info.boot !== BOOT) return true;
  if (l.info.host === HOST && l.info.pid === process.pid) return orphaned.has(l.info.nonce);
  if (l.info.host !== HOST) return false;
  if (!pidAlive(l.info.pid)) return true;
  // Alive: the holder only if it is the process that took the lock (same start time). A lock
  // without a start time (an older writer, or not Linux) is believed.
  if (typeof l.info.start !== 'string') return false;
  const now = startTimeOf(l.info.pid);
  return now !== null && now !== l.info.start;
}

// Policy: the lock is created in place, not by fs/durable.ts, and never fsynced. Its creation
// is the mutual exclusion ('wx': O_CREAT | O_EXCL | O_NOFOLLOW, so a planted link is a held lock,
// never followed), and it must not outlive its holder: one a power cut brings back is stale by
// its boot id, one left unwritten by its age.
function tryCreate(ops: FileOps, path: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = ops.open(path, 'wx', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw ioError(e, 'create lock', path);
  }
  try {
    writeAll(ops, fd, Buffer.from(JSON.stringify(info)), 0);
  } catch (e) {
    // A lock that says nobody holds every writer off for the grace period: take it back.
    try {
      ops.unlink(path);
    } catch {
      /* it ages out after UNWRITTEN_GRACE_MS */
    }
    throw ioError(e, 'write lock', path);
  } finally {
    ops.close(fd);
  }
  return true;
}

/** Removes a stale lock under the takeover guard; returns true if it removed one. */
function takeOver(ops: FileOps, path: string, seenRaw: string): boolean {
  const guard = `${path}.takeover`;
  try {
    ops.mkdirExclusive(guard);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') throw ioError(e, 'create lock guard', guard);
    const m = mtimeOf(ops, guard);
    if (m !== null && Date.now() - m > GUARD_STALE_MS) {
      try {
        removeGuard(ops, guard);
      } catch {
        /* another waiter removed it */
      }
    }
    return false;
  }
  try {
    const again = readLock(ops, path);
    if (again && again.raw === seenRaw && isStale(again)) {
      ops.unlink(path);
      return true;
    }
    return false;
  } finally {
    removeGuard(ops, guard);
  }
}

function removeGuard(ops: FileOps, p: string): void {
  try {
    ops.rmdir(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * Takes the lock at `path`, waiting up to `waitMs` for a live holder. Returns a handle whose
 * `release()` removes the lock only if it is still ours.
 */
export function acquireLock(ops: FileOps, path: string, waitMs: number): HeldLock {
  try {
    return waitForLock(ops, path, waitMs);
  } catch (e) {
    throw fsError(e, 'take the lock', path);
  }
}

// A nonce names one acquisition. Random per process (pids are reused) and counted within it, so a
// writer appending in a loop does not draw from the system's random source for every lock.
let noncePrefix: string | null = null;
let nonceCount = 0;
function nextNonce(): string {
  noncePrefix ??= nodeCrypto().randomBytes(8).toString('hex');
  return `${noncePrefix}-${(nonceCount++).toString(36)}`;
}

function waitForLock(ops: FileOps, path: string, waitMs: number): HeldLock {
  const info: LockInfo = { pid: process.pid, host: HOST, nonce: nextNonce(), since: new Date().toISOString(), ...(BOOT ? { boot: BOOT } : {}), ...(START ? { start: START } : {}) };
  const deadline = Date.now() + waitMs;
  let delay = 2;
  for (;;) {
    if (tryCreate(ops, path, info)) {
      return {
        path,
        info,
        release: () => {
          try {
            const now = readLock(ops, path);
            if (now?.info?.nonce === info.nonce) ops.unlink(path);
          } catch {
            // Policy: the critical section is over, and its outcome (published or refused) must
            // reach the caller unmasked. A lock we cannot remove fails closed: other writers wait,
            // then take it over once this process is gone; this thread takes it over at once.
            orphaned.add(info.nonce);
          }
        },
      };
    }
    const held = readLock(ops, path);
    if (held && isStale(held) && takeOver(ops, path, held.raw)) continue;
    if (Date.now() >= deadline) {
      const who = held?.info ? `pid ${held.info.pid} on ${held.info.host} since ${held.info.since}` : 'an unknown holder';
      throw new LedgerError('OP_LOCK_TIMEOUT', `the ledger lock ${path} is held by ${who}; gave up after ${waitMs} ms (raise --wait, or stop that process)`, {
        path,
        holder: held?.info ?? null,
      });
    }
    sleepMs(Math.min(delay, Math.max(1, deadline - Date.now())) + Math.floor(Math.random() * 3));
    delay = Math.min(delay * 2, 50);
  }
}
