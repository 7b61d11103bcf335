import { closeSync, constants, fstatSync, openSync, read, readSync, writeSync } from 'node:fs';
import { LedgerError } from '../errors.js';
import type { CliIO } from './commands/common.js';

export interface ProcessIO extends CliIO {
  /** True when nothing written to stdout or stderr is still waiting to be flushed. */
  drained(): boolean;
}

/**
 * Writes to fd 1 or 2 directly, while the kernel takes the bytes at once (a terminal, a file, a
 * pipe with room). Creating process.stdout/stderr for a pipe loads the whole net module (about
 * 1.5 ms of every start), and a one-line answer needs none of it. Once a write cannot complete
 * (a full non-blocking pipe) or fails, the rest and everything after it goes through the stream,
 * in order, which queues, waits and reports errors as Node always does.
 */
export function fdWriter(fd: number, stream: () => Pick<NodeJS.WriteStream, 'write' | 'writableLength'>, write: typeof writeSync = writeSync) {
  let viaStream = false;
  return {
    write(text: string): void {
      if (viaStream) {
        stream().write(text);
        return;
      }
      const bytes = Buffer.from(text, 'utf8');
      let done = 0;
      try {
        while (done < bytes.length) {
          const n = write(fd, bytes, done, bytes.length - done);
          if (n <= 0) throw new Error('no progress'); // never loop on a write that takes nothing
          done += n;
        }
      } catch {
        viaStream = true;
        stream().write(bytes.subarray(done));
      }
    },
    drained: () => !viaStream || stream().writableLength === 0,
  };
}

/**
 * All of stdin. Read from fd 0 in libuv's thread pool, as the writers above write: creating
 * process.stdin for a pipe loads the net module too (several ms of every hook, which reads a
 * payload at each start and stop of an agent's session). A non-blocking fd (EAGAIN) is read
 * through the stream instead, from where the direct reads stopped.
 */
async function readFd0(maxBytes: number): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  let total = 0;
  const add = (c: Buffer) => {
    total += c.length;
    // Bounded: past `maxBytes` the read stops (the rest is never read, let alone kept).
    if (total > maxBytes) throw new LedgerError('INPUT_TOO_LARGE', `stdin is over ${maxBytes} bytes`, { max_bytes: maxBytes });
    chunks.push(c);
  };
  for (;;) {
    const buf = Buffer.allocUnsafe(65536);
    let n: number;
    try {
      n = await new Promise<number>((resolve, reject) => read(0, buf, 0, buf.length, null, (e, bytes) => (e ? reject(e) : resolve(bytes))));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      for await (const c of process.stdin) add(c as Buffer);
      return chunks;
    }
    if (n === 0) return chunks;
    add(buf.subarray(0, n));
  }
}

/**
 * False only when `fd` is surely no terminal: a terminal is a character device, and one fstat
 * says whether the fd is one (a file, pipe or socket is not), where asking the stream would load
 * node:tty and node:net. A character device that is no terminal (/dev/null) and an fd fstat
 * cannot read are left to the stream's own answer.
 */
function mayBeTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true;
  }
}

/**
 * Stdin read by a deadline (`ledger hook`, issue 23: it waited 20 s for a stdin that never closed,
 * 5 s documented). A read of fd 0 in the thread pool cannot be called off: a process that exits
 * with one pending waits for it (libuv joins its threads). So where the system lets fd 0 be
 * opened again (/proc/self/fd/0 on Linux: the same pipe or file) it is opened non-blocking and
 * polled, each EAGAIN a pause of a few ms, until its end, `maxBytes` or `deadlineMs`: the read
 * never outlives the deadline. null where fd 0 cannot be opened so (then the caller reads as
 * usual). Past the deadline: OP_IO (a payload that never ended is none).
 */
async function readFd0By(maxBytes: number, deadlineMs: number): Promise<Buffer[] | null> {
  let fd: number;
  try {
    fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    // A socket (how Node and most agents hand a child its stdin) cannot be opened again: read it
    // through its stream, which an exit never waits on, stopped at the deadline.
    return readStreamBy(process.stdin, maxBytes, deadlineMs);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const until = Date.now() + deadlineMs;
  const buf = Buffer.allocUnsafe(65536);
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        if (Date.now() >= until) throw new LedgerError('OP_IO', `stdin did not end within ${deadlineMs} ms`, { deadline_ms: deadlineMs });
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      if (n === 0) return chunks;
      total += n;
      if (total > maxBytes) throw new LedgerError('INPUT_TOO_LARGE', `stdin is over ${maxBytes} bytes`, { max_bytes: maxBytes });
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } finally {
    closeSync(fd);
  }
}

/** readFd0By for a stream: its chunks until it ends, `maxBytes` or `deadlineMs` (then destroyed). */
function readStreamBy(stream: NodeJS.ReadStream, maxBytes: number, deadlineMs: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (e: unknown) => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy();
      reject(e);
    };
    const timer = setTimeout(() => stop(new LedgerError('OP_IO', `stdin did not end within ${deadlineMs} ms`, { deadline_ms: deadlineMs })), deadlineMs);
    stream.on('data', (c: Buffer) => {
      total += c.length;
      if (total > maxBytes) return stop(new LedgerError('INPUT_TOO_LARGE', `stdin is over ${maxBytes} bytes`, { max_bytes: maxBytes }));
      chunks.push(c);
    });
    stream.once('end', () => {
      clearTimeout(timer);
      resolve(chunks);
    });
    stream.once('error', stop);
  });
}

/** Policy: no input is read past this many bytes, whoever asks (a string Node can hold is at most 512 MiB). */
const STDIN_MAX = 256 << 20;

/** The real process's I/O for the CLI. */
export function processIO(): ProcessIO {
  const out = fdWriter(1, () => process.stdout);
  const err = fdWriter(2, () => process.stderr);
  return {
    stdout: (t) => out.write(t),
    stderr: (t) => err.write(t),
    drained: () => out.drained() && err.drained(),
    env: process.env,
    cwd: process.cwd(),
    // A getter: touching process.stderr creates its stream, and for a pipe that loads the whole
    // net module (about 1.5 ms of every start). Every verb asks (its progress line), so a
    // stderr that cannot be a terminal is told apart first, without the stream.
    get isTTY() {
      return mayBeTerminal(2) && process.stderr.isTTY === true;
    },
    // Asked only by the verbs that fit a terminal (status, resume), and told apart as above.
    get columns() {
      return mayBeTerminal(1) && process.stdout.isTTY === true ? process.stdout.columns : undefined;
    },
    readStdin: async (maxBytes = STDIN_MAX, deadlineMs?: number) => {
      // node:tty (2-3 ms, and node:net with it) is loaded only for a stdin that may be a
      // terminal: a pipe or file (how agents hand a hook its payload) is told apart by one fstat.
      if (mayBeTerminal(0) && process.getBuiltinModule('node:tty').isatty(0)) return '';
      const max = Math.min(maxBytes, STDIN_MAX);
      const chunks = (deadlineMs !== undefined ? await readFd0By(max, deadlineMs) : null) ?? (await readFd0(max));
      // Policy: stdin is refused, not repaired: an invalid UTF-8 byte would otherwise become
      // U+FFFD inside a signed record.
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        throw new LedgerError('INPUT_JSON', 'stdin is not valid UTF-8', {}, 'payloads are UTF-8 JSON, one object per line: see `ledger append --help`');
      }
    },
  };
}
