// audit/lines.ts: the auditor's own chunked line reader. (The canonical check and the record id
// from a line are src/canonical.ts's, tested in test/canonical.test.ts.)
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLines, type ReadEnd, type RawLine } from '../../audit/lines.js';
import { MAX_LINE_BYTES } from '../../src/record.js';
import { runs } from '../helpers/runs.js';

// `npm run soak` multiplies the runs; give those tests room beyond the 60 s default.
const SOAK_TIMEOUT = process.env.SOAK === '1' ? 60 * 60_000 : undefined;
import { freshDir } from './harness.js';

function readAll(bytes: Buffer, chunk: number, end = bytes.length, start = 0) {
  const path = join(freshDir(), 'f');
  writeFileSync(path, bytes);
  const fd = openSync(path, 'r');
  const done: ReadEnd = { consumed: 0, trailing: 0, short: false };
  const lines: (Omit<RawLine, 'bytes'> & { text: string })[] = [];
  try {
    for (const l of readLines(fd, start, end, 0, done, chunk)) lines.push({ pos: l.pos, offset: l.offset, length: l.length, oversize: l.oversize, text: l.bytes.toString() });
  } finally {
    closeSync(fd);
  }
  return { lines, done };
}

describe('readLines', () => {
  it('yields the same lines, offsets and end for any chunk size', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, '')), { maxLength: 30 }), fc.string({ maxLength: 10 }).map((s) => s.replace(/\n/g, '')), fc.integer({ min: 1, max: 64 }), (lines, tail, chunk) => {
        const bytes = Buffer.from(lines.map((l) => l + '\n').join('') + tail);
        const got = readAll(bytes, chunk);
        let offset = 0;
        const expected = lines.map((l, pos) => {
          const e = { pos, offset, length: Buffer.byteLength(l), oversize: false, text: l };
          offset += Buffer.byteLength(l) + 1;
          return e;
        });
        expect(got.lines).toEqual(expected);
        expect(got.done).toEqual({ consumed: offset, trailing: Buffer.byteLength(tail), short: false });
      }),
      { numRuns: runs(300, 20_000) },
    );
  }, SOAK_TIMEOUT);

  it('stops at `end` and reports a file shorter than it', () => {
    const bytes = Buffer.from('a\nbb\nccc\n');
    expect(readAll(bytes, 4, 5).lines.map((l) => l.text)).toEqual(['a', 'bb']);
    expect(readAll(bytes, 4, 6).done).toEqual({ consumed: 5, trailing: 1, short: false });
    expect(readAll(bytes, 4, 20).done.short).toBe(true);
    expect(readAll(bytes, 4, 9, 2).lines.map((l) => [l.text, l.offset])).toEqual([['bb', 2], ['ccc', 5]]);
  });

  it('reports a line over 1 MiB as oversize without holding it, and goes on', () => {
    const big = 'x'.repeat(MAX_LINE_BYTES); // with its newline: one byte over
    const ok = 'y'.repeat(MAX_LINE_BYTES - 1); // with its newline: exactly 1 MiB
    const { lines, done } = readAll(Buffer.from(`a\n${big}\n${ok}\nb\n`), 65536);
    expect(lines.map((l) => [l.pos, l.oversize, l.length])).toEqual([[0, false, 1], [1, true, MAX_LINE_BYTES], [2, false, MAX_LINE_BYTES - 1], [3, false, 1]]);
    expect(lines[1].text).toBe('');
    expect(done.trailing).toBe(0);
  });
});
