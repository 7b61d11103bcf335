// Issue 13 finding 12: evidence that is a FIFO (or /proc/kmsg) made `ledger` block forever. Only
// regular files are read, opened O_NONBLOCK | O_NOFOLLOW and fstat-checked, so a FIFO, socket or
// device inside the root is refused at append and holds at the gate, promptly. These run the
// real binary with a timeout as a safety net only: the assertion is the exit code, not the time.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { handoff, project, type Project } from '../causal/kit.js';
import { ledgerBytes } from './evidence-kit.js';

let p: Project;
let server: Server | null = null;
afterEach(() => {
  server?.close();
  server = null;
  p?.cleanup();
});

beforeAll(() => {
  expect(spawnSync(process.execPath, [BIN, '--version']).status, `build first: ${BIN}`).toBe(0);
});

/** The real `ledger` binary in the project; a process that never returns fails, it does not hang the suite. */
function ledger(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: p.dir, env: { PATH: process.env.PATH ?? '', LEDGER_AGENT: 'alice' }, encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' }); // a hang guard only
  expect(r.signal, `ledger ${args.join(' ')} did not return`).toBeNull();
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const mkfifo = (path: string) => expect(spawnSync('mkfifo', [path]).status).toBe(0);
async function listenOn(path: string): Promise<void> {
  server = createServer();
  await new Promise<void>((res) => server!.listen(path, res));
}

describe('when evidence is a FIFO, a socket or a device inside the project root', () => {
  it('append refuses file:, dir: and bare forms of each, promptly, with exit 2, and changes nothing', async () => {
    p = await project();
    mkfifo(join(p.dir, 'pipe'));
    await listenOn(join(p.dir, 'sock'));
    const devices: string[] = [];
    if (process.getuid?.() === 0 && spawnSync('mknod', [join(p.dir, 'dev-null'), 'c', '1', '3']).status === 0) devices.push('dev-null');
    p.write('tree/a.txt', 'a\n');
    mkfifo(join(p.dir, 'tree', 'pipe'));
    for (const source of ['file:pipe', 'pipe', 'file:sock', 'sock', ...devices.flatMap((d) => [`file:${d}`, d]), 'dir:tree']) {
      const before = ledgerBytes(p);
      const r = ledger([...handoff('op', 'e1', 'success', '--evidence', `e=${source}`)]);
      expect(r.code, `${source}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/a FIFO|a socket|a character device|not a regular file/);
      expect(ledgerBytes(p)).toEqual(before);
    }
  });

  it('a link inside the root to /dev/zero or /proc/kmsg is refused as outside the root, never opened', async () => {
    p = await project();
    symlinkSync('/dev/zero', join(p.dir, 'zero'));
    symlinkSync('/proc/kmsg', join(p.dir, 'kmsg'));
    for (const source of ['file:zero', 'zero', 'file:kmsg', 'file:/proc/kmsg', '/dev/zero']) {
      const r = ledger([...handoff('op', 'e1', 'success', '--evidence', `e=${source}`)]);
      expect(r.code, `${source}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('outside the project root');
    }
  });

  it('the gate holds, promptly, when a recorded file was replaced by a FIFO (nobody ever writes to it)', async () => {
    p = await project();
    p.write('out.txt', 'result\n');
    expect(ledger([...handoff('op', 'e1', 'success', '--evidence', 'out=out.txt')]).code).toBe(0);
    expect(ledger(['gate', 'op']).code).toBe(0);
    rmSync(join(p.dir, 'out.txt'));
    mkfifo(join(p.dir, 'out.txt'));
    const g = ledger(['gate', 'op', '--json']);
    expect(g.code).toBe(20);
    const r = JSON.parse(g.stdout);
    expect(r.failed_term).toBe('state_current');
    expect(r.evidence[0].reason).toContain('is a FIFO, not a regular file');
    // A FIFO inside a recorded dir: tree holds the same way.
    p.write('tree/a.txt', 'a\n');
    expect(ledger([...handoff('tree', 'e1', 'success', '--evidence', 'tree=dir:tree')]).code).toBe(0);
    mkfifo(join(p.dir, 'tree', 'late-pipe'));
    const t = ledger(['gate', 'tree', '--json']);
    expect(t.code).toBe(20);
    expect(JSON.parse(t.stdout).evidence[0].reason).toContain('a FIFO');
  });
});
