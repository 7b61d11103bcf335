// src/fs/lines.ts: the store's and the causal layer's one line reader, forward and backward,
// held to the plain split of the bytes, over a FileOps that may return short reads.
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lineEndingAt, linesForward } from '../../src/fs/lines.js';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { MAX_LINE_BYTES } from '../../src/record.js';
import { scratch } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';

/** A FileOps over bytes in memory that returns at most `most` bytes per read (only `read` is used). */
function memoryOps(bytes: Buffer, most = Infinity): FileOps {
  return {
    read: (_fd: number, buf: Uint8Array, position: number) => {
      const n = Math.max(0, Math.min(buf.length, most, bytes.length - position));
      bytes.copy(buf, 0, position, position + n);
      return n;
    },
  } as unknown as FileOps;
}

/** The lines as [text, offset], each decoded as it comes: a line's bytes live until the next. */
function forward(ops: FileOps, from: number, to: number, first?: number, fd = 0, path = 'records.jsonl'): (readonly [string, number])[] {
  const out: (readonly [string, number])[] = [];
  for (const l of linesForward(ops, fd, path, from, to, first)) out.push([l.bytes.toString(), l.offset]);
  return out;
}

/** The lines of `text` (each ending in "\n") with their offsets, by the plain definition. */
function split(lines: string[]): (readonly [string, number])[] {
  let offset = 0;
  return lines.map((l) => {
    const at = offset;
    offset += Buffer.byteLength(l) + 1;
    return [l, at] as const;
  });
}

const lineArb = fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/\n/g, ''));

describe('linesForward', () => {
  it('yields every line with its offset, for any first chunk and any short reads', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 50 }), (lines, first, most) => {
        const bytes = Buffer.from(lines.map((l) => l + '\n').join(''));
        expect(forward(memoryOps(bytes, most), 0, bytes.length, first)).toEqual(split(lines));
      }),
      { numRuns: runs(300, 20_000) },
    );
  });

  it('reads only [from, to): a range that starts at a later line stops at its end', () => {
    const bytes = Buffer.from('a\nbb\nccc\ndddd\n');
    expect(forward(memoryOps(bytes), 2, 9, 3)).toEqual([['bb', 2], ['ccc', 5]]);
    expect(forward(memoryOps(bytes), 5, 5)).toEqual([]);
  });

  describe('when the bytes are not whole lines', () => {
    const code = (f: () => unknown) => {
      try {
        f();
        return 'no error';
      } catch (e) {
        return `${(e as { code?: string }).code}: ${(e as Error).message}`;
      }
    };

    it('refuses a file shorter than the range', () => {
      expect(code(() => forward(memoryOps(Buffer.from('a\nbb\n')), 0, 9))).toMatch(/^OP_CORRUPT: records.jsonl ends at byte 5, before byte 9/);
    });

    it('refuses bytes after the last newline before the range ends (a line cut off)', () => {
      expect(code(() => forward(memoryOps(Buffer.from('a\nbb\nccc\n')), 0, 7, 2))).toMatch(/^OP_CORRUPT: records.jsonl does not end with a newline at byte 7/);
    });

    it('refuses a line over 1 MiB with its newline, and takes one of exactly 1 MiB', () => {
      const ok = Buffer.from('x'.repeat(MAX_LINE_BYTES - 1) + '\n');
      expect(forward(memoryOps(ok), 0, ok.length, 4096).map(([l, at]) => [l.length, at])).toEqual([[MAX_LINE_BYTES - 1, 0]]);
      const big = Buffer.from('a\n' + 'x'.repeat(MAX_LINE_BYTES) + '\n');
      expect(code(() => forward(memoryOps(big), 0, big.length, 4096))).toMatch(/^OP_CORRUPT: records.jsonl has a line over 1 MiB at byte 2/);
      // In one chunk as well as across chunks.
      expect(code(() => forward(memoryOps(big), 0, big.length, 4 << 20))).toMatch(/over 1 MiB at byte 2/);
    });
  });
});

describe('lineEndingAt', () => {
  it('finds every line from its end, for any lines and short reads', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 50 }), (lines, most) => {
        const bytes = Buffer.from(lines.map((l) => l + '\n').join(''));
        const ops = memoryOps(bytes, most);
        for (const [line, offset] of split(lines)) {
          const end = offset + Buffer.byteLength(line) + 1;
          const got = lineEndingAt(ops, 0, 'records.jsonl', end);
          expect([got.bytes.toString(), got.offset]).toEqual([line, offset]);
        }
      }),
      { numRuns: runs(300, 20_000) },
    );
  });

  it('reads back through growing chunks to a line start far before the end', () => {
    const long = 'y'.repeat(200_000);
    const bytes = Buffer.from(`a\n${long}\n`);
    expect(lineEndingAt(memoryOps(bytes), 0, 'f', bytes.length)).toMatchObject({ offset: 2 });
    expect(lineEndingAt(memoryOps(bytes), 0, 'f', bytes.length).bytes.toString()).toBe(long);
    const whole = Buffer.from('x'.repeat(MAX_LINE_BYTES - 1) + '\n'); // exactly 1 MiB, from byte 0
    expect(lineEndingAt(memoryOps(whole), 0, 'f', whole.length).bytes.length).toBe(MAX_LINE_BYTES - 1);
  });

  describe('when there is no whole line ending there', () => {
    const bytes = Buffer.from('a\nbb\n');
    it('refuses an end that is not just past a newline, or is 0', () => {
      expect(() => lineEndingAt(memoryOps(bytes), 0, 'f', 4)).toThrow(/f does not end a line at byte 4/);
      expect(() => lineEndingAt(memoryOps(bytes), 0, 'f', 0)).toThrow(expect.objectContaining({ code: 'OP_CORRUPT' }));
    });

    it('refuses a file shorter than the end', () => {
      expect(() => lineEndingAt(memoryOps(bytes), 0, 'f', 9)).toThrow(/f is shorter than 9 bytes/);
    });

    it('refuses a line over 1 MiB', () => {
      const big = Buffer.from('a\n' + 'x'.repeat(MAX_LINE_BYTES) + '\n');
      expect(() => lineEndingAt(memoryOps(big), 0, 'f', big.length)).toThrow(/f has a line over 1 MiB/);
    });
  });
});

describe('over the real disk', () => {
  let s: { dir: string; cleanup: () => void };
  beforeEach(() => {
    s = scratch('lines-');
  });
  afterEach(() => s.cleanup());

  it('reads the same lines forward and backward as in memory', () => {
    const path = join(s.dir, 'records.jsonl');
    const lines = ['{"a":1}', '', 'é☕', 'z'.repeat(5000)];
    const bytes = Buffer.from(lines.map((l) => l + '\n').join(''));
    writeFileSync(path, bytes);
    const fd = openSync(path, 'r');
    try {
      expect(forward(realFileOps, 0, bytes.length, 16, fd, path)).toEqual(split(lines));
      expect(lineEndingAt(realFileOps, fd, path, bytes.length).offset).toBe(split(lines)[3][1]);
    } finally {
      closeSync(fd);
    }
  });
});
