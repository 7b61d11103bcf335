// The records' data sync on a second thread (src/store/sync-worker.ts): it must never let HEAD be
// renamed before the records are durable, must report a failed sync as a failed append (the
// lines cut back, HEAD and the directory as they were), and must stay out of the way of a seam
// that replaces fdatasync (the fault models).
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { backgroundDataSync, realFileOps, type FileOps } from '../../src/store/fsops.js';
import { startDataSync, syncThreadReady } from '../../src/store/sync-worker.js';
import { fixedSigner } from '../helpers/fixed-keys.js';
import { scratch } from '../helpers/cli.js';

const signer = fixedSigner();
const draft = (n: number): Draft =>
  ({ kind: 'handoff', agent: 'sync', logical_operation_id: 'op', execution_id: `exec-${n}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) as Draft;

let s: ReturnType<typeof scratch>;
let dir: string;
beforeEach(() => {
  s = scratch('ledger-sync-');
  dir = join(s.dir, '.ledger');
  Ledger.init({ dir, key: signer, agent: 'harness' });
});
afterEach(() => s.cleanup());

/** Starts the helper thread (it starts at the second call) and waits until it takes requests. */
async function helperRunning(): Promise<void> {
  const fd = openSync(join(dir, 'records.jsonl'), 'r');
  try {
    for (let i = 0; i < 500 && !syncThreadReady(); i++) {
      startDataSync(fd)();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(syncThreadReady()).toBe(true);
  } finally {
    closeSync(fd);
  }
}

describe('the sync thread', () => {
  it('reports the error of the fdatasync it ran, by its code', async () => {
    await helperRunning();
    const fd = openSync(join(dir, 'records.jsonl'), 'r');
    closeSync(fd); // now a closed descriptor: fdatasync fails with EBADF
    const wait = startDataSync(fd);
    expect(wait).toThrow(expect.objectContaining({ code: 'EBADF', syscall: 'fdatasync' }));
    // and it takes the next request as usual
    const ok = openSync(join(dir, 'records.jsonl'), 'r');
    try {
      expect(() => startDataSync(ok)()).not.toThrow();
    } finally {
      closeSync(ok);
    }
  });

  it('is not used when the seam replaces fdatasync (a fault model sees every sync)', () => {
    expect(backgroundDataSync(realFileOps)).toBe(startDataSync);
    expect(backgroundDataSync({ ...realFileOps })).toBe(startDataSync);
    expect(backgroundDataSync({ ...realFileOps, fdatasync: (fd) => realFileOps.fdatasync(fd) })).toBeNull();
    const { fdatasyncStart: _, ...without } = realFileOps;
    expect(backgroundDataSync(without as FileOps)).toBeNull();
  });
});

describe('a durable append with the sync on another thread', () => {
  it('renames HEAD only after the records are synced, and fsyncs the directory after that', async () => {
    await helperRunning();
    const events: string[] = [];
    const ops: FileOps = {
      ...realFileOps,
      fdatasyncStart: (fd) => {
        events.push('sync-start');
        const wait = startDataSync(fd);
        return () => {
          wait();
          events.push('synced');
        };
      },
      fsync: (fd) => {
        events.push('fsync');
        realFileOps.fsync(fd);
      },
      rename: (a, b) => {
        events.push('rename');
        realFileOps.rename(a, b);
      },
    };
    const ledger = Ledger.open({ dir, key: signer, ops });
    for (let i = 0; i < 3; i++) {
      events.length = 0;
      const res = ledger.append(draft(i));
      // HEAD's temp file is fsynced while the records sync runs; the rename waits for both.
      expect(events).toEqual(['sync-start', 'fsync', 'synced', 'rename', 'fsync']);
      expect(ledger.head()).toEqual(res.head);
    }
    expect([...Ledger.open({ dir }).records()].map((r) => r.seq)).toEqual([0, 1, 2, 3]);
  });

  it('fails closed when the sync fails: nothing published, the lines cut back, no temp file left', () => {
    const head = readFileSync(join(dir, 'HEAD'));
    const records = readFileSync(join(dir, 'records.jsonl'));
    const ops: FileOps = {
      ...realFileOps,
      fdatasyncStart: () => () => {
        throw Object.assign(new Error('EIO: simulated'), { code: 'EIO', syscall: 'fdatasync' });
      },
    };
    let err: unknown;
    try {
      Ledger.open({ dir, key: signer, ops }).append(draft(1));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('OP_IO');
    expect(readFileSync(join(dir, 'HEAD')).equals(head)).toBe(true);
    expect(readFileSync(join(dir, 'records.jsonl')).equals(records)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // the next append, with the plain seam, goes through
    expect(Ledger.open({ dir, key: signer }).append(draft(1)).records[0].seq).toBe(1);
  });
});
