// `checkpoint --tests-cmd CMD`: the ledger runs the test command itself, so the recorded exit code
// and output are what really happened, not what an agent typed.
//
//   1. run CMD with /bin/sh in the project root (the folder that holds the ledger directory), in
//      its own process group, stdout and stderr both into one scratch file of the blob store
//      (interleaved as written, no pipe to fill)
//   2. on timeout, SIGTERM the whole group, SIGKILL it 5 s later
//   3. move the file into the blob store under its digest; read back its last 64 KiB for the
//      excerpt
// Exit codes as a shell reports them: the command's own, 128 + N when signal N killed it, and
// Policy: 124 when the ledger stopped it on timeout (as GNU `timeout` does).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { LedgerError, ioError } from '../errors.js';
import type { TestsRun } from '../record.js';
import { adoptBlobFile, discardBlobScratch, openBlobScratch, putBlob, type StoredBlob } from './blobs.js';
import { EXCERPT_WINDOW, excerptOf } from './excerpt.js';

export const DEFAULT_TESTS_TIMEOUT_MS = 30 * 60_000;
const KILL_GRACE_MS = 5_000;
const TIMEOUT_EXIT = 124;

export interface CapturedTests {
  tests: TestsRun;
  blob: StoredBlob;
  timedOut: boolean;
}

function lastBytes(path: string, size: number): Buffer {
  const n = Math.min(size, EXCERPT_WINDOW);
  const buf = Buffer.alloc(n);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, n, size - n);
  } finally {
    closeSync(fd);
  }
  return buf;
}

export async function runTestsCommand(
  command: string,
  opts: { cwd: string; ledgerDir: string; timeoutMs: number; env: NodeJS.ProcessEnv },
): Promise<CapturedTests> {
  // A new file only (O_EXCL | O_NOFOLLOW): a name planted in blobs/tmp is refused, not written through.
  const { path: scratch, fd } = openBlobScratch(opts.ledgerDir);
  let timedOut = false;
  let interrupted: NodeJS.Signals | null = null;
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((resolvePromise, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', fd, fd], detached: true });
      const killGroup = (sig: NodeJS.Signals) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, sig);
        } catch {
          /* the group is already gone */
        }
      };
      let grace: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup('SIGTERM');
        grace = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
      }, opts.timeoutMs);
      // Its own process group keeps a timeout kill from missing grandchildren; so a Ctrl-C aimed
      // at the ledger must be passed on, or the suite would run on alone.
      // Policy: an interrupted run is not a result: nothing is recorded (see below).
      const forward = (sig: NodeJS.Signals) => {
        interrupted = sig;
        killGroup(sig);
      };
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      const done = () => {
        clearTimeout(timer);
        if (grace) clearTimeout(grace);
        process.off('SIGINT', forward);
        process.off('SIGTERM', forward);
      };
      child.on('error', (e) => {
        done();
        reject(new LedgerError('OP_IO', `cannot run --tests-cmd with /bin/sh: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      });
      child.on('exit', (code, signal) => {
        done();
        resolvePromise({ code, signal });
      });
    });
  } catch (e) {
    discardBlobScratch(scratch);
    throw e;
  } finally {
    closeSync(fd);
  }
  if (interrupted) {
    discardBlobScratch(scratch);
    throw new LedgerError('OP_IO', `--tests-cmd was interrupted by ${interrupted}; nothing was recorded`, { signal: interrupted }, 'run the checkpoint again');
  }
  const exitCode = timedOut ? TIMEOUT_EXIT : exit.code ?? 128 + (exit.signal ? constants.signals[exit.signal] ?? 0 : 0);
  let size: number;
  let tail: Buffer;
  try {
    size = statSync(scratch).size;
    tail = lastBytes(scratch, size);
  } catch (e) {
    discardBlobScratch(scratch);
    throw ioError(e, 'read the output of --tests-cmd in', scratch);
  }
  const blob = adoptBlobFile(opts.ledgerDir, scratch);
  return {
    tests: { excerpt: excerptOf(tail, size > tail.length), digest: blob.digest, command, exit_code: exitCode, bytes: blob.bytes },
    blob,
    timedOut,
  };
}

/** `--tests TEXT`: output an agent pasted; kept whole in the blob store, no command or exit code. */
export function storeReportedTests(text: string, ledgerDir: string): CapturedTests {
  const data = Buffer.from(text, 'utf8');
  const blob = putBlob(ledgerDir, data);
  const tail = data.subarray(Math.max(0, data.length - EXCERPT_WINDOW));
  return { tests: { excerpt: excerptOf(tail, tail.length < data.length), digest: blob.digest, bytes: blob.bytes }, blob, timedOut: false };
}
