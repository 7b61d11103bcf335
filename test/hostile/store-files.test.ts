// Issue 13 findings 4, 12 (the store's share) and 14: the files the store reads and writes, when
// someone planted something else by their name.
//   - a view, floor or trust file that is a symbolic link is refused (exit 3), neither followed
//     nor replaced, and nothing is changed;
//   - a FIFO (or a directory) as HEAD, records.jsonl, a trust file, a floor, a key file, the
//     lock, or an index segment never blocks: each is refused or set aside promptly. The real
//     binary runs with a generous kill timeout; a test asserts its exit code, never a time;
//   - a malformed key file's text appears in no output (stderr, --json, doctor).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, initProject, runLedger, scratch, snapshot, type Run } from '../helpers/cli.js';

let p: Awaited<ReturnType<typeof initProject>>;
let victim: string;
const VICTIM = 'the victim file, outside the project\n';
beforeEach(async () => {
  p = await initProject('files');
  victim = join(p.dir, '..', `${p.dir.split('/').pop()}-victim`);
  writeFileSync(victim, VICTIM);
});
afterEach(() => {
  p.cleanup();
  rmSync(victim, { force: true });
});

const ledger = (args: string[], cwd = p.dir) => runLedger(args, { cwd });
const ok = (r: Run) => expect(r.code, r.stderr).toBe(0);
const oneLine = (r: Run) => expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);

/** The real binary, killed after two minutes if it hangs (a hang then shows as a signal, not a code). */
function binary(args: string[], cwd = p.dir, stdin = ''): Run & { signal: NodeJS.Signals | null } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', LEDGER_STATE_DIR: process.env.LEDGER_STATE_DIR ?? '' },
    input: stdin,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}
/** snapshot(), but a FIFO is named, never read (reading it would block this test). */
function safeSnapshot(ledgerDir: string) {
  const read = (f: string) => {
    const path = join(ledgerDir, f);
    if (!existsSync(path)) return null;
    return lstatSync(path).isFile() ? readFileSync(path).toString('base64') : 'not a regular file';
  };
  return { records: read('records.jsonl'), head: read('HEAD'), entries: readdirSync(ledgerDir).sort() };
}
const mkfifo = (path: string) => expect(spawnSync('mkfifo', [path]).status).toBe(0);
const appendArgs = (exec: string) => ['append', 'handoff', '--agent', 'claude', '--op', 'op', '--exec', exec, '--outcome', 'success'];

describe('when a view is a symbolic link to a file outside the project', () => {
  beforeEach(async () => {
    ok(await ledger(['start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()']));
    unlinkSync(join(p.dir, 'HANDOFF.md'));
    symlinkSync(victim, join(p.dir, 'HANDOFF.md'));
  });

  it('checkpoint and start refuse (exit 3, OP_SYMLINK) before they write: the ledger, the link and its target unchanged', async () => {
    const before = { ...snapshot(p.ledger), yml: readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8') };
    for (const args of [
      ['checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n'],
      ['start', 'other', '--agent', 'codex', '--summary', 's'],
      ['render'],
    ]) {
      const r = await ledger(args);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/HANDOFF\.md is a symbolic link; (it is never followed or replaced|a view is never written through or over one)/);
      oneLine(r);
      expect(lstatSync(join(p.dir, 'HANDOFF.md')).isSymbolicLink()).toBe(true);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM);
      expect({ ...snapshot(p.ledger), yml: readFileSync(join(p.dir, 'HANDOFF.yml'), 'utf8') }).toEqual(before);
    }
  });
});

describe('when the floor that `audit --advance` would replace is a symbolic link', () => {
  it('is refused (exit 3) before the audit: the link and the file it names unchanged', async () => {
    const real = join(p.dir, 'floor.json');
    ok(await ledger(['audit', '--floor', real, '--advance']));
    ok(await ledger(appendArgs('e1')));
    const floorBytes = readFileSync(real, 'utf8');
    symlinkSync(real, join(p.dir, 'floor-link.json'));
    const r = await ledger(['audit', '--floor', 'floor-link.json', '--advance']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/floor-link\.json is a symbolic link/);
    oneLine(r);
    expect(lstatSync(join(p.dir, 'floor-link.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe(floorBytes);
  });
});

describe('when the trust file `ledger init` would write is a symbolic link', () => {
  it('init refuses (exit 3) before it makes a key or a ledger; the link and its target unchanged', async () => {
    const fresh = scratch('ledger-init-link-');
    try {
      mkdirSync(join(fresh.dir, 'keys'));
      symlinkSync(victim, join(fresh.dir, 'keys', 'trust.json'));
      const r = await ledger(['init'], fresh.dir);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/trust\.json is a symbolic link/);
      expect(readdirSync(join(fresh.dir, 'keys'))).toEqual(['trust.json']);
      expect(existsSync(join(fresh.dir, '.ledger'))).toBe(false);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM);
    } finally {
      fresh.cleanup();
    }
  });
});

describe('when a FIFO is planted where the store reads a file', () => {
  const cases: [string, () => string, string[], RegExp][] = [
    ['HEAD, read by log', () => join(p.ledger, 'HEAD'), ['log'], /HEAD is not a regular file/],
    ['HEAD, read by append', () => join(p.ledger, 'HEAD'), appendArgs('f1'), /HEAD is not a regular file/],
    ['HEAD, read by audit', () => join(p.ledger, 'HEAD'), ['audit'], /HEAD is not a regular file/],
    ['records.jsonl, read by log', () => join(p.ledger, 'records.jsonl'), ['log'], /records\.jsonl is not a regular file/],
    ['records.jsonl, read by append', () => join(p.ledger, 'records.jsonl'), appendArgs('f2'), /records\.jsonl is not a regular file/],
    ['the trust file, read by audit', () => join(p.dir, 'keys', 'trust.json'), ['audit'], /trust\.json is not a regular file/],
    ['the key file, read by append', () => join(p.dir, 'keys', 'harness.key'), appendArgs('f3'), /harness\.key is not a regular file/],
  ];
  for (const [what, path, args, reason] of cases) {
    it(`${what}: refused promptly (exit 3), nothing changed`, () => {
      rmSync(path());
      mkfifo(path());
      const before = safeSnapshot(p.ledger);
      const r = binary(args);
      expect(r.signal, 'it hung').toBeNull();
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(reason);
      oneLine(r);
      expect(safeSnapshot(p.ledger)).toEqual(before);
    });
  }

  it('a floor: audit --floor refuses promptly (exit 3)', () => {
    mkfifo(join(p.dir, 'floor.json'));
    const r = binary(['audit', '--floor', 'floor.json']);
    expect(r.signal, 'it hung').toBeNull();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/floor file .*floor\.json is not a regular file/);
  });

  it('the trust file, read by a writer whose HEAD another key signed: refused promptly (exit 3), as an untrusted HEAD', () => {
    expect(binary(['keygen', '--out', 'keys/ci.key', '--name', 'ci']).code).toBe(0);
    rmSync(join(p.dir, 'keys', 'trust.json'));
    mkfifo(join(p.dir, 'keys', 'trust.json'));
    const before = safeSnapshot(p.ledger);
    const r = binary([...appendArgs('f4'), '--key', 'keys/ci.key']);
    expect(r.signal, 'it hung').toBeNull();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/the trust file cannot be read \(.*trust\.json is not a regular file/);
    expect(safeSnapshot(p.ledger)).toEqual(before);
  });

  it('an index segment: set aside (the index is derived), and the append goes through promptly', () => {
    for (let i = 0; i < 3; i++) expect(binary(appendArgs(`s${i}`)).code).toBe(0);
    mkdirSync(join(p.ledger, 'index'), { recursive: true });
    mkfifo(join(p.ledger, 'index', '0000000000000-0000000000002.seg'));
    const r = binary(appendArgs('s9'));
    expect(r.signal, 'it hung').toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(binary(['audit']).code).toBe(0);
  });
});

describe('when the lock is not a lock a writer made', () => {
  const lock = () => join(p.ledger, 'lock');

  for (const [what, plant] of [
    ['a FIFO', () => mkfifo(lock())],
    ['a dangling symbolic link', () => symlinkSync(join(p.dir, 'nowhere'), lock())],
    ['a symbolic link to a file outside', () => symlinkSync(victim, lock())],
  ] as const) {
    it(`${what}: taken over (unlinked itself, never what it names), and the append goes through promptly`, () => {
      plant();
      const r = binary([...appendArgs('l1'), '--wait', '2s']);
      expect(r.signal, 'it hung').toBeNull();
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(p.dir, 'nowhere'))).toBe(false);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM);
      expect(existsSync(lock())).toBe(false);
    });
  }

  it('a directory: refused at once (exit 3, OP_NOT_REGULAR), not waited on', () => {
    mkdirSync(lock());
    const before = safeSnapshot(p.ledger);
    const r = binary([...appendArgs('l2'), '--wait', '10m']);
    expect(r.signal, 'it hung').toBeNull();
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/lock is a directory/);
    expect(safeSnapshot(p.ledger)).toEqual(before);
  });

  it('held by a live pid that started at another time (a reused pid): taken over', () => {
    // This test's own process is alive; the lock says it started at another time.
    writeFileSync(lock(), JSON.stringify({ pid: process.pid, host: readFileSync('/proc/sys/kernel/hostname', 'utf8').trim(), nonce: 'n', since: '2026-01-01T00:00:00.000Z', start: '1' }));
    const r = binary([...appendArgs('l3'), '--wait', '10m']);
    expect(r.signal, 'it hung').toBeNull();
    expect(r.code, r.stderr).toBe(0);
  });

  it('held by a live pid with its own start time: waited for, then refused (OP_LOCK_TIMEOUT, exit 3)', () => {
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    writeFileSync(lock(), JSON.stringify({ pid: process.pid, host: readFileSync('/proc/sys/kernel/hostname', 'utf8').trim(), nonce: 'n', since: '2026-01-01T00:00:00.000Z', start }));
    const r = binary([...appendArgs('l4'), '--wait', '200ms']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`held by pid ${process.pid}`));
  });
});

describe('when temp files of a killed writer are left in the ledger directory', () => {
  it('the next writer removes those of the recipe\'s names under the lock, and nothing else', () => {
    const d = p.ledger;
    writeFileSync(join(d, '.HEAD.0123456789ab.tmp'), 'half a HEAD');
    writeFileSync(join(d, '.HEAD.4242.tmp'), 'an old pid-named one');
    symlinkSync(victim, join(d, '.HEAD.abcdefabcdef.tmp'));
    writeFileSync(join(d, '.HEAD.notours.tmp'), 'not our pattern');
    mkdirSync(join(d, 'quarantine'), { recursive: true });
    writeFileSync(join(d, 'quarantine', '.at-10-0123456789abcdef.bin.0123456789ab.tmp'), 'x');
    expect(binary(appendArgs('t1')).code).toBe(0);
    expect(readdirSync(d).filter((n) => n.endsWith('.tmp')).sort()).toEqual(['.HEAD.abcdefabcdef.tmp', '.HEAD.notours.tmp']);
    expect(readdirSync(join(d, 'quarantine'))).toEqual([]);
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM);
  });
});

describe('when the key file is malformed and holds a seed-like string', () => {
  const SEED = 'Zk9vQmFyQmF6UXV4U2VjcmV0U2VlZFN0cmluZzEyMzQ';
  const variants: [string, string][] = [
    ['cut off inside the seed', `{"v":1,"alg":"ed25519","name":"harness","secret_key":"${SEED}`],
    ['with junk after the seed', `{"v":1,"alg":"ed25519","name":"harness","secret_key":"${SEED}"}x`],
    ['with the seed as a field name', `{"v":1,"alg":"ed25519","name":"harness","${SEED}":1}`],
    ['with the seed as a duplicate key', `{"v":1,"alg":"ed25519","name":"harness","${SEED}":1,"${SEED}":2}`],
    ['with a single-quoted seed', `{'v':1,'secret_key':'${SEED}'}`],
  ];
  /** Any 8 characters of the seed in a row. */
  const leaks = (text: string) => Array.from({ length: SEED.length - 7 }, (_, i) => SEED.slice(i, i + 8)).filter((w) => text.includes(w));

  for (const [what, text] of variants) {
    it(`${what}: no output quotes it (append, --json, doctor, doctor --json)`, async () => {
      const key = join(p.dir, 'keys', 'harness.key');
      rmSync(key);
      writeFileSync(key, text, { mode: 0o600 });
      chmodSync(key, 0o600);
      for (const args of [appendArgs('k1'), [...appendArgs('k2'), '--json'], ['doctor'], ['doctor', '--json']]) {
        const r = await ledger(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).not.toBe(0);
        expect(leaks(r.stdout + r.stderr), `${args.join(' ')}: ${r.stdout}${r.stderr}`).toEqual([]);
      }
    });
  }
});
