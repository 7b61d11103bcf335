// src/causal/index/segments.ts: segments that no longer match the ledger are dropped and the
// ledger indexed again, and the index is never believed about what a record says (verified.ts
// reads the bytes).
import { openSync, readdirSync, readFileSync, rmSync, writeSync, closeSync, truncateSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CausalView } from '../../../src/causal/view.js';
import { scanRows } from '../../../src/causal/index/rows.js';
import { HEADER_BYTES, decodeHeader, encodeSegment, tableBytes } from '../../../src/causal/index/segment-format.js';
import { realFileOps, type FileOps } from '../../../src/fs/ops.js';
import { Ledger } from '../../../src/ledger.js';
import { ledgerPaths } from '../../../src/store/paths.js';
import { buildLedger, serializeLedger, writeLedgerFiles } from '../../helpers/gen-ledger.js';
import { KINDS, scratchLedger } from './kit.js';

const t = scratchLedger();

describe('when the index does not match the ledger', () => {
  it('a truncated segment is dropped and rebuilt', () => {
    t.write(400);
    t.open().close();
    const seg = readdirSync(join(t.dir, 'index')).find((f) => f.endsWith('.seg'))!;
    truncateSync(join(t.dir, 'index', seg), 100);
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('a ledger replaced under it (another genesis) is indexed afresh', () => {
    t.write(400, 'first');
    t.open().close();
    rmSync(join(t.dir, 'records.jsonl'));
    t.write(300, 'second');
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('a segment whose last record changed is dropped', () => {
    t.write(400);
    t.open().close();
    // Another ledger with the same genesis but different later records (a fork).
    writeLedgerFiles(t.dir, serializeLedger(buildLedger({ count: 400, kinds: KINDS, edit: (u, seq) => (seq === 399 ? { ...u, agent: 'forked' } : u) })));
    const index = t.open();
    t.expectAgrees(index);
    index.close();
  });

  it('postings patched in place (every offset to line 0) do not verify: the segment is rebuilt and answers as a full scan', () => {
    t.write(400);
    t.open().close();
    const segPath = join(t.dir, 'index', readdirSync(join(t.dir, 'index')).find((f) => f.endsWith('.seg'))!);
    const buf = readFileSync(segPath);
    const h = decodeHeader(buf.subarray(0, HEADER_BYTES));
    const at = tableBytes(h) + (h.bucketCount + 1) * 4 + h.entryCount * 16;
    const fd = openSync(segPath, 'r+');
    for (let k = 0; k < h.postingCount; k++) writeSync(fd, Buffer.alloc(8), 0, 8, at + k * 12 + 4);
    closeSync(fd);
    expect(statSync(segPath).size).toBe(buf.length);
    const paths = t.paths();
    const view = CausalView.open(paths, Ledger.open({ dir: t.dir }).head(), { trust: null });
    expect(view.opRecords('op-3').length).toBeGreaterThan(0);
    expect(view.problems).toEqual([]);
    view.close();
    // The patched segment was replaced by one that verifies and agrees with a full scan.
    const again = t.open();
    t.expectAgrees(again);
    again.close();
  });

  it('a segment rewritten consistently with wrong offsets (digests recomputed) is still not believed about what a record says', () => {
    t.write(400);
    t.open().close();
    const name = readdirSync(join(t.dir, 'index')).find((f) => f.endsWith('.seg'))!;
    const paths = t.paths();
    const head = Ledger.open({ dir: t.dir }).head();
    // What only someone who writes our format can do: every posting at byte 0, digests valid.
    const rows = scanRows(realFileOps, paths, { fromSeq: 0, fromOffset: 0, endOffset: head.size, prevId: null, endId: head.tail });
    writeFileSync(join(t.dir, 'index', name), encodeSegment({ ...rows, offset: rows.offset.map(() => 0) }, head.genesis));
    const view = CausalView.open(paths, head, { trust: null });
    expect(view.opRecords('op-3')).toEqual([]);
    expect(view.problems.length).toBeGreaterThan(0);
    expect(view.problems[0].message).toMatch(/says seq 0|is not the genesis|record at seq/);
    view.close();
  });
});

describe('when a segment is written', () => {
  /** The real disk, with every open and rename under the index directory recorded. */
  function recording(fail?: 'ENOSPC') {
    const calls: string[] = [];
    const ops: FileOps = {
      ...realFileOps,
      open: (p, flags, mode) => {
        if (p.includes('/index/')) calls.push(`open ${flags} ${p.slice(p.lastIndexOf('/') + 1)}`);
        return realFileOps.open(p, flags, mode);
      },
      write: (fd, data, position) => {
        if (fail) throw Object.assign(new Error(`${fail}: no space left on device`), { code: fail });
        return realFileOps.write(fd, data, position);
      },
      rename: (a, b) => {
        calls.push(`rename ${a.slice(a.lastIndexOf('/') + 1)} ${b.slice(b.lastIndexOf('/') + 1)}`);
        realFileOps.rename(a, b);
      },
    };
    return { ops, calls };
  }

  it('goes through the durable recipe over the FileOps seam: a new temp file, then a rename', () => {
    t.write(400);
    const { ops, calls } = recording();
    const index = t.open({ ops });
    t.expectAgrees(index);
    index.close();
    const [create, rename] = [calls.find((c) => c.startsWith('open wx ')), calls.find((c) => c.startsWith('rename '))];
    expect(create).toMatch(/^open wx \.0000000000000-0000000000399\.seg\.[0-9a-f]+\.tmp$/);
    expect(rename).toBe(`rename ${create!.slice('open wx '.length)} 0000000000000-0000000000399.seg`);
    expect(readdirSync(join(t.dir, 'index'))).toEqual(['0000000000000-0000000000399.seg']);
  });

  it('that the disk refuses, the index still answers from records.jsonl and leaves no temp file', () => {
    t.write(400);
    const { ops } = recording('ENOSPC');
    const index = t.open({ ops });
    expect(index.stats()).toMatchObject({ segments: 0, tailRecords: 400 });
    t.expectAgrees(index);
    index.close();
    expect(readdirSync(join(t.dir, 'index'))).toEqual([]);
  });

  it('a temp file left by a crash is removed once it is old, and kept while it may be a write in progress', () => {
    t.write(10);
    t.open().close();
    const old = join(t.dir, 'index', '.0000000000000-0000000000399.seg.0123456789ab.tmp');
    const young = join(t.dir, 'index', '.0000000000000-0000000000127.seg.ba9876543210.tmp');
    const older = join(t.dir, 'index', '.tmp-123-abcd.seg'); // as segments were written before
    for (const p of [old, young, older]) writeFileSync(p, 'partial');
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    utimesSync(old, hourAgo, hourAgo);
    utimesSync(older, hourAgo, hourAgo);
    t.open().close();
    expect(readdirSync(join(t.dir, 'index')).sort()).toEqual(['.0000000000000-0000000000127.seg.ba9876543210.tmp']);
  });
});
