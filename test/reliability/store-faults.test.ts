// Single faults on real files, one per store fix of issue 6, each through a FileOps that wraps
// the real one and fails exactly one kind of call. They pin the behaviour the fuzz
// (torn-writes.test.ts) found wrong, plus one found by reading the code (init over a HEAD that
// cannot be stat'ed).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/canonical.js';
import { LedgerError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { FIXED_PUBLIC_KEY, fixedSigner } from '../helpers/fixed-keys.js';
import { scratch, snapshot } from '../helpers/cli.js';
import { checkLedgerBytes } from './helpers/check-bytes.js';
import { errno } from './helpers/sim-disk.js';

const signer = fixedSigner();
const draft = (n: number): Draft =>
  ({ kind: 'handoff', agent: 'faults', logical_operation_id: 'op', execution_id: `exec-${n}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) as Draft;

let s: ReturnType<typeof scratch>;
let dir: string;
beforeEach(() => {
  s = scratch('ledger-faults-');
  dir = join(s.dir, '.ledger');
  Ledger.init({ dir, key: signer, agent: 'harness' });
});
afterEach(() => s.cleanup());

/** The real FileOps with some calls replaced. */
const withFaults = (over: Partial<FileOps>): FileOps => ({ ...realFileOps, ...over });

/** The same, with the path each descriptor was opened by, for calls that take only a descriptor. */
function withFaultsByPath(over: (pathOf: ReadonlyMap<number, string>) => Partial<FileOps>): FileOps {
  const paths = new Map<number, string>();
  const open: FileOps['open'] = (p, flags, mode) => {
    const fd = realFileOps.open(p, flags, mode);
    paths.set(fd, p);
    return fd;
  };
  return withFaults({ open, ...over(paths) });
}

function codeOf(f: () => unknown): LedgerError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LedgerError);
    return e as LedgerError;
  }
  throw new Error('expected a LedgerError, nothing was thrown');
}

describe('when init finds a HEAD it cannot stat (EIO), which exists() reports as absent', () => {
  it('refuses with exit 3 and leaves the published ledger alone (it used to quarantine it and write a new genesis)', () => {
    const before = snapshot(dir);
    const head = join(dir, 'HEAD');
    const ops = withFaults({
      exists: (p) => (p === head ? false : realFileOps.exists(p)),
      size: (p) => {
        if (p === head) throw errno('EIO', 'stat', p);
        return realFileOps.size(p);
      },
    });
    const e = codeOf(() => Ledger.init({ dir, key: signer, agent: 'harness', ops }));
    expect(e.exitCode).toBe(3);
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(join(dir, 'quarantine'))).toBe(false);
  });
});

describe('when writing the lock fails (ENOSPC)', () => {
  it('refuses with a coded exit 3 (not a raw errno) and leaves no lock behind', () => {
    const before = snapshot(dir);
    const lockFds = new Set<number>();
    const ops = withFaults({
      open: (p, flags, mode) => {
        const fd = realFileOps.open(p, flags, mode);
        if (p.endsWith('/lock')) lockFds.add(fd);
        return fd;
      },
      write: (fd, data, pos) => {
        if (lockFds.has(fd)) throw errno('ENOSPC', 'write');
        return realFileOps.write(fd, data, pos);
      },
    });
    const e = codeOf(() => Ledger.open({ dir, key: signer, ops }).append(draft(1)));
    expect(e.code).toBe('OP_IO');
    expect(existsSync(join(dir, 'lock'))).toBe(false);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('when the lock cannot be removed after an append (EACCES)', () => {
  it('still reports the published append, and the same process takes its own leftover lock over at once', () => {
    let failUnlink = true;
    const ops = withFaults({
      unlink: (p) => {
        if (p.endsWith('/lock') && failUnlink) {
          failUnlink = false;
          throw errno('EACCES', 'unlink', p);
        }
        realFileOps.unlink(p);
      },
    });
    const ledger = Ledger.open({ dir, key: signer, ops, waitMs: 200 });
    const first = ledger.append(draft(1));
    expect(first.records[0].seq).toBe(1);
    expect(existsSync(join(dir, 'lock')), 'the lock fails closed: it stays').toBe(true);
    // Without the takeover this would wait the full 200 ms and fail with OP_LOCK_TIMEOUT.
    const second = ledger.append(draft(2));
    expect(second.records[0].seq).toBe(2);
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('never takes over a lock with this pid that it did not orphan (another worker thread holds it)', () => {
    writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'another-thread', since: new Date().toISOString() }));
    const before = snapshot(dir);
    const e = codeOf(() => Ledger.open({ dir, key: signer, waitMs: 50 }).append(draft(1)));
    expect(e.code).toBe('OP_LOCK_TIMEOUT');
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('when the directory fsync after the HEAD rename fails and HEAD cannot be read back (EIO)', () => {
  it('says the append may have reached HEAD and keeps its lines (never cuts bytes a HEAD may publish)', () => {
    const headPath = join(dir, 'HEAD');
    const dirFds = new Set<number>();
    let broken = false;
    const ops = withFaults({
      open: (p, flags, mode) => {
        const fd = realFileOps.open(p, flags, mode);
        if (p === dir) dirFds.add(fd);
        return fd;
      },
      fsync: (fd) => {
        if (dirFds.has(fd)) {
          broken = true;
          throw errno('EIO', 'fsync');
        }
        realFileOps.fsync(fd);
      },
      readFile: (p) => {
        if (broken && p === headPath) throw errno('EIO', 'read', p);
        return realFileOps.readFile(p);
      },
    });
    const e = codeOf(() => Ledger.open({ dir, key: signer, ops }).append(draft(1)));
    expect(e.code).toBe('OP_IO');
    expect(e.message).toMatch(/may have reached HEAD but its durability is unknown/);
    // The rename did happen: the new HEAD publishes the new line, and it is still there.
    const checked = checkLedgerBytes(readFileSync(join(dir, 'records.jsonl')), readFileSync(headPath), FIXED_PUBLIC_KEY);
    expect(checked.head.seq).toBe(1);
    expect(checked.records[1]).toMatchObject({ execution_id: 'exec-1' });
  });
});

describe('when a close fails after the append is published (EIO)', () => {
  it('reports the append, not the close', () => {
    const records = join(dir, 'records.jsonl');
    const recordFds = new Set<number>();
    const ops = withFaults({
      open: (p, flags, mode) => {
        const fd = realFileOps.open(p, flags, mode);
        if (p === records && flags === 'r+') recordFds.add(fd);
        return fd;
      },
      close: (fd) => {
        realFileOps.close(fd);
        if (recordFds.has(fd)) throw errno('EIO', 'close');
      },
    });
    const res = Ledger.open({ dir, key: signer, ops }).append(draft(1));
    expect(res.records[0].seq).toBe(1);
    expect(readdirSync(dir)).not.toContain('lock');
  });
});

describe('when init makes the ledger directory', () => {
  it('fsyncs the parent of every directory it creates, so a power cut cannot take the ledger back', () => {
    const synced: string[] = [];
    const where = join(s.dir, 'a', 'b', '.ledger');
    const dirFds = new Map<number, string>();
    const ops = withFaults({
      open: (p, flags, mode) => {
        const fd = realFileOps.open(p, flags, mode);
        if (flags === 'r') dirFds.set(fd, p);
        return fd;
      },
      fsync: (fd) => {
        const p = dirFds.get(fd);
        if (p) synced.push(p);
        realFileOps.fsync(fd);
      },
    });
    Ledger.init({ dir: where, key: signer, agent: 'harness', ops });
    expect(synced).toEqual(expect.arrayContaining([s.dir, join(s.dir, 'a'), join(s.dir, 'a', 'b'), where]));
  });
});

describe('when the disk fills up while HEAD\'s temp file is written (ENOSPC)', () => {
  it('refuses with exit 3, cuts the new lines back off, and leaves no temp file', () => {
    const before = snapshot(dir);
    const ops = withFaults({
      write: (fd, data, pos) => {
        if (pos === 0 && Buffer.from(data).subarray(0, 11).toString() === '{"genesis":') throw errno('ENOSPC', 'write');
        return realFileOps.write(fd, data, pos);
      },
    });
    const e = codeOf(() => Ledger.open({ dir, key: signer, ops }).append(draft(1)));
    expect(e.code).toBe('OP_IO');
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp') || n === 'lock')).toEqual([]);
  });
});

describe('when a power cut brings back a lock from before the reboot, naming a pid that is alive now', () => {
  const boot = (() => {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      return null;
    }
  })();
  const lockOf = (b: string) => JSON.stringify({ pid: 1, host: hostname(), nonce: 'before-the-reboot', since: '2026-01-01T00:00:00.000Z', boot: b });

  it.skipIf(boot === null)('takes it over (its holder died with the last boot), with no manual cleanup', () => {
    writeFileSync(join(dir, 'lock'), lockOf('00000000-0000-0000-0000-000000000000'));
    const res = Ledger.open({ dir, key: signer, waitMs: 200 }).append(draft(1));
    expect(res.records[0].seq).toBe(1);
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it.skipIf(boot === null)('but waits for, then refuses, the same lock from this boot (pid 1 lives)', () => {
    writeFileSync(join(dir, 'lock'), lockOf(boot!));
    const before = snapshot(dir);
    const e = codeOf(() => Ledger.open({ dir, key: signer, waitMs: 50 }).append(draft(1)));
    expect(e.code).toBe('OP_LOCK_TIMEOUT');
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('when an earlier recovery left its quarantine file behind (it died before the directory fsync)', () => {
  const records = () => join(dir, 'records.jsonl');
  const tail = Buffer.from('{"v":1,"seq":1,"torn');
  const name = () => {
    const published = readFileSync(records()).length;
    return `at-${published}-${sha256Hex(tail).slice(0, 16)}.bin`;
  };

  it('makes the file and its entry durable before it cuts anything', () => {
    const file = name();
    writeFileSync(records(), tail, { flag: 'a' });
    mkdirSync(join(dir, 'quarantine'));
    writeFileSync(join(dir, 'quarantine', file), tail);
    const synced: string[] = [];
    const ops = withFaultsByPath((paths) => ({
      fsync: (fd) => {
        synced.push(paths.get(fd)!);
        realFileOps.fsync(fd);
      },
    }));
    const report = Ledger.open({ dir, key: signer, ops }).recover();
    expect(report.moved).toBe(true);
    expect(synced).toEqual(expect.arrayContaining([join(dir, 'quarantine', file), join(dir, 'quarantine')]));
    expect(readFileSync(join(dir, 'quarantine', file))).toEqual(tail);
  });

  it('refuses (exit 3) and cuts nothing when that file holds other bytes', () => {
    const file = name();
    writeFileSync(records(), tail, { flag: 'a' });
    mkdirSync(join(dir, 'quarantine'));
    writeFileSync(join(dir, 'quarantine', file), 'something else entirely');
    const before = snapshot(dir);
    const e = codeOf(() => Ledger.open({ dir, key: signer }).recover());
    expect(e.code).toBe('OP_CORRUPT');
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('when recovery moves unpublished bytes into a new quarantine file', () => {
  it('creates it by the durable recipe (linked from an fsynced temp file, never renamed over a name) before it cuts records.jsonl', () => {
    const records = join(dir, 'records.jsonl');
    const tail = Buffer.from('{"v":1,"seq":1,"torn');
    writeFileSync(records, tail, { flag: 'a' });
    const calls: string[] = [];
    const ops = withFaultsByPath((paths) => ({
      fsync: (fd) => {
        calls.push(`fsync ${paths.get(fd)}`);
        realFileOps.fsync(fd);
      },
      link: (a, b) => {
        calls.push(`link ${b}`);
        realFileOps.link(a, b);
      },
      rename: (a, b) => {
        calls.push(`rename ${b}`);
        realFileOps.rename(a, b);
      },
      ftruncate: (fd, n) => {
        calls.push(`ftruncate ${paths.get(fd)}`);
        realFileOps.ftruncate(fd, n);
      },
    }));
    const report = Ledger.open({ dir, key: signer, ops }).recover();
    expect(report.moved).toBe(true);
    const file = report.file!;
    expect(readFileSync(file)).toEqual(tail);
    const q = join(dir, 'quarantine');
    // The quarantine directory's own entry, the temp file's bytes, the link, the directory, then the cut.
    expect(calls.filter((c) => !c.startsWith('fsync ') || c === `fsync ${dir}` || c === `fsync ${q}` || /\.tmp$/.test(c))).toEqual([
      `fsync ${dir}`,
      expect.stringMatching(new RegExp(`^fsync ${q}/\\..*\\.tmp$`)),
      `link ${file}`,
      `fsync ${q}`,
      `ftruncate ${records}`,
    ]);
    expect(readdirSync(q)).toEqual([file.slice(q.length + 1)]);
  });
});
