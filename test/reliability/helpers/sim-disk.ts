// An in-memory disk behind the store's FileOps seam, for the torn-write fuzz. It keeps two
// states per file and per directory: what the process sees (volatile) and what has reached the
// platter (durable: the state as of the last fsync/fdatasync of that file, or of that directory
// for its entries). That lets a test model both kinds of crash:
//
// - a process crash ("stop here; what reached disk stays"): every operation before the crash
//   point is kept, the crashed one is not (a write may be torn at any byte);
// - a power cut: anything not yet made durable may be lost. Each file's data and each
//   directory's entries independently keep their volatile state or fall back to the durable one,
//   chosen by a seed, so the fuzz explores both extremes and the mixes between.
//
// FaultyOps wraps a SimDisk and injects one fault plan per command: a crash at operation k
// (optionally tearing the write at k), an errno (ENOSPC, EIO, EACCES, EROFS; once or sticky),
// or benign short writes.
import { posix } from 'node:path';
import type { FileOps } from '../../../src/fs/ops.js';

interface FileNode { kind: 'file'; data: Buffer; durable: Buffer; mtime: number }
interface DirNode { kind: 'dir'; entries: Map<string, Node>; durable: Map<string, Node>; mtime: number }
type Node = FileNode | DirNode;
interface Fd { node: Node; read: boolean; write: boolean; pos: number }

/** A pid that no process has: the kernel's pid_max is at most 2^22. */
export const DEAD_PID = 99_999_999;

export function errno(code: string, syscall: string, path?: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: simulated ${code.toLowerCase()}, ${syscall}${path ? ` '${path}'` : ''}`) as NodeJS.ErrnoException;
  e.code = code;
  e.syscall = syscall;
  if (path) e.path = path;
  return e;
}

/** mulberry32: a tiny deterministic PRNG for the power-cut choices. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SimDisk {
  private root: DirNode = { kind: 'dir', entries: new Map(), durable: new Map(), mtime: Date.now() };
  private fds = new Map<number, Fd>();
  private nextFd = 1000;

  /** Creates `dir` (and its parents) durably: the scratch place a test starts from. */
  constructor(dir: string) {
    let d = this.root;
    for (const name of parts(dir)) {
      const child: DirNode = { kind: 'dir', entries: new Map(), durable: new Map(), mtime: Date.now() };
      d.entries.set(name, child);
      d.durable.set(name, child);
      d = child;
    }
  }

  private lookup(path: string): Node | null {
    return this.walk(path, 'entries');
  }

  /** The node at `path` through the live directory entries, or through the durable ones. */
  private walk(path: string, view: 'entries' | 'durable'): Node | null {
    let n: Node = this.root;
    for (const name of parts(path)) {
      if (n.kind !== 'dir') return null;
      const next = n[view].get(name);
      if (!next) return null;
      n = next;
    }
    return n;
  }

  private parent(path: string, syscall: string): { dir: DirNode; name: string } {
    const p = parts(path);
    const name = p.pop();
    const dir = this.lookup('/' + p.join('/'));
    if (!name || !dir) throw errno('ENOENT', syscall, path);
    if (dir.kind !== 'dir') throw errno('ENOTDIR', syscall, path);
    return { dir, name };
  }

  private fd(fd: number, syscall: string): Fd {
    const f = this.fds.get(fd);
    if (!f) throw errno('EBADF', syscall);
    return f;
  }

  /** The fault-free seam over this disk (what a restarted process sees). */
  readonly ops: FileOps = {
    open: (path, flags) => {
      const create = flags === 'w' || flags === 'wx';
      if (!create && flags !== 'r' && flags !== 'r+') throw new Error(`SimDisk: flags "${flags}" not modelled`);
      const existing = this.lookup(path);
      if (existing) {
        if (flags === 'wx') throw errno('EEXIST', 'open', path);
        if (existing.kind === 'dir' && flags !== 'r') throw errno('EISDIR', 'open', path);
        if (existing.kind === 'file' && flags === 'w') existing.data = Buffer.alloc(0);
        const fd = this.nextFd++;
        this.fds.set(fd, { node: existing, read: flags !== 'w', write: flags !== 'r', pos: 0 });
        return fd;
      }
      if (!create) throw errno('ENOENT', 'open', path);
      const { dir, name } = this.parent(path, 'open');
      const node: FileNode = { kind: 'file', data: Buffer.alloc(0), durable: Buffer.alloc(0), mtime: Date.now() };
      dir.entries.set(name, node);
      const fd = this.nextFd++;
      this.fds.set(fd, { node, read: false, write: true, pos: 0 });
      return fd;
    },
    write: (fd, data, position) => {
      const f = this.fd(fd, 'write');
      if (!f.write || f.node.kind !== 'file') throw errno('EBADF', 'write');
      const at = position ?? f.pos;
      const node = f.node;
      if (node.data.length < at + data.length) {
        const grown = Buffer.alloc(at + data.length);
        node.data.copy(grown);
        node.data = grown;
      }
      Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(node.data, at);
      node.mtime = Date.now();
      if (position === null) f.pos += data.length;
      return data.length;
    },
    fdatasync: (fd) => this.sync(this.fd(fd, 'fdatasync')),
    fsync: (fd) => this.sync(this.fd(fd, 'fsync')),
    close: (fd) => {
      this.fd(fd, 'close');
      this.fds.delete(fd);
    },
    rename: (from, to) => {
      const src = this.parent(from, 'rename');
      const node = src.dir.entries.get(src.name);
      if (!node) throw errno('ENOENT', 'rename', from);
      const dst = this.parent(to, 'rename');
      const target = dst.dir.entries.get(dst.name);
      if (target && target.kind !== node.kind) throw errno(target.kind === 'dir' ? 'EISDIR' : 'ENOTDIR', 'rename', to);
      src.dir.entries.delete(src.name);
      dst.dir.entries.set(dst.name, node);
    },
    link: (from, to) => {
      const node = this.lookup(from);
      if (!node) throw errno('ENOENT', 'link', from);
      if (node.kind === 'dir') throw errno('EPERM', 'link', from);
      const dst = this.parent(to, 'link');
      if (dst.dir.entries.has(dst.name)) throw errno('EEXIST', 'link', to);
      dst.dir.entries.set(dst.name, node);
    },
    ftruncate: (fd, length) => {
      const f = this.fd(fd, 'ftruncate');
      if (!f.write || f.node.kind !== 'file') throw errno('EINVAL', 'ftruncate');
      const out = Buffer.alloc(length);
      f.node.data.copy(out, 0, 0, Math.min(length, f.node.data.length));
      f.node.data = out;
      f.node.mtime = Date.now();
    },
    unlink: (path) => {
      const { dir, name } = this.parent(path, 'unlink');
      const node = dir.entries.get(name);
      if (!node) throw errno('ENOENT', 'unlink', path);
      if (node.kind === 'dir') throw errno('EISDIR', 'unlink', path);
      dir.entries.delete(name);
    },
    mkdir: (path) => {
      // Like mkdirSync({ recursive: true }): parents as needed, an existing directory is fine.
      let d = this.root;
      for (const name of parts(path)) {
        const next = d.entries.get(name);
        if (next && next.kind !== 'dir') throw errno('EEXIST', 'mkdir', path);
        if (next) {
          d = next;
          continue;
        }
        const child: DirNode = { kind: 'dir', entries: new Map(), durable: new Map(), mtime: Date.now() };
        d.entries.set(name, child);
        d = child;
      }
    },
    readFile: (path) => {
      const n = this.lookup(path);
      if (!n) throw errno('ENOENT', 'open', path);
      if (n.kind === 'dir') throw errno('EISDIR', 'read', path);
      return Buffer.from(n.data);
    },
    read: (fd, buf, position) => {
      const f = this.fd(fd, 'read');
      if (!f.read || f.node.kind !== 'file') throw errno('EBADF', 'read');
      const n = Math.max(0, Math.min(buf.length, f.node.data.length - position));
      f.node.data.copy(buf, 0, position, position + n);
      return n;
    },
    size: (path) => {
      const n = this.lookup(path);
      if (!n) throw errno('ENOENT', 'stat', path);
      return n.kind === 'file' ? n.data.length : 4096;
    },
    exists: (path) => this.lookup(path) !== null,
    mkdirExclusive: (path) => {
      const { dir, name } = this.parent(path, 'mkdir');
      if (dir.entries.has(name)) throw errno('EEXIST', 'mkdir', path);
      dir.entries.set(name, { kind: 'dir', entries: new Map(), durable: new Map(), mtime: Date.now() });
    },
    rmdir: (path) => {
      const { dir, name } = this.parent(path, 'rmdir');
      const node = dir.entries.get(name);
      if (!node) throw errno('ENOENT', 'rmdir', path);
      if (node.kind !== 'dir') throw errno('ENOTDIR', 'rmdir', path);
      if (node.entries.size) throw errno('ENOTEMPTY', 'rmdir', path);
      dir.entries.delete(name);
    },
    mtimeMs: (path) => {
      const n = this.lookup(path);
      if (!n) throw errno('ENOENT', 'stat', path);
      return n.mtime;
    },
  };

  private sync(f: Fd): void {
    if (f.node.kind === 'file') f.node.durable = Buffer.from(f.node.data);
    else f.node.durable = new Map(f.node.entries);
  }

  /** Writes bytes straight to the end of a file, durably (a foreign writer's leftovers). */
  appendRaw(path: string, bytes: Uint8Array): void {
    const n = this.lookup(path);
    if (!n || n.kind !== 'file') throw new Error(`SimDisk.appendRaw: no file ${path}`);
    n.data = Buffer.concat([n.data, bytes]);
    n.durable = Buffer.from(n.data);
  }

  /** What a full power cut would leave at `path`: the durable bytes under durable entries. */
  readDurable(path: string): Buffer | null {
    const n = this.walk(path, 'durable');
    return n?.kind === 'file' ? Buffer.from(n.durable) : null;
  }

  /** Names a full power cut would leave in a directory. */
  listDurable(path: string): string[] {
    let n: Node = this.root;
    for (const name of parts(path)) {
      if (n.kind !== 'dir') return [];
      const next = n.durable.get(name);
      if (!next) return [];
      n = next;
    }
    return n.kind === 'dir' ? [...n.durable.keys()].sort() : [];
  }

  /** Names in a directory (volatile view). */
  list(path: string): string[] {
    const n = this.lookup(path);
    return n && n.kind === 'dir' ? [...n.entries.keys()].sort() : [];
  }

  /**
   * The machine comes back after a crash. With `power`, each file's data and each directory's
   * entries keep their volatile state or revert to the durable one (chosen by `keepSeed`; 0
   * reverts everything). Then the dead process's descriptors are gone, time has moved on (an
   * hour, so a lock its holder never finished writing is old), and a lock naming this test
   * process's pid is re-labelled with a pid that no process has: in the model each command is
   * its own process, and the one that held the lock is dead.
   */
  restart(opts: { power: boolean; keepSeed: number }): void {
    const rand = prng(opts.keepSeed);
    const seen = new Set<Node>();
    const visit = (n: Node) => {
      if (seen.has(n)) return;
      seen.add(n);
      const keep = opts.power ? opts.keepSeed !== 0 && rand() < 0.5 : true;
      if (n.kind === 'file') {
        if (!keep) n.data = Buffer.from(n.durable);
      } else {
        if (!keep) n.entries = new Map(n.durable);
        for (const child of n.entries.values()) visit(child);
      }
      n.mtime -= 3_600_000;
    };
    visit(this.root);
    this.fds.clear();
    this.relabelLocks(this.root, seen);
  }

  private relabelLocks(d: DirNode, seen: Set<Node>): void {
    for (const [name, n] of d.entries) {
      if (n.kind === 'dir') this.relabelLocks(n, seen);
      else if (name === 'lock') {
        for (const key of ['data', 'durable'] as const) {
          try {
            const info = JSON.parse(n[key].toString('utf8'));
            if (info.pid === process.pid) n[key] = Buffer.from(JSON.stringify({ ...info, pid: DEAD_PID }));
          } catch {
            /* a torn or empty lock: its age decides */
          }
        }
      }
    }
  }

  /** Open descriptors (a leak shows up here after a command that did not crash). */
  openFds(): number {
    return this.fds.size;
  }
}

function parts(path: string): string[] {
  return posix.normalize(path).split('/').filter(Boolean);
}

// ---------------------------------------------------------------------------------------------

export type ErrCode = 'ENOSPC' | 'EIO' | 'EACCES' | 'EROFS';

export type Fault =
  | { t: 'none' }
  /** Stop at operation `at` (0-based within the command). `tear`: the write at `at` first writes that many bytes. */
  | { t: 'crash'; at: number; tear: number | null; power: boolean; keepSeed: number }
  /** Fail operations of the code's class at `at` (and, when sticky, every later one). */
  | { t: 'error'; at: number; code: ErrCode; sticky: boolean; tear: number }
  /** Every write returns after at most half its bytes (writers must loop). */
  | { t: 'short' };

type OpName = keyof FileOps;

export class Crash extends Error {
  constructor(readonly step: number, readonly op: string) {
    super(`simulated crash at operation ${step} (${op})`);
  }
}

// Which operations each errno can hit, as the kernel would report it.
function hits(code: ErrCode, op: OpName, args: unknown[]): boolean {
  const creating = op === 'open' && (args[1] === 'w' || args[1] === 'wx');
  const writingOpen = op === 'open' && args[1] !== 'r';
  switch (code) {
    case 'EIO':
      return true;
    case 'ENOSPC': // out of blocks or inodes: allocation fails; shrinking and removing do not
      return op === 'write' || op === 'fsync' || op === 'fdatasync' || creating || op === 'mkdir' || op === 'mkdirExclusive' || op === 'rename' || op === 'link';
    case 'EACCES': // the directory is not writable: no entry can be made, moved or removed
      return creating || op === 'rename' || op === 'link' || op === 'unlink' || op === 'mkdir' || op === 'mkdirExclusive' || op === 'rmdir';
    case 'EROFS': // a read-only file system: nothing can be changed
      return writingOpen || op === 'write' || op === 'ftruncate' || op === 'rename' || op === 'link' || op === 'unlink' || op === 'mkdir' || op === 'mkdirExclusive' || op === 'rmdir';
  }
}

/** A FileOps over a SimDisk that carries out one fault plan at a time. */
export class FaultyOps {
  plan: Fault = { t: 'none' };
  step = 0;
  crashed = false;
  /** Whether the plan's fault happened during the command (a plan past its last operation does nothing). */
  fired = false;
  /**
   * The operation the fault first hit: `at` for a crash; for an errno, the first operation at or
   * after `at` that the code can hit (ENOSPC at a close lands on the next allocation).
   */
  firedAt: number | null = null;
  private tornOnce = false;
  readonly ops: FileOps;

  constructor(readonly disk: SimDisk) {
    const wrap = <K extends OpName>(name: K) =>
      ((...args: unknown[]) => this.call(name, args)) as unknown as FileOps[K];
    this.ops = Object.fromEntries((Object.keys(disk.ops) as OpName[]).map((k) => [k, wrap(k)])) as unknown as FileOps;
  }

  /** Arms a plan for the next command. */
  arm(plan: Fault): void {
    this.plan = plan;
    this.step = 0;
    this.crashed = false;
    this.fired = false;
    this.firedAt = null;
    this.tornOnce = false;
  }

  private call(name: OpName, args: unknown[]): unknown {
    const step = this.step++;
    const real = this.disk.ops[name] as (...a: unknown[]) => unknown;
    if (this.crashed) throw new Crash(step, name); // a dead process does nothing more
    const p = this.plan;
    if (p.t === 'crash' && step === p.at) {
      this.fired = true;
      this.firedAt = step;
      this.crashed = true;
      if (name === 'write' && p.tear !== null) {
        const data = args[1] as Uint8Array;
        const n = Math.min(p.tear, data.length);
        if (n > 0) real(args[0], data.subarray(0, n), args[2]);
      }
      throw new Crash(step, name);
    }
    if (p.t === 'error' && step >= p.at && (p.sticky || !this.fired) && hits(p.code, name, args)) {
      this.fired = true;
      this.firedAt ??= step;
      if (name === 'exists') return false; // existsSync reports any failure as "not there"
      if (name === 'close') real(...args); // close(2) frees the descriptor even when it reports EIO
      if (name === 'write' && p.code === 'ENOSPC' && !this.tornOnce && p.tear > 0) {
        // The disk fills up mid-write: the kernel writes what fits and returns a short count.
        this.tornOnce = true;
        const data = args[1] as Uint8Array;
        const n = Math.min(p.tear, Math.max(0, data.length - 1));
        if (n > 0) return real(args[0], data.subarray(0, n), args[2]);
      }
      throw errno(p.code, name, typeof args[0] === 'string' ? args[0] : undefined);
    }
    if (p.t === 'short' && name === 'write') {
      const data = args[1] as Uint8Array;
      if (data.length > 1) {
        this.fired = true;
        return real(args[0], data.subarray(0, Math.ceil(data.length / 2)), args[2]);
      }
    }
    return real(...args);
  }
}
