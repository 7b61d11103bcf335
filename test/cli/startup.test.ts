// The start-up shortcuts of the CLI (issue 2's `ledger append` <= 1.3x `node -e ''`) must not
// change what the CLI does: only the named verb's group is registered, the shipped code cache is
// made by the build and accepted by V8, and a command exits at once only with nothing unflushed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cac } from 'cac';
import { VERB_GROUPS, createCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/commands/common.js';
import { fdWriter } from '../../src/cli/io.js';
import { BIN, ROOT, initProject, runLedger, scratch } from '../helpers/cli.js';

const io: CliIO = { stdout: () => {}, stderr: () => {}, env: {}, cwd: ROOT, isTTY: false, readStdin: async () => '' };
const names = (cli: ReturnType<typeof cac>) => cli.commands.map((c) => c.name).sort();

describe('the verb table', () => {
  it('lists exactly the verbs each register function defines', () => {
    for (const [register, verbs] of VERB_GROUPS) {
      const cli = cac('ledger');
      register(cli, io);
      expect(names(cli)).toEqual([...verbs].sort());
    }
  });

  it('registers every verb when none is named, and only the named verb\'s group otherwise', () => {
    const all = names(createCli(io));
    expect(all).toEqual(VERB_GROUPS.flatMap(([, v]) => v).sort());
    for (const verb of all) {
      const cli = createCli(io, verb);
      expect(cli.commands.some((c) => c.isMatched(verb))).toBe(true);
      expect(cli.commands.length).toBeLessThan(all.length);
    }
    expect(names(createCli(io, 'no-such-verb'))).toEqual(all);
  });
});

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
