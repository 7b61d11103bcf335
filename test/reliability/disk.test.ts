// Issue 6.4, the two hostile environments: a ledger directory that cannot be written (made
// immutable with chattr +i; tests run as root, for whom a mode bit is no obstacle) and a full
// disk (a 512 KiB tmpfs filled to the last page). Every writing verb must refuse with exit 3 and
// one line, change nothing (no stray lock or temp file either), and every reading verb must still
// work. Once the disk has room again, the next append succeeds and the ledger audits clean.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLedger, scratch } from '../helpers/cli.js';

const env = { LEDGER_AGENT: 'tester' };
const figures = { readOnlyRefused: 0, readOnlyReads: 0, fullDiskRefused: 0, fullDiskReads: 0 };

const WRITES: string[][] = [
  ['append', 'handoff', '--op', 'w_op', '--exec', 'w1', '--outcome', 'success', '--wait', '500ms'],
  ['append', '--batch', '--wait', '500ms'],
  ['start', 'wi2', '--summary', 'another', '--wait', '500ms'],
  ['checkpoint', 'wi', '--done', 'd', '--state', 's', '--next', 'n', '--wait', '500ms'],
  ['finish', 'wi', '--done', 'd', '--state', 's', '--next', 'n', '--wait', '500ms'],
  ['gate', 'h_op', '--consume-as', 'deployer', '--wait', '500ms'],
  ['recover', '--wait', '500ms'],
];
const READS: string[][] = [['show', '1'], ['log'], ['head'], ['pending'], ['resume', 'wi'], ['audit'], ['gate', 'h_op']];
const BATCH = JSON.stringify({ kind: 'intent', logical_operation_id: 'b_op', execution_id: 'bx', action: 'deploy' }) + '\n';

/** A project with a handoff, a work item with a checkpoint, and (optionally) torn bytes past HEAD. */
async function makeProject(dir: string, tornTail: boolean): Promise<void> {
  writeFileSync(join(dir, 'schema.sql'), 'CREATE TABLE t (id integer);\n');
  for (const args of [
    ['init', '--name', 'disk'],
    ['append', 'handoff', '--op', 'h_op', '--exec', 'h1', '--outcome', 'success', '--evidence', 'schema=file:schema.sql'],
    ['start', 'wi', '--summary', 'migrate'],
    ['checkpoint', 'wi', '--done', 'wrote it', '--state', 'applies', '--next', 'run it'],
  ]) {
    const r = await runLedger(args, { cwd: dir, env });
    if (r.code !== 0) throw new Error(`setup: ${args.join(' ')}: ${r.stderr}`);
  }
  // A crashed writer's leftovers: `recover` then has real work to do (and a copy to make).
  if (tornTail) writeFileSync(join(dir, '.ledger/records.jsonl'), '{"v":1,"seq":4,"torn', { flag: 'a' });
}

function files(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${name.name}` : name.name;
      if (skip.includes(r) || r === '.ledger/index') continue;
      if (name.isDirectory()) walk(join(abs, name.name), r);
      else out[r] = readFileSync(join(abs, name.name)).toString('base64');
    }
  };
  walk(dir, '');
  return out;
}

async function expectWritesRefused(dir: string, skip: string[] = []): Promise<number> {
  const before = files(dir, skip);
  let n = 0;
  for (const args of WRITES) {
    const r = await runLedger(args, { cwd: dir, env, stdin: args[1] === '--batch' ? BATCH : undefined });
    const what = `ledger ${args.join(' ')} exited ${r.code}: ${r.stderr}`;
    expect(r.code, what).toBe(3);
    expect(r.stderr.trimEnd().split('\n'), what).toHaveLength(1);
    expect(r.stderr, what).toMatch(/^ledger: /);
    expect(files(dir, skip), `${what}\nit changed the project`).toEqual(before);
    n++;
  }
  return n;
}

async function expectReadsWork(dir: string): Promise<number> {
  let n = 0;
  for (const args of READS) {
    const r = await runLedger(args, { cwd: dir, env });
    expect(r.code, `ledger ${args.join(' ')}: ${r.stderr}`).toBe(0);
    n++;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------

// In the temp folder of the disk (SUITE_DISK_TMPDIR): the suite's own may be a RAM disk
// (test/vitest.config.ts), where older kernels have no chattr, and this case would be skipped.
function diskScratch(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(process.env.SUITE_DISK_TMPDIR ?? tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const chattrWorks = (() => {
  const s = diskScratch('ledger-chattr-');
  try {
    return spawnSync('chattr', ['+i', s.dir]).status === 0 && spawnSync('chattr', ['-i', s.dir]).status === 0;
  } finally {
    s.cleanup();
  }
})();

describe.skipIf(!chattrWorks)('when the ledger directory cannot be written (chattr +i)', () => {
  let s: ReturnType<typeof scratch>;
  let ledger: string;
  beforeAll(async () => {
    s = diskScratch('ledger-readonly-');
    await makeProject(s.dir, true);
    ledger = join(s.dir, '.ledger');
  });
  afterAll(() => {
    spawnSync('chattr', ['-R', '-i', ledger]);
    s.cleanup();
  });

  it('refuses every write with exit 3 and one line, changes nothing, and still reads', async () => {
    // Policy for the test: the index of the causal layer is a derived cache; a reader that cannot
    // write it scans instead, so it is made immutable too, with everything else.
    mkdirSync(join(ledger, 'index'), { recursive: true });
    expect(spawnSync('chattr', ['-R', '+i', ledger]).status).toBe(0);
    figures.readOnlyRefused += await expectWritesRefused(s.dir);
    figures.readOnlyReads += await expectReadsWork(s.dir);
    expect(spawnSync('chattr', ['-R', '-i', ledger]).status).toBe(0);
    // Writable again: recover and append succeed with no manual cleanup.
    expect((await runLedger(['recover'], { cwd: s.dir, env })).code).toBe(0);
    expect((await runLedger(WRITES[0], { cwd: s.dir, env })).code).toBe(0);
    expect((await runLedger(['audit'], { cwd: s.dir, env })).code).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('when the disk is full (a 512 KiB tmpfs filled to the last page)', () => {
  let s: ReturnType<typeof scratch>;
  let mount: string;
  let mounted = false;
  beforeAll(() => {
    s = scratch('ledger-fulldisk-');
    mount = join(s.dir, 'mnt');
    mkdirSync(mount);
    mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mount]).status === 0;
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [mount]);
    s.cleanup();
  });

  it('refuses every write with exit 3 and one line, leaves no lock or temp file, and recovers once there is room', async (ctx) => {
    if (!mounted) ctx.skip(); // needs root and CAP_SYS_ADMIN; the fuzz covers ENOSPC through the seam
    await makeProject(mount, true);
    // Fill every page that is left.
    const filler = join(mount, 'filler');
    const fd = openSync(filler, 'w');
    const page = Buffer.alloc(4096, 0x61);
    try {
      for (;;) writeSync(fd, page);
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    // Down to the byte: a page may have had a partial tail left.
    try {
      for (;;) writeSync(fd, page.subarray(0, 1));
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
    figures.fullDiskRefused += await expectWritesRefused(mount, ['filler']);
    figures.fullDiskReads += await expectReadsWork(mount);
    // Room again: no manual cleanup needed.
    rmSync(filler);
    const rec = await runLedger(['recover', '--json'], { cwd: mount, env });
    expect(rec.code, rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout).moved).toBe(true);
    const r = await runLedger(WRITES[0], { cwd: mount, env });
    expect(r.code, r.stderr).toBe(0);
    const audit = await runLedger(['audit'], { cwd: mount, env });
    expect(audit.code, audit.stdout).toBe(0);
    expect(readdirSync(join(mount, '.ledger')).filter((n) => n === 'lock' || n.endsWith('.tmp'))).toEqual([]);
  });
});

afterAll(() => console.log(`[reliability] hostile environments: ${JSON.stringify(figures)}`));
