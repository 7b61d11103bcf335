// The entry of the bundled CLI (dist/cli/bundle.cjs). It exports rather than runs, so that the
// launcher starts it and the build step that primes the code cache can drive it in-process.
import { runCli } from './cli.js';
import { processIO } from './commands/process-io.js';

export { runCli } from './cli.js';

/** Runs `ledger` on this process's argv and sets its exit code. */
export function main(): void {
  void runCli(process.argv.slice(2), processIO()).then((code) => {
    process.exitCode = code;
  });
}
