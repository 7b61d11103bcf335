// The entry of the bundled CLI (dist/cli/bundle.cjs). It exports rather than runs, so that the
// launcher starts it and the build step that primes the code cache can drive it in-process.
import { runCli } from './cli.js';
import { processIO } from './io.js';

export { runCli } from './cli.js';

/** Runs `ledger` on this process's argv and sets its exit code. */
export function main(): void {
  const io = processIO();
  void runCli(process.argv.slice(2), io).then((code) => {
    // Policy: the verb is done and has awaited everything it started, so when its output has
    // reached the kernel the process exits at once instead of tearing its heap down first (about
    // 1 ms of every command). Output still queued in a stream (a slow reader on a full pipe) is
    // never cut off: then the process ends the usual way, once the stream has flushed.
    if (io.drained()) process.exit(code);
    process.exitCode = code;
  });
}
