#!/usr/bin/env node
import { runCli } from './cli.js';
import { processIO } from './commands/process-io.js';

runCli(process.argv.slice(2), processIO()).then((code) => {
  process.exitCode = code;
});
