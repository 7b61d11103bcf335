// Every file that must survive a crash goes through src/fs/durable.ts: the secret key file, the
// blob store (pasted output, a test command's captured output and its scratch file), and no code
// elsewhere in src/ or audit/ writes, renames or fsyncs a file with node:fs directly.
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/canonical.js';
import { LedgerError } from '../../src/errors.js';
import { realFileOps, type FileOps, type OpenFlags } from '../../src/fs/ops.js';
import { adoptBlobFile, blobDir, openBlobScratch, putBlob, readBlob } from '../../src/handoff/blobs.js';
import { runTestsCommand } from '../../src/handoff/tests-cmd.js';
import { readSecretKey, writeSecretKey } from '../../src/keys/key-file.js';
import { parseSecretKeyFile } from '../../src/keys/secret-key.js';
import { ROOT, scratch } from '../helpers/cli.js';
import { FIXED_SEED } from '../helpers/fixed-keys.js';
import { FaultyOps, SimDisk, errno } from '../reliability/helpers/sim-disk.js';
import { plantingLinks } from './planted-links.js';

/** The real disk, recording each call that changes or syncs something, by path ("fsync <path>"). */
function spy(over: Partial<FileOps> = {}): { ops: FileOps; calls: string[] } {
  const calls: string[] = [];
  const paths = new Map<number, string>();
  const base: FileOps = { ...realFileOps, ...over };
  const ops: FileOps = {
    ...base,
    open: (p: string, flags: OpenFlags, mode?: number) => {
      const fd = base.open(p, flags, mode);
      paths.set(fd, p);
      if (flags !== 'r') calls.push(`open ${flags} ${p}`);
      return fd;
    },
    fsync: (fd) => {
      calls.push(`fsync ${paths.get(fd)}`);
      base.fsync(fd);
    },
    rename: (a, b) => {
      calls.push(`rename ${a} ${b}`);
      base.rename(a, b);
    },
    link: (a, b) => {
      calls.push(`link ${a} ${b}`);
      base.link(a, b);
    },
    unlink: (p) => {
      calls.push(`unlink ${p}`);
      base.unlink(p);
    },
    mkdir: (p, mode) => {
      calls.push(`mkdir ${p}`);
      base.mkdir(p, mode);
    },
  };
  return { ops, calls };
}

/** A temp name of the recipe beside `target`. */
const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const tmpOf = (target: string) => new RegExp(`^${escape(`${dirname(target)}/.${basename(target)}.`)}[0-9a-f]{12}\\.tmp$`);

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch('ledger-writers-');
});
afterEach(() => s.cleanup());

describe('when a secret key file is written', () => {
  it('is mode 0600, parses back, and is linked into place only after its bytes were fsynced, then its directory is fsynced', () => {
    const path = join(s.dir, 'a', 'keys', 'harness.key');
    const { ops, calls } = spy();
    writeSecretKey(path, 'harness', FIXED_SEED, ops);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const back = readSecretKey(path);
    expect(back.name).toBe('harness');
    expect(Buffer.from(back.seed)).toEqual(Buffer.from(FIXED_SEED));
    // The recipe's steps, in order (open wx, fsync temp, link, unlink temp, fsync directory),
    // after the two new directories, each fsynced into its parent.
    const tmp = calls.find((c) => c.startsWith('open wx '))!.slice('open wx '.length);
    expect(tmp).toMatch(tmpOf(path));
    expect(calls).toEqual([
      `mkdir ${dirname(path)}`,
      `fsync ${s.dir}`,
      `fsync ${join(s.dir, 'a')}`,
      `open wx ${tmp}`,
      `fsync ${tmp}`,
      `link ${tmp} ${path}`,
      `unlink ${tmp}`,
      `fsync ${dirname(path)}`,
    ]);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(readdirSync(dirname(path))).toEqual(['harness.key']);
  });

  it('never overwrites a file that is there (INPUT_EXISTS with a hint), and leaves it byte-identical', () => {
    const path = join(s.dir, 'harness.key');
    writeFileSync(path, 'someone else\'s key\n', { mode: 0o600 });
    let err: unknown;
    try {
      writeSecretKey(path, 'harness', FIXED_SEED);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('INPUT_EXISTS');
    expect((err as LedgerError).message).toMatch(/never overwritten/);
    expect((err as LedgerError).hint).toMatch(/--out/);
    expect(readFileSync(path, 'utf8')).toBe('someone else\'s key\n');
    expect(readdirSync(s.dir)).toEqual(['harness.key']);
  });

  it('is never written through a link planted at its temp name, nor through one at its own name', () => {
    const victim = join(s.dir, 'victim');
    writeFileSync(victim, 'victim\n');
    const { ops: planted } = plantingLinks(victim);
    const path = join(s.dir, 'k', 'harness.key');
    expect(() => writeSecretKey(path, 'harness', FIXED_SEED, planted)).toThrow(expect.objectContaining({ code: 'OP_IO' }));
    expect(existsSync(path)).toBe(false);
    symlinkSync(victim, join(s.dir, 'at-the-name.key'));
    expect(() => writeSecretKey(join(s.dir, 'at-the-name.key'), 'harness', FIXED_SEED)).toThrow(expect.objectContaining({ code: 'INPUT_EXISTS' }));
    expect(readFileSync(victim, 'utf8')).toBe('victim\n');
  });

  it('is whole or absent after a crash at any step, even after a power cut (never an empty key file)', () => {
    const path = '/p/keys/harness.key';
    const run = (f: FaultyOps) => {
      try {
        writeSecretKey(path, 'harness', FIXED_SEED, f.ops);
      } catch (e) {
        if (!f.crashed) throw e;
      }
    };
    const probe = new FaultyOps(new SimDisk('/p'));
    probe.arm({ t: 'none' });
    run(probe);
    const n = probe.step;
    expect(n).toBeGreaterThan(9);
    for (let k = 0; k <= n; k++) {
      for (const keepSeed of [0, 1, 2, 3, 7]) {
        const disk = new SimDisk('/p');
        const f = new FaultyOps(disk);
        f.arm({ t: 'crash', at: k, tear: null, power: true, keepSeed });
        run(f);
        disk.restart({ power: true, keepSeed });
        if (k === n) expect(disk.ops.exists(path), `returned, power cut ${keepSeed}`).toBe(true);
        if (!disk.ops.exists(path)) continue;
        const key = parseSecretKeyFile(disk.ops.readFile(path).toString('utf8'), path);
        expect(Buffer.from(key.seed), `step ${k}, power cut ${keepSeed}`).toEqual(Buffer.from(FIXED_SEED));
      }
    }
  });
});

describe('when bytes are put in the blob store', () => {
  const data = Buffer.from('14 passed, 0 failed\n');
  const hex = sha256Hex(data);

  it('writes them by the replace recipe, in a blob directory whose new entries were fsynced', () => {
    const ledgerDir = join(s.dir, '.ledger');
    mkdirSync(ledgerDir);
    const { ops, calls } = spy();
    const blob = putBlob(ledgerDir, data, ops);
    expect(blob).toEqual({ digest: `sha256:${hex}`, bytes: data.length, path: join(blobDir(ledgerDir), hex) });
    expect(readBlob(ledgerDir, blob.digest)).toEqual(data);
    const tmp = calls.find((c) => c.startsWith('open wx '))!.slice('open wx '.length);
    expect(tmp).toMatch(tmpOf(blob.path));
    expect(calls).toEqual([
      `mkdir ${blobDir(ledgerDir)}`,
      `fsync ${ledgerDir}`,
      `fsync ${join(ledgerDir, 'blobs')}`,
      `open wx ${tmp}`,
      `fsync ${tmp}`,
      `rename ${tmp} ${blob.path}`,
      `fsync ${blobDir(ledgerDir)}`,
    ]);
  });

  it('keeps a blob that is there, after making it and its entry durable (an earlier writer may have died before its directory fsync)', () => {
    const ledgerDir = join(s.dir, '.ledger');
    putBlob(ledgerDir, data);
    const { ops, calls } = spy();
    putBlob(ledgerDir, data, ops);
    const path = join(blobDir(ledgerDir), hex);
    expect(calls).toEqual([`fsync ${join(ledgerDir, 'blobs')}`, `fsync ${path}`, `fsync ${blobDir(ledgerDir)}`]);
    expect(readFileSync(path)).toEqual(data);
  });
});

describe('when a test command\'s output is captured and adopted into the blob store', () => {
  const data = Buffer.from('ok 1\nok 2\nFAIL 3\n');
  const hex = sha256Hex(data);
  let ledgerDir: string;
  beforeEach(() => {
    ledgerDir = join(s.dir, '.ledger');
    mkdirSync(ledgerDir);
  });

  function filledScratch(): string {
    const { path, fd } = openBlobScratch(ledgerDir);
    realFileOps.write(fd, data, 0);
    realFileOps.close(fd);
    return path;
  }

  it('opens the scratch file as a new file only: a link planted at its name is refused, and its victim untouched', () => {
    const victim = join(s.dir, 'victim');
    writeFileSync(victim, 'victim\n');
    const { ops: planted } = plantingLinks(victim);
    expect(() => openBlobScratch(ledgerDir, planted)).toThrow(expect.objectContaining({ code: 'OP_IO', data: expect.objectContaining({ errno: 'EEXIST' }) }));
    expect(readFileSync(victim, 'utf8')).toBe('victim\n');
  });

  it('fsyncs the scratch file, renames it under its digest, then fsyncs the blob directory', () => {
    const scratchPath = filledScratch();
    const { ops, calls } = spy();
    const blob = adoptBlobFile(ledgerDir, scratchPath, ops);
    expect(blob.digest).toBe(`sha256:${hex}`);
    expect(blob.bytes).toBe(data.length);
    expect(readBlob(ledgerDir, blob.digest)).toEqual(data);
    expect(calls).toEqual([
      `mkdir ${blobDir(ledgerDir)}`,
      `fsync ${join(ledgerDir, 'blobs')}`,
      `fsync ${scratchPath}`,
      `rename ${scratchPath} ${blob.path}`,
      `fsync ${blobDir(ledgerDir)}`,
    ]);
    expect(existsSync(scratchPath)).toBe(false);
  });

  it('removes the scratch file when that blob is stored already, and keeps the stored one', () => {
    putBlob(ledgerDir, data);
    const scratchPath = filledScratch();
    const blob = adoptBlobFile(ledgerDir, scratchPath);
    expect(readBlob(ledgerDir, blob.digest)).toEqual(data);
    expect(readdirSync(dirname(scratchPath))).toEqual([]);
  });

  it('refuses with a coded error when the rename fails (EIO), and leaves neither a blob nor the scratch file', () => {
    const scratchPath = filledScratch();
    const { ops } = spy({ rename: () => { throw errno('EIO', 'rename'); } });
    expect(() => adoptBlobFile(ledgerDir, scratchPath, ops)).toThrow(expect.objectContaining({ code: 'OP_IO' }));
    expect(existsSync(join(blobDir(ledgerDir), hex))).toBe(false);
    expect(readdirSync(dirname(scratchPath))).toEqual([]);
  });

  // As this process, with a key the output cannot contain.
  const RUN_AS_IS = { boundary: { ids: { uid: 0, gid: 0, euid: 0 }, caller: null, owner: { name: null, home: null } }, user: null, secret: { seed: new Uint8Array(32).fill(7), file: null, path: null }, keyPath: null };

  it('leaves no scratch file behind when the command cannot even start', async () => {
    const run = runTestsCommand('true', { cwd: join(s.dir, 'no-such-dir'), ledgerDir, timeoutMs: 60_000, env: {}, ...RUN_AS_IS });
    await expect(run).rejects.toThrow(LedgerError);
    expect(readdirSync(join(ledgerDir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('leaves no scratch file behind after a command that ran', async () => {
    const res = (await runTestsCommand('echo hello', { cwd: s.dir, ledgerDir, timeoutMs: 60_000, env: { PATH: process.env.PATH ?? '' }, ...RUN_AS_IS })).adopt();
    expect(readBlob(ledgerDir, res.blob.digest).toString()).toBe('hello\n');
    expect(readdirSync(join(ledgerDir, 'blobs', 'tmp'))).toEqual([]);
    expect(lstatSync(res.blob.path).isFile()).toBe(true);
  });
});

describe('when the sources are read for writes that bypass the recipe', () => {
  // Direct node:fs calls that write, rename, link or sync a file, and FileOps renames and links.
  const WRITES = /\b(writeFileSync|appendFileSync|writeSync|renameSync|linkSync|fsyncSync|fdatasyncSync|copyFileSync|cpSync|createWriteStream)\b|\bopenSync\([^)]*['"](w|wx|a|r\+)['"]|\bops\.(rename|link)\(/;
  // Policy: each exception says why its file is not one that must survive a crash, or who is
  // moving it onto src/fs/durable.ts. An exception that no longer matches must be removed.
  const EXCEPTIONS: Record<string, string> = {
    'src/cli/io.ts': 'writes stdout and stderr (writeSync to fds 1 and 2), not files',
    'src/demo/demo.ts': 'the demo edits its own scratch project as a user would; not shipped',
    'src/launch/prime-cache.cts': 'the build writes a throwaway project to run the verbs in',
  };

  function sources(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return sources(p);
      return /\.(ts|cts|mts)$/.test(e.name) ? [relative(ROOT, p)] : [];
    });
  }

  it('finds none outside src/fs/ but the listed exceptions, and every exception still applies', () => {
    const files = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'audit'))].filter((f) => !f.startsWith('src/fs/'));
    expect(files).toEqual(expect.arrayContaining(['src/keys/key-file.ts', 'src/handoff/blobs.ts', 'src/store/append.ts']));
    const offenders = files.filter((f) => readFileSync(join(ROOT, f), 'utf8').split('\n').some((line) => !/^\s*(\/\/|\*)/.test(line) && WRITES.test(line)));
    expect(offenders.filter((f) => !(f in EXCEPTIONS))).toEqual([]);
    expect(Object.keys(EXCEPTIONS).filter((f) => !offenders.includes(f)), 'exceptions that no longer apply').toEqual([]);
  });
});
