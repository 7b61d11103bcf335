// The flush helper thread (src/store/sync-thread.ts) and the one place that uses it, the durable
// append's records flush overlapping HEAD's staging. What must hold: a flush that failed on the
// helper fails the append (and is never mistaken for success), HEAD is renamed only after the
// records flush returned, and any FileOps that is not the real disk sees the plain sequence.
import { closeSync, existsSync, openSync, readFileSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { fdatasyncWhile, realFileOps, type FileOps } from '../../src/store/fsops.js';
import { fdatasyncOnHelper, useSyncThread } from '../../src/store/sync-thread.js';
import { fixedSigner } from '../helpers/fixed-keys.js';
import { scratch, snapshot } from '../helpers/cli.js';

const draft = (n: number): Draft =>
  ({ kind: 'handoff', agent: 'flush', logical_operation_id: 'op', execution_id: `exec-${n}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) as Draft;

let s: ReturnType<typeof scratch>;
let file: string;
beforeAll(() => {
  s = scratch('ledger-flush-');
  file = join(s.dir, 'data');
});
afterAll(() => s.cleanup());

/** An fd whose fdatasync fails with EINVAL (a character device cannot be synced). */
const unsyncable = () => openSync('/dev/null', 'r+');

describe('the flush helper thread', () => {
  it('is not used at a process\'s first call (a one-shot CLI never starts a thread), then is once it is up', async () => {
    const fd = openSync(file, 'w');
    try {
      let ran = 0;
      expect(fdatasyncOnHelper(fd, () => ran++)).toBe(false);
      expect(ran).toBe(0); // false means nothing was done: the caller flushes in sequence
      let used = false;
      for (let i = 0; i < 500 && !used; i++) {
        writeSync(fd, `line ${i}\n`);
        used = fdatasyncOnHelper(fd, () => ran++);
        if (!used) await new Promise((r) => setTimeout(r, 10));
      }
      expect(used).toBe(true);
      expect(ran).toBe(1);
      // Once up it serves every call, each one answered in turn.
      for (let i = 0; i < 50; i++) expect(fdatasyncOnHelper(fd, () => ran++)).toBe(true);
      expect(ran).toBe(51);
    } finally {
      closeSync(fd);
    }
  });

  it('throws a flush that failed on the helper as that errno, after `meanwhile` ran', () => {
    const fd = unsyncable();
    try {
      let ran = false;
      let err: unknown = null;
      try {
        fdatasyncOnHelper(fd, () => (ran = true));
      } catch (e) {
        err = e;
      }
      expect(ran).toBe(true);
      expect(err).toMatchObject({ code: 'EINVAL', syscall: 'fdatasync' });
      // The helper is still usable after a failed flush.
      const ok = openSync(file, 'r+');
      try {
        expect(fdatasyncOnHelper(ok, () => {})).toBe(true);
      } finally {
        closeSync(ok);
      }
    } finally {
      closeSync(fd);
    }
  });

  it('prefers the flush\'s error to `meanwhile`\'s, and throws `meanwhile`\'s when the flush succeeded', () => {
    const bad = unsyncable();
    const ok = openSync(file, 'r+');
    try {
      expect(() =>
        fdatasyncOnHelper(bad, () => {
          throw new Error('staging failed');
        }),
      ).toThrow(expect.objectContaining({ code: 'EINVAL' }));
      expect(() =>
        fdatasyncOnHelper(ok, () => {
          throw new Error('staging failed');
        }),
      ).toThrow('staging failed');
    } finally {
      closeSync(bad);
      closeSync(ok);
    }
  });

  it('is not used while the process has turned it off (the CLI does)', () => {
    const fd = openSync(file, 'r+');
    try {
      useSyncThread(false);
      let ran = false;
      expect(fdatasyncOnHelper(fd, () => (ran = true))).toBe(false);
      expect(ran).toBe(false);
    } finally {
      useSyncThread(true);
      closeSync(fd);
    }
  });
});

describe('fdatasyncWhile', () => {
  it('gives any FileOps but the real disk\'s the plain sequence: the flush, then `meanwhile`', () => {
    const calls: string[] = [];
    const ops = { ...realFileOps, fdatasync: () => void calls.push('fdatasync') } as FileOps;
    fdatasyncWhile(ops, 99, () => void calls.push('meanwhile'));
    expect(calls).toEqual(['fdatasync', 'meanwhile']);
  });

  it('does not run `meanwhile` when the plain flush fails', () => {
    const ops = {
      ...realFileOps,
      fdatasync: () => {
        throw Object.assign(new Error('EIO'), { code: 'EIO' });
      },
    } as FileOps;
    let ran = false;
    expect(() => fdatasyncWhile(ops, 99, () => (ran = true))).toThrow('EIO');
    expect(ran).toBe(false);
  });
});

describe('a durable append whose records flush fails on the helper thread', () => {
  it('is refused with OP_IO, leaves records.jsonl and HEAD byte-identical and no temp file behind', () => {
    const dir = join(s.dir, 'ledger');
    const { ledger } = Ledger.init({ dir, key: fixedSigner(), agent: 'flush' });
    for (let i = 0; i < 5; i++) ledger.append(draft(i)); // the helper is up (first test), and used
    // The real disk, except that the records file is opened for writing as /dev/null: the write
    // lands nowhere and the helper's fdatasync fails with EINVAL while HEAD is being staged.
    const opened: string[] = [];
    const ops: FileOps = {
      ...realFileOps,
      open: (p, flags, mode) => {
        opened.push(p);
        return p.endsWith('records.jsonl') && flags === 'r+' ? unsyncable() : realFileOps.open(p, flags, mode);
      },
      // The real disk's overlap, on the helper thread (which the first test started).
      fdatasyncWhile: (fd, meanwhile) => {
        if (!fdatasyncOnHelper(fd, meanwhile)) throw new Error('the helper thread is not up');
      },
    };
    const before = snapshot(dir);
    let err: unknown = null;
    try {
      Ledger.open({ dir, key: fixedSigner(), ops }).append(draft(99));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('OP_IO');
    expect((err as LedgerError).message).toMatch(/EINVAL/);
    // It took the overlapped path: HEAD's temp file was staged while the flush ran (in sequence,
    // the failed flush would have come first), and then removed.
    expect(opened.some((p) => /\.HEAD\.\d+\.tmp$/.test(p))).toBe(true);
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp') || n === 'lock')).toEqual([]);
    // The ledger goes on as before.
    expect(ledger.append(draft(6)).records[0].seq).toBe(6);
    expect(existsSync(join(dir, 'HEAD'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'HEAD'), 'utf8')).seq).toBe(6);
  });
});
