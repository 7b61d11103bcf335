// The start-up shortcuts of the CLI (issue 2's `ledger append` <= 1.3x `node -e ''`) must not
// change what the CLI does: the shipped code cache is made by the build and accepted by V8, and a
// command exits at once only with nothing unflushed (that only the named verb's command is built
// is in verbs.test.ts). What the package ships is in test/install/package-files.test.ts.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fdWriter } from '../../src/cli/io.js';
import { BIN, ROOT, initProject, runLedger, scratch, withSuiteEnv } from '../helpers/cli.js';

describe('the shipped binary', () => {
  it('ships a code cache made by the build, which V8 accepts (a run does not rewrite it)', () => {
    const cache = join(ROOT, 'dist/cli/bundle.cache');
    expect(existsSync(cache)).toBe(true);
    const before = { bytes: readFileSync(cache), mtime: statSync(cache).mtimeMs };
    const r = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ledger\/\d+\.\d+\.\d+ /);
    expect(statSync(cache).mtimeMs).toBe(before.mtime);
    expect(readFileSync(cache).equals(before.bytes)).toBe(true);
  });

  it('starts `append` and `audit` from caches of their own, made by the build, which V8 accepts (a run rewrites neither them nor the shared one)', async () => {
    const p = await initProject();
    try {
      const caches = ['bundle.cache', 'bundle.append.cache', 'bundle.audit.cache'].map((f) => join(ROOT, 'dist/cli', f));
      const before = caches.map((c) => readFileSync(c));
      for (const args of [['append', 'handoff', '--agent', 'ci', '--op', 'op', '--exec', 'e1', '--outcome', 'success'], ['audit']]) {
        const r = spawnSync(process.execPath, [BIN, ...args], { cwd: p.dir, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      }
      caches.forEach((c, i) => expect(readFileSync(c).equals(before[i]), c).toBe(true));
      // Each is a cache of its own verb, not a copy of the shared one. Not compared by size: how
      // much V8 keeps while the build primes a cache depends on the machine's load (bytecode
      // flushing), so a size order would be a result that depends on timing.
      expect(before[1].equals(before[0])).toBe(false);
      expect(before[2].equals(before[0])).toBe(false);
      expect(before[1].equals(before[2])).toBe(false);
    } finally {
      p.cleanup();
    }
  });

  it('runs with a damaged or missing cache, and writes a good one at exit', () => {
    // A copy of dist/cli, so the shipped cache is not touched; yaml resolves from the project.
    const s = scratch('ledger-cache-');
    try {
      const dir = join(s.dir, 'cli');
      cpSync(join(ROOT, 'dist/cli'), dir, { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(s.dir, 'node_modules'));
      const cache = join(dir, 'bundle.cache');
      for (const damage of [() => writeFileSync(cache, 'not a V8 code cache'), () => rmSync(cache)]) {
        damage();
        const r = spawnSync(process.execPath, [join(dir, 'ledger.cjs'), '--version'], { encoding: 'utf8' });
        expect(r.status).toBe(0);
        expect(r.stdout).toMatch(/^ledger\/\d+\.\d+\.\d+ /);
        // The fresh cache is accepted by the next run, which leaves it as it is.
        const written = readFileSync(cache);
        expect(written.length).toBeGreaterThan(1000);
        expect(spawnSync(process.execPath, [join(dir, 'ledger.cjs'), '--version']).status).toBe(0);
        expect(readFileSync(cache).equals(written)).toBe(true);
      }
    } finally {
      s.cleanup();
    }
  });

  it('delivers all of a large output to a slow reader before it exits', async () => {
    // Far more than a pipe holds (64 KiB), read only after a pause: with the process exiting at
    // once, queued output would be cut off.
    const p = await initProject();
    try {
      const payloads = Array.from({ length: 400 }, (_, i) => JSON.stringify({ kind: 'handoff', logical_operation_id: 'op', execution_id: `e${i}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).join('\n');
      expect((await runLedger(['append', '--batch', '--agent', 'ci'], { cwd: p.dir, stdin: payloads })).code).toBe(0);
      const full = spawnSync(process.execPath, [BIN, 'log', '--limit', '400', '--json'], { cwd: p.dir, encoding: 'utf8' });
      expect(full.status).toBe(0);
      expect(Buffer.byteLength(full.stdout)).toBeGreaterThan(2 * 65536);
      const slow = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" log --limit 400 --json | (sleep 0.5; wc -c)`], { cwd: p.dir, encoding: 'utf8' });
      expect(Number(slow.stdout.trim())).toBe(Buffer.byteLength(full.stdout));
    } finally {
      p.cleanup();
    }
  });
});

describe('what a start loads of Node\'s own modules (each costs milliseconds of every command)', () => {
  /** The Node modules of interest a real `ledger ARGS` run had loaded when it exited. */
  function loaded(args: string[], cwd: string, dir: string): string[] {
    // Written to fd 2 directly: process.stderr on a pipe would load node:net itself.
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, "process.on('exit', () => require('fs').writeSync(2, '\\nLOADED ' + JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (crypto|tty|net|child_process|os|worker_threads)$/.test(m)).map((m) => m.slice(13))) + '\\n'));\n");
    const r = spawnSync(process.execPath, ['--require', probe, BIN, ...args], { cwd, encoding: 'utf8', env: withSuiteEnv({ PATH: process.env.PATH ?? '', HOME: dir, LEDGER_STATE_DIR: join(dir, 'state') }) });
    expect(r.status, r.stderr).toBe(0);
    const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
    expect(line, r.stderr).toBeDefined();
    return (JSON.parse(line!.slice(7)) as string[]).sort();
  }

  it('`ledger --version` loads none of node:crypto, node:tty, node:net, node:child_process, node:os, node:worker_threads', () => {
    const s = scratch('ledger-loads-');
    try {
      expect(loaded(['--version'], s.dir, s.dir)).toEqual([]);
    } finally {
      s.cleanup();
    }
  });

  it('`ledger head` loads node:crypto (it verifies HEAD) and not the terminal, net or child-process modules, which only stdin, a terminal or git need', async () => {
    const p = await initProject();
    try {
      expect(loaded(['head'], p.dir, p.dir)).toEqual(['crypto']);
    } finally {
      p.cleanup();
    }
  });

  it('`ledger append` loads node:crypto (it signs) and not node:os (the state directory, the lock\'s host name and the audit\'s thread count ask for it only when needed) or worker_threads (a large batch only)', async () => {
    const p = await initProject();
    try {
      expect(loaded(['append', 'handoff', '--agent', 'ci', '--op', 'op', '--exec', 'e1', '--outcome', 'success'], p.dir, p.dir)).toEqual(['crypto']);
    } finally {
      p.cleanup();
    }
  });

  it('`ledger audit --floor` with nothing new loads node:crypto (HEAD\'s signature) and not node:os or worker_threads (only enough new records to split over threads asks for them)', async () => {
    const p = await initProject();
    try {
      const floor = join(p.dir, 'floor.json');
      expect(loaded(['audit', '--floor', floor, '--advance'], p.dir, p.dir)).toEqual(['crypto']);
      expect(loaded(['audit', '--floor', floor], p.dir, p.dir)).toEqual(['crypto']);
    } finally {
      p.cleanup();
    }
  });
});

describe('fdWriter (stdout and stderr without their streams)', () => {
  it('writes straight to the fd, then hands the rest, in order, to the stream once a write cannot complete', () => {
    const written: string[] = [];
    const streamed: string[] = [];
    let queued = 0;
    let calls = 0;
    const fakeWrite = ((_fd: number, b: Buffer, off: number, len: number) => {
      calls++;
      if (calls === 3) throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
      const n = Math.min(len, 4); // short writes, as a pipe with little room gives
      written.push(b.subarray(off, off + n).toString());
      return n;
    }) as unknown as typeof import('node:fs').writeSync;
    const stream = { write: (t: string | Uint8Array) => { streamed.push(Buffer.from(t).toString()); queued += Buffer.byteLength(t); return false; }, get writableLength() { return queued; } };
    const w = fdWriter(1, () => stream, fakeWrite);
    expect(w.drained()).toBe(true);
    w.write('abcdefghij');
    w.write('KLM');
    expect(written.join('')).toBe('abcdefgh');
    expect(streamed).toEqual(['ij', 'KLM']); // nothing lost, nothing reordered, no more direct writes
    expect(calls).toBe(3);
    expect(w.drained()).toBe(false); // the stream still holds bytes: the process must not exit yet
    queued = 0;
    expect(w.drained()).toBe(true);
  });

  it('hands the text to the stream when a write takes nothing, instead of looping', () => {
    const streamed: string[] = [];
    const stream = { write: (t: string | Uint8Array) => { streamed.push(Buffer.from(t).toString()); return true; }, writableLength: 0 };
    const w = fdWriter(1, () => stream, (() => 0) as unknown as typeof import('node:fs').writeSync);
    w.write('abc');
    expect(streamed).toEqual(['abc']);
  });
});
