// `checkpoint --tests-cmd CMD`: the ledger runs the test command itself, so the recorded exit code
// and output are what really happened, not what an agent typed (SPEC 10).
//
//   1. run CMD with /bin/sh in the caller's working directory, as the caller (fs/boundary.ts: never
//      with the key's privileges), with an environment that names no key (testsEnv), in its own
//      process group, stdout and stderr both into one scratch file of the blob store, mode 0600
//      (interleaved as written, no pipe to fill)
//   2. on timeout, SIGTERM the whole group, SIGKILL it 5 s later; when the shell exits, SIGKILL
//      what is left of its group (Policy: output written after the run is not part of it)
//   3. scan the whole output and the excerpt for the signing key (secret-scan.ts): if it is there,
//      the scratch file is removed and nothing is recorded (OP_INSECURE_KEY, exit 3)
//   4. the caller (workflow.ts) checks the result against the request, then `adopt` moves the file
//      into the blob store under its digest (0644) or `discard` removes it
// Exit codes as a shell reports them: the command's own, 128 + N when signal N killed it, and
// Policy: 124 when the ledger stopped it on timeout (as GNU `timeout` does).
import { closeSync, fchmodSync, fstatSync, readSync } from 'node:fs';
import { realFileOps } from '../fs/ops.js';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import type { TestsRun } from '../record.js';
import { adoptBlobFile, discardBlobScratch, openBlobScratch, putBlob, type StoredBlob } from './blobs.js';
import { EXCERPT_WINDOW, excerptOf, plainText } from './excerpt.js';
import { nothingTested } from './runner-output.js';
import { containsSecret, fileContainsSecret, type KeySecret } from './secret-scan.js';
import { callerEnv, type Boundary } from '../fs/boundary.js';

export const DEFAULT_TESTS_TIMEOUT_MS = 30 * 60_000;
const KILL_GRACE_MS = 5_000;
const TIMEOUT_EXIT = 124;

export interface CapturedTests {
  tests: TestsRun;
  blob: StoredBlob;
  timedOut: boolean;
}

/** A finished run whose output is scanned but not yet in the blob store. */
export interface RanTests {
  exitCode: number;
  timedOut: boolean;
  excerpt: string;
  bytes: number;
  /** Why the run tested nothing (runner-output.ts nothingTested), or null. */
  nothingTested: string | null;
  /** Moves the output into the blob store and gives what the record says (with `workdir`, if any). */
  adopt(extra?: Pick<TestsRun, 'workdir'>): CapturedTests;
  /** Removes the output (a run whose record is refused). */
  discard(): void;
}

export interface RunOptions {
  /** Where the command runs: the caller's working directory. */
  cwd: string;
  ledgerDir: string;
  timeoutMs: number;
  /** The environment it is given, before testsEnv takes the key out of it. */
  env: NodeJS.ProcessEnv;
  /** Whom this process acts for (fs/boundary.ts): its environment's allow-list. */
  boundary: Boundary;
  /** Who runs it: the caller's uid and gid (fs/boundary.ts asCaller), or null for this process's own. */
  user: { uid: number; gid: number } | null;
  /** The signing key, for the scan of step 3. */
  secret: KeySecret;
  /** The key file's path, when the key was read from one (kept out of the environment). */
  keyPath: string | null;
}

/**
 * The environment of a test command: acting for another user, only the allow-list of
 * fs/boundary.ts callerEnv (the caller's HOME, USER and LOGNAME, a safe PATH, the locale and the
 * terminal: never the key owner's variables); acting for nobody, the caller's own environment.
 * Policy: either way, every LEDGER_* variable is dropped (LEDGER_KEY names the key; the rest are
 * the ledger's, not the suite's), and so is any variable whose value names the key file or
 * carries the key in any form secret-scan.ts knows.
 */
export function testsEnv(env: NodeJS.ProcessEnv, o: Pick<RunOptions, 'boundary' | 'secret' | 'keyPath' | 'cwd'>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  const key = o.keyPath === null ? null : resolve(o.keyPath);
  for (const [name, value] of Object.entries(callerEnv(o.boundary, env))) {
    if (value === undefined || name.startsWith('LEDGER_')) continue;
    if (key !== null && (value.includes(key) || resolve(o.cwd, value) === key)) continue;
    if (containsSecret(o.secret, value)) continue;
    out[name] = value;
  }
  return out;
}

function lastBytes(fd: number, size: number): Buffer {
  const n = Math.min(size, EXCERPT_WINDOW);
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const r = readSync(fd, buf, got, n - got, size - n + got);
    if (r <= 0) break;
    got += r;
  }
  return buf.subarray(0, got);
}

function keyInOutput(what: string): LedgerError {
  return new LedgerError(
    'OP_INSECURE_KEY',
    `${what} contains the signing key's secret; nothing was recorded`,
    {},
    'the test command could read the key: run ledger as the key\'s owner through a wrapper that runs the tests as the caller (README "How to deploy so that agents never read the secret key"), and treat this key as exposed',
  );
}

export async function runTestsCommand(command: string, opts: RunOptions): Promise<RanTests> {
  // A new file only (O_EXCL | O_NOFOLLOW): a name planted in blobs/tmp is refused, not written
  // through. 0600 until the scan says the output carries no secret.
  const { path: scratch, fd } = openBlobScratch(opts.ledgerDir, undefined, 0o600);
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  const fail = (e: unknown): never => {
    close();
    discardBlobScratch(scratch);
    throw e;
  };
  let timedOut = false;
  let interrupted: NodeJS.Signals | null = null;
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  const env = testsEnv(opts.env, opts);
  const as = opts.user ?? {};
  try {
    exit = await new Promise((resolvePromise, reject) => {
      // Loaded here, not imported: the verbs that load this file mostly run no test command.
      const { spawn } = process.getBuiltinModule('node:child_process');
      const child = spawn('/bin/sh', ['-c', command], { cwd: opts.cwd, env, stdio: ['ignore', fd, fd], detached: true, ...as });
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
        reject(new LedgerError('OP_IO', `cannot run --tests-cmd with /bin/sh in ${opts.cwd}: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      });
      child.on('exit', (code, signal) => {
        done();
        // A background job of the suite would go on writing into the output after it is scanned.
        killGroup('SIGKILL');
        resolvePromise({ code, signal });
      });
    });
  } catch (e) {
    return fail(e);
  }
  if (interrupted) return fail(new LedgerError('OP_IO', `--tests-cmd was interrupted by ${interrupted}; nothing was recorded`, { signal: interrupted }, 'run the checkpoint again'));
  const exitCode = timedOut ? TIMEOUT_EXIT : exit.code ?? 128 + (exit.signal ? constants.signals[exit.signal] ?? 0 : 0);
  let size: number;
  let excerpt: string;
  let rfd: number | null = null;
  let nothing: string | null = null;
  try {
    // The scratch was opened write-only (the recipe's create); it is read through a second
    // descriptor, which must be the same file (a name swapped meanwhile is refused).
    rfd = realFileOps.open(scratch, 'r');
    const st = fstatSync(fd);
    const rst = fstatSync(rfd);
    if (st.ino !== rst.ino || st.dev !== rst.dev) return fail(new LedgerError('OP_IO', `the output file of --tests-cmd ${scratch} was replaced while it ran; nothing was recorded`, { path: scratch }));
    size = st.size;
    if (fileContainsSecret(opts.secret, rfd, size)) return fail(keyInOutput('the output of --tests-cmd'));
    const tail = lastBytes(rfd, size);
    excerpt = excerptOf(tail, size > tail.length);
    nothing = nothingTested(command, exitCode, plainText(tail.toString('utf8')));
    if (containsSecret(opts.secret, excerpt)) return fail(keyInOutput('the output of --tests-cmd'));
    fchmodSync(fd, 0o644);
  } catch (e) {
    return fail(e instanceof LedgerError ? e : ioError(e, 'read the output of --tests-cmd in', scratch));
  } finally {
    if (rfd !== null) closeSync(rfd);
  }
  close();
  let settled = false;
  return {
    exitCode, timedOut, excerpt, bytes: size, nothingTested: nothing,
    adopt(extra = {}) {
      if (settled) throw new LedgerError('INTERNAL', 'a test run was adopted or discarded twice');
      settled = true;
      const blob = adoptBlobFile(opts.ledgerDir, scratch);
      return { tests: { excerpt, digest: blob.digest, command, exit_code: exitCode, bytes: blob.bytes, ...(nothing !== null ? { nothing_tested: nothing } : {}), ...extra }, blob, timedOut };
    },
    discard() {
      if (settled) return;
      settled = true;
      discardBlobScratch(scratch);
    },
  };
}

/** `--tests TEXT`: output an agent pasted; kept whole in the blob store, no command or exit code. */
export function storeReportedTests(text: string, ledgerDir: string, secret: KeySecret | null): CapturedTests {
  const data = Buffer.from(text, 'utf8');
  if (secret && containsSecret(secret, data)) throw keyInOutput('--tests');
  const blob = putBlob(ledgerDir, data);
  const tail = data.subarray(Math.max(0, data.length - EXCERPT_WINDOW));
  return { tests: { excerpt: excerptOf(tail, tail.length < data.length), digest: blob.digest, bytes: blob.bytes }, blob, timedOut: false };
}
