// The durable write recipe (src/fs/durable.ts) under the FileOps fault seam: a simulated disk
// (test/reliability/helpers/sim-disk.ts) that stops the process at any step, tears a write at any
// byte, cuts the power (losing whatever was not yet fsynced), fails a step with ENOSPC or EIO, or
// writes short; and the real disk with symbolic links planted where the recipe writes.
//
// What must hold, whatever happens: the target holds the old bytes or the new ones, never a mix
// and never empty (create: absent or whole); a call that returned survives a power cut; a call
// that failed (without a crash) leaves no temp file and no open descriptor; no link is followed.
import fc from 'fast-check';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { adoptFileDurable, createFileDurable, mkdirDurable, replaceFileDurable, replaceFilesDurable } from '../../src/fs/durable.js';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { scratch } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';
import { plantingLinks } from './planted-links.js';
import { Crash, FaultyOps, SimDisk, type ErrCode, type Fault } from '../reliability/helpers/sim-disk.js';

const DIR = '/w/d';
const NAME = 'target';
const TARGET = `${DIR}/${NAME}`;
const OLD = Buffer.from('{"the":"old bytes"}\n');
const NEW = Buffer.from('{"the":"new bytes","longer":"than the old ones, so a mix shows"}\n');

type Recipe = 'replace' | 'create';
const write = (recipe: Recipe, ops: FileOps, data: Uint8Array = NEW) =>
  recipe === 'replace' ? replaceFileDurable(ops, DIR, NAME, data) : createFileDurable(ops, DIR, NAME, data);

/** A disk with DIR and, when `old`, a durable target holding OLD. */
function freshDisk(old: boolean): SimDisk {
  const disk = new SimDisk(DIR);
  if (old) replaceFileDurable(disk.ops, DIR, NAME, OLD);
  return disk;
}

/** The target's bytes as a process sees them, or null when absent. */
const seen = (disk: SimDisk): Buffer | null => (disk.ops.exists(TARGET) ? disk.ops.readFile(TARGET) : null);
/** Names in DIR other than the target: temp files. */
const temps = (disk: SimDisk): string[] => disk.list(DIR).filter((n) => n !== NAME);

/** Every FileOps call one fault-free run makes, as "op arg", in order. */
function traceOf(run: (ops: FileOps) => void, disk: SimDisk): string[] {
  const calls: string[] = [];
  const ops = Object.fromEntries(
    Object.entries(disk.ops).map(([name, fn]) => [
      name,
      (...args: unknown[]) => {
        const [a, b] = args;
        calls.push([name, typeof a === 'string' ? a.replace(/\.target\.[0-9a-f]{12}\.tmp$/, '<tmp>') : 'fd', typeof b === 'string' && name === 'open' ? b : ''].join(' ').trim());
        return (fn as (...x: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as FileOps;
  run(ops);
  return calls;
}

/** What the target may hold after anything (a crash, a power cut, a failure) for this recipe. */
function allowed(recipe: Recipe, old: boolean): (Buffer | null)[] {
  if (recipe === 'create') return old ? [OLD] : [null, NEW];
  return old ? [OLD, NEW] : [null, NEW];
}

const RECIPES: { recipe: Recipe; old: boolean; label: string }[] = [
  { recipe: 'replace', old: true, label: 'replaceFileDurable over an old target' },
  { recipe: 'replace', old: false, label: 'replaceFileDurable with no target yet' },
  { recipe: 'create', old: false, label: 'createFileDurable' },
];

describe('the recipe runs its numbered steps in order', () => {
  it('replace: open wx, write, fsync, close, rename, then fsync of the directory', () => {
    const disk = freshDisk(true);
    expect(traceOf((ops) => write('replace', ops), disk)).toEqual([
      `open ${DIR}/<tmp> wx`, 'write fd', 'fsync fd', 'close fd', `rename ${DIR}/<tmp>`, `open ${DIR} r`, 'fsync fd', 'close fd',
    ]);
    expect(seen(disk)).toEqual(NEW);
  });

  it('create: open wx, write, fsync, close, link, unlink the temp name, then fsync of the directory', () => {
    const disk = freshDisk(false);
    expect(traceOf((ops) => write('create', ops), disk)).toEqual([
      `open ${DIR}/<tmp> wx`, 'write fd', 'fsync fd', 'close fd', `link ${DIR}/<tmp>`, `unlink ${DIR}/<tmp>`, `open ${DIR} r`, 'fsync fd', 'close fd',
    ]);
    expect(seen(disk)).toEqual(NEW);
    expect(temps(disk)).toEqual([]);
  });

  it('adopt: fsync of the filled file, rename, then fsync of the directory', () => {
    const disk = freshDisk(true);
    const fd = disk.ops.open(`${DIR}/.target.0123456789ab.tmp`, 'wx');
    disk.ops.write(fd, NEW, 0);
    disk.ops.close(fd);
    expect(traceOf((ops) => adoptFileDurable(ops, `${DIR}/.target.0123456789ab.tmp`, DIR, NAME), disk)).toEqual([
      `open ${DIR}/<tmp> r`, 'fsync fd', 'close fd', `rename ${DIR}/<tmp>`, `open ${DIR} r`, 'fsync fd', 'close fd',
    ]);
    expect(seen(disk)).toEqual(NEW);
  });
});

describe('when replaceFilesDurable rewrites two files of one folder (the views)', () => {
  const TWO = ['a.md', 'b.yml'];
  const NEWS = [Buffer.from('new a, longer than the old one\n'), Buffer.from('new b, longer than the old one\n')];
  const OLDS = [Buffer.from('old a\n'), Buffer.from('old b\n')];
  const disk2 = () => {
    const disk = new SimDisk(DIR);
    TWO.forEach((name, i) => replaceFileDurable(disk.ops, DIR, name, OLDS[i]));
    return disk;
  };
  const both = (ops: FileOps) => replaceFilesDurable(ops, DIR, TWO.map((name, i) => ({ name, data: NEWS[i] })));
  const got = (disk: SimDisk) => TWO.map((name) => disk.ops.readFile(`${DIR}/${name}`).toString());

  it('writes and fsyncs both temp files, renames both, then fsyncs the folder once', () => {
    const disk = disk2();
    const trace = traceOf(both, disk).map((c) => c.replace(/\.(a\.md|b\.yml)\.[0-9a-f]{12}\.tmp/, '<tmp $1>'));
    expect(trace).toEqual([
      `open ${DIR}/<tmp a.md> wx`, 'write fd', 'fsync fd', 'close fd', `open ${DIR}/<tmp b.yml> wx`, 'write fd', 'fsync fd', 'close fd',
      `rename ${DIR}/<tmp a.md>`, `rename ${DIR}/<tmp b.yml>`, `open ${DIR} r`, 'fsync fd', 'close fd',
    ]);
    expect(got(disk)).toEqual(NEWS.map(String));
  });

  it('after a crash or a power cut at any step, each file holds its old bytes or its new ones', () => {
    const f0 = new FaultyOps(disk2());
    f0.arm({ t: 'none' });
    both(f0.ops);
    for (let k = 0; k < f0.step; k++) {
      for (const power of [false, true]) {
        const disk = disk2();
        const f = new FaultyOps(disk);
        f.arm({ t: 'crash', at: k, tear: null, power, keepSeed: k });
        expect(() => both(f.ops)).toThrow(Crash);
        disk.restart({ power, keepSeed: k });
        got(disk).forEach((text, i) => expect([String(OLDS[i]), String(NEWS[i])], `step ${k}, power ${power}`).toContain(text));
        expect(disk.list(DIR).sort(), `step ${k}`).toEqual(expect.arrayContaining(TWO));
      }
    }
  });

  it('a second target that is a symbolic link (real disk) refuses the write before either file changes', () => {
    const s = scratch('durable-two-');
    try {
      writeFileSync(join(s.dir, 'a.md'), 'old a\n');
      symlinkSync(join(s.dir, 'elsewhere'), join(s.dir, 'b.yml'));
      expect(() => replaceFilesDurable(realFileOps, s.dir, TWO.map((name, i) => ({ name, data: NEWS[i] })))).toThrow(LedgerError);
      expect(readFileSync(join(s.dir, 'a.md'), 'utf8')).toBe('old a\n');
      expect(readdirSync(s.dir).sort()).toEqual(['a.md', 'b.yml']);
    } finally {
      s.cleanup();
    }
  });
});

/** How many FileOps calls one fault-free run of the recipe makes. */
function stepsOf(recipe: Recipe, old: boolean): number {
  const disk = freshDisk(old);
  const f = new FaultyOps(disk);
  f.arm({ t: 'none' });
  write(recipe, f.ops);
  return f.step;
}

/** Runs the recipe under `fault`; returns what it threw (null when it returned). */
function runUnder(recipe: Recipe, disk: SimDisk, fault: Fault): unknown {
  const f = new FaultyOps(disk);
  f.arm(fault);
  try {
    write(recipe, f.ops);
    return null;
  } catch (e) {
    return e;
  }
}

const POWER_SEEDS = [0, 1, 2, 3, 4, 5, 6, 7, 0x9e3779b9];

for (const { recipe, old, label } of RECIPES) {
  describe(`when ${label} is stopped (a crash) at every step`, () => {
    const n = stepsOf(recipe, old);

    it(`has the steps the recipe numbers (${n} calls), and a run past the last one completes`, () => {
      expect(n).toBe(recipe === 'replace' ? 8 : 9);
      const disk = freshDisk(old);
      expect(runUnder(recipe, disk, { t: 'crash', at: n, tear: null, power: false, keepSeed: 0 })).toBeNull();
      expect(seen(disk)).toEqual(NEW);
    });

    it('leaves the old bytes or the new ones after the process dies, and after a power cut', () => {
      for (let k = 0; k < n; k++) {
        const disk = freshDisk(old);
        const e = runUnder(recipe, disk, { t: 'crash', at: k, tear: null, power: false, keepSeed: 0 });
        expect(e, `step ${k}`).toBeInstanceOf(Crash);
        disk.restart({ power: false, keepSeed: 0 });
        expect(allowed(recipe, old), `step ${k}, process crash`).toContainEqual(seen(disk));
        for (const keepSeed of POWER_SEEDS) {
          const cut = freshDisk(old);
          runUnder(recipe, cut, { t: 'crash', at: k, tear: null, power: true, keepSeed });
          cut.restart({ power: true, keepSeed });
          expect(allowed(recipe, old), `step ${k}, power cut ${keepSeed}`).toContainEqual(seen(cut));
        }
      }
    });

    it('survives a power cut once it has returned, and once the directory fsync is done', () => {
      // The last fsync is the directory's: from the step after it, the new name is on the platter.
      for (const k of [n - 1, n]) {
        for (const keepSeed of POWER_SEEDS) {
          const disk = freshDisk(old);
          runUnder(recipe, disk, { t: 'crash', at: k, tear: null, power: true, keepSeed });
          disk.restart({ power: true, keepSeed });
          expect(seen(disk), `crash at ${k}, power cut ${keepSeed}`).toEqual(NEW);
        }
      }
    });

    it('never shows a write torn at any byte', () => {
      for (let tear = 0; tear <= NEW.length; tear++) {
        for (const power of [false, true]) {
          const disk = freshDisk(old);
          const e = runUnder(recipe, disk, { t: 'crash', at: 1, tear, power, keepSeed: tear });
          expect(e, `tear ${tear}`).toBeInstanceOf(Crash);
          disk.restart({ power, keepSeed: tear });
          const got = seen(disk);
          expect(got === null ? null : got.toString(), `tear ${tear}, power ${power}`).toEqual(old ? OLD.toString() : null);
        }
      }
    });
  });

  describe(`when a step of ${label} fails with ENOSPC or EIO`, () => {
    const n = stepsOf(recipe, old);
    // Step 4 makes the new name: the rename (replace) or the link (create); for create, step 5
    // removes the temp name.
    const PUBLISH = 4;

    for (const code of ['ENOSPC', 'EIO'] as ErrCode[]) {
      it(`${code}: an error, and before the new name is made the old target is byte-identical; never a temp file or an open descriptor left`, () => {
        const hit = new Set<number>();
        for (let k = 0; k < n; k++) {
          const disk = freshDisk(old);
          const f = new FaultyOps(disk);
          f.arm({ t: 'error', at: k, code, sticky: false, tear: 0 });
          let thrown: unknown = null;
          try {
            write(recipe, f.ops);
          } catch (e) {
            thrown = e;
          }
          expect(disk.openFds(), `from step ${k}`).toBe(0);
          if (f.firedAt === null) {
            // No call from k on can fail with this code (ENOSPC on a close): the run went through.
            expect(thrown, `from step ${k}`).toBeNull();
            expect(seen(disk), `from step ${k}`).toEqual(NEW);
            continue;
          }
          const at = f.firedAt;
          hit.add(at);
          if (recipe === 'create' && at === PUBLISH + 1) {
            // Only the temp name's unlink failed, after the link: the file is whole under its
            // name, the directory is still fsynced, and the call succeeds; the unlink refused
            // once is tried once more (removeQuietly), so no second name of the file is left.
            expect(thrown, `step ${at}`).toBeNull();
            expect(seen(disk), `step ${at}`).toEqual(NEW);
            expect(temps(disk), `step ${at}`).toHaveLength(0);
            continue;
          }
          expect((thrown as NodeJS.ErrnoException | null)?.code, `step ${at}`).toBe(code);
          expect(temps(disk), `step ${at}`).toEqual([]);
          if (at <= PUBLISH) {
            expect(seen(disk), `step ${at}`).toEqual(old ? OLD : null);
            expect(disk.readDurable(TARGET), `step ${at}: on the platter`).toEqual(old ? OLD : null);
          } else {
            // The new name exists; only its durability is in doubt, and the error says so.
            expect(seen(disk), `step ${at}`).toEqual(NEW);
          }
        }
        // EIO can hit every call; ENOSPC the temp file's open, write and fsync, the rename or
        // link, and the directory's fsync.
        expect([...hit].sort((a, b) => a - b)).toEqual(
          code === 'EIO' ? [...Array(n).keys()] : recipe === 'replace' ? [0, 1, 2, 4, 6] : [0, 1, 2, 4, 7],
        );
      });
    }

    it('continues short writes to the end', () => {
      const disk = freshDisk(old);
      const f = new FaultyOps(disk);
      f.arm({ t: 'short' });
      write(recipe, f.ops);
      expect(f.fired).toBe(true);
      expect(seen(disk)).toEqual(NEW);
      expect(temps(disk)).toEqual([]);
    });

    it('continues a write the full disk cut short, then reports the ENOSPC that follows', () => {
      const disk = freshDisk(old);
      const f = new FaultyOps(disk);
      // The first write returns 5 bytes (what fit); from then on every allocation fails.
      f.arm({ t: 'error', at: 1, code: 'ENOSPC', sticky: true, tear: 5 });
      expect(() => write(recipe, f.ops)).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
      expect(seen(disk)).toEqual(old ? OLD : null);
      expect(temps(disk)).toEqual([]);
      expect(disk.openFds()).toBe(0);
    });
  });
}

describe('when createFileDurable finds its target taken', () => {
  it('refuses an existing file with INPUT_EXISTS, leaves it byte-identical and no temp behind', () => {
    const disk = freshDisk(true);
    const e = runUnder('create', disk, { t: 'none' });
    expect(e).toBeInstanceOf(LedgerError);
    expect((e as LedgerError).code).toBe('INPUT_EXISTS');
    expect(seen(disk)).toEqual(OLD);
    expect(temps(disk)).toEqual([]);
    expect(disk.openFds()).toBe(0);
  });
});

describe('when random fault plans run over the recipe (property)', () => {
  const codes: ErrCode[] = ['ENOSPC', 'EIO', 'EACCES', 'EROFS'];
  const fault: fc.Arbitrary<Fault> = fc.oneof(
    fc.constant<Fault>({ t: 'none' }),
    fc.constant<Fault>({ t: 'short' }),
    fc.record({ t: fc.constant('crash' as const), at: fc.nat(10), tear: fc.option(fc.nat(NEW.length + 2)), power: fc.boolean(), keepSeed: fc.nat() }),
    fc.record({ t: fc.constant('error' as const), at: fc.nat(10), code: fc.constantFrom(...codes), sticky: fc.boolean(), tear: fc.nat(NEW.length) }),
  );

  it('keeps the target old or new (create: absent or whole), a returned call durable, a failed one clean', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RECIPES), fault, fc.uint8Array({ minLength: 0, maxLength: 300 }), ({ recipe, old }, plan, data) => {
        const next = Buffer.from(data);
        const disk = freshDisk(old);
        const f = new FaultyOps(disk);
        f.arm(plan);
        let thrown: unknown = null;
        try {
          write(recipe, f.ops, next);
        } catch (e) {
          thrown = e;
        }
        const ok = (recipe === 'create' ? (old ? [OLD] : [null, next]) : old ? [OLD, next] : [null, next]).map((b) => b?.toString('hex') ?? null);
        const hex = (b: Buffer | null) => b?.toString('hex') ?? null;
        if (thrown instanceof Crash) {
          disk.restart({ power: plan.t === 'crash' && plan.power, keepSeed: plan.t === 'crash' ? plan.keepSeed : 0 });
          expect(ok).toContain(hex(seen(disk)));
          return;
        }
        expect(disk.openFds()).toBe(0);
        expect(ok).toContain(hex(seen(disk)));
        if (thrown === null) {
          expect(hex(seen(disk))).toBe(recipe === 'create' && old ? hex(OLD) : hex(next));
          disk.restart({ power: true, keepSeed: 0 }); // lose everything not fsynced
          expect(hex(seen(disk))).toBe(recipe === 'create' && old ? hex(OLD) : hex(next));
        } else {
          const code = (thrown as { code?: string }).code;
          expect(thrown instanceof LedgerError ? code === 'INPUT_EXISTS' && recipe === 'create' && old : codes.includes(code as ErrCode)).toBe(true);
          // A disk that refuses even the unlink (a sticky EIO, EACCES or EROFS) keeps the temp file.
          const unlinkRefused = plan.t === 'error' && plan.sticky && plan.code !== 'ENOSPC';
          if (!unlinkRefused) expect(temps(disk)).toEqual([]);
        }
      }),
      { numRuns: runs(500, 20_000) },
    );
  });
});

describe('when a temp name is planted as a symbolic link (real disk)', () => {
  let s: ReturnType<typeof scratch>;
  let dir: string;
  let victim: string;
  const VICTIM = Buffer.from('the victim: nothing may write here\n');
  beforeEach(() => {
    s = scratch('ledger-durable-');
    dir = join(s.dir, 'd');
    mkdirSync(dir);
    victim = join(s.dir, 'victim');
    writeFileSync(victim, VICTIM);
  });
  afterEach(() => s.cleanup());

  for (const recipe of ['replace', 'create'] as const) {
    const run = (ops: FileOps) => (recipe === 'replace' ? replaceFileDurable(ops, dir, NAME, NEW) : createFileDurable(ops, dir, NAME, NEW));

    it(`${recipe}: fails with EEXIST after one open, and the victim the link names is byte-identical`, () => {
      if (recipe === 'replace') writeFileSync(join(dir, NAME), OLD);
      const { ops, opens } = plantingLinks(victim);
      expect(() => run(ops)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
      expect(opens).toHaveLength(1); // no retry under another name
      expect(readFileSync(victim)).toEqual(VICTIM);
      if (recipe === 'replace') expect(readFileSync(join(dir, NAME))).toEqual(OLD);
      else expect(existsSync(join(dir, NAME))).toBe(false);
      // Only the planted link is left, untouched: nothing of the recipe's own.
      expect(readdirSync(dir).filter((n) => n !== NAME)).toEqual([opens[0].slice(dir.length + 1)]);
      expect(lstatSync(opens[0]).isSymbolicLink()).toBe(true);
    });

    it(`${recipe}: a dangling planted link is not followed to create its target`, () => {
      const nowhere = join(s.dir, 'would-be-created');
      const { ops } = plantingLinks(nowhere);
      expect(() => run(ops)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
      expect(existsSync(nowhere)).toBe(false);
    });
  }

  it('replace, on the real disk: a target that is a link to the victim is refused (OP_SYMLINK), neither followed nor replaced, no temp behind', () => {
    symlinkSync(victim, join(dir, NAME));
    expect(() => replaceFileDurable(realFileOps, dir, NAME, NEW)).toThrow(expect.objectContaining({ code: 'OP_SYMLINK' }));
    expect(lstatSync(join(dir, NAME)).isSymbolicLink()).toBe(true);
    expect(readFileSync(victim)).toEqual(VICTIM);
    expect(readdirSync(dir)).toEqual([NAME]);
  });

  it('create: refuses an existing target (INPUT_EXISTS), byte-identical, no temp behind', () => {
    writeFileSync(join(dir, NAME), OLD);
    expect(() => createFileDurable(realFileOps, dir, NAME, NEW)).toThrow(expect.objectContaining({ code: 'INPUT_EXISTS' }));
    expect(readFileSync(join(dir, NAME))).toEqual(OLD);
    expect(readdirSync(dir)).toEqual([NAME]);
  });

  it('create: refuses a dangling link at the target (INPUT_EXISTS), creates nothing where it points, no temp behind', () => {
    const nowhere = join(s.dir, 'would-be-created');
    symlinkSync(nowhere, join(dir, NAME));
    expect(() => createFileDurable(realFileOps, dir, NAME, NEW)).toThrow(expect.objectContaining({ code: 'INPUT_EXISTS' }));
    expect(existsSync(nowhere)).toBe(false);
    expect(lstatSync(join(dir, NAME)).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).toEqual([NAME]);
  });

  it('create: refuses a link to the victim at the target, and the victim is byte-identical', () => {
    symlinkSync(victim, join(dir, NAME));
    expect(() => createFileDurable(realFileOps, dir, NAME, NEW)).toThrow(expect.objectContaining({ code: 'INPUT_EXISTS' }));
    expect(readFileSync(victim)).toEqual(VICTIM);
    expect(readdirSync(dir)).toEqual([NAME]);
  });
});

describe('when mkdirDurable makes directories', () => {
  it('fsyncs the parent of each one it made, outermost first, and of the last one even when it was there', () => {
    const disk = new SimDisk('/w');
    const trace = traceOf((ops) => mkdirDurable(ops, '/w/a/b/c', 0o700), disk);
    expect(trace).toEqual(['exists /w/a/b/c', 'exists /w/a/b', 'exists /w/a', 'exists /w', 'mkdir /w/a/b/c', 'open /w r', 'fsync fd', 'close fd', 'open /w/a r', 'fsync fd', 'close fd', 'open /w/a/b r', 'fsync fd', 'close fd']);
    // A power cut right after: all three directories are there.
    disk.restart({ power: true, keepSeed: 0 });
    expect(disk.listDurable('/w/a/b')).toEqual(['c']);
    expect(traceOf((ops) => mkdirDurable(ops, '/w/a/b/c', 0o700), disk)).toEqual(['exists /w/a/b/c', 'open /w/a/b r', 'fsync fd', 'close fd']);
  });
});
