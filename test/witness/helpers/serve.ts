// Starting `ledger witness serve` (the shipped binary) on 127.0.0.1, any free port, for tests:
// its URL is read from the line it prints, so nothing waits on time.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { BIN, runLedger, spawnLedgerSync } from '../../helpers/cli.js';

/** Resolves with the first stdout line of `child` matching `re`; rejects when it exits first. */
export function lineOf(child: ChildProcess, re: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let err = '';
    const onData = (c: Buffer) => {
      buf += c.toString();
      for (const line of buf.split('\n').slice(0, -1)) {
        if (re.test(line)) {
          child.stdout!.off('data', onData);
          return resolve(line);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing ${re}: ${err}`)));
  });
}

/** `ledger witness serve --state STATE --addr ADDR` (default 127.0.0.1:0, any free port), and the URL it listens on. */
export function serveWitness(state: string, addr = '127.0.0.1:0'): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [BIN, 'witness', 'serve', '--state', state, '--addr', addr], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, url: lineOf(child, /^http:\/\/127\.0\.0\.1:\d+ /).then((l) => l.split(' ')[0]) };
}

/**
 * A witness for the ledger of the project at `dir`: its key made by `ledger witness init` (in
 * `state`, named witness.test/w1, witnessing that ledger's HEAD key), then served on 127.0.0.1.
 */
export async function witnessFor(dir: string, state: string): Promise<{ vkey: string; logVkey: string; child: ChildProcess; url: string }> {
  const logVkey = (await runLedger(['head', '--vkey'], { cwd: dir })).stdout.trim();
  const init = spawnLedgerSync(['witness', 'init', '--state', state, '--name', 'witness.test/w1', '--log', logVkey], { cwd: dir });
  expect(init.code, init.stderr).toBe(0);
  const w = serveWitness(state);
  return { vkey: init.stdout.trim(), logVkey, child: w.child, url: await w.url };
}
