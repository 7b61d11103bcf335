// audit/lines.ts: the chunked line reader, the fast canonical check and the fast record id, each
// held to the plain definitions of SPEC 4 (canonicalJson, recordId).
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCanonicalText, lineRecordId, readLines, type ReadEnd, type RawLine } from '../../audit/lines.js';
import { canonicalJson, canonicalLine, recordId } from '../../src/canonical.js';
import { MAX_LINE_BYTES } from '../../src/record.js';
import { buildLedger, parseLine, payloadFor } from '../helpers/gen-ledger.js';
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

// JSON values of the shapes records have, with keys that JS objects reorder (integer-like) and
// strings that need escapes.
const keyArb = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('0', '1', '10', '9', 'sig', '__proto__', 'é', '\u2028'));
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
})).value;

/** Writes the first a-z inside a JSON string as a \u00XX escape (same content, other bytes). */
function escapeFirstLetterInString(text: string): string {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString && c === '\\') i++;
    else if (c === '"') inString = !inString;
    else if (inString && c >= 'a' && c <= 'z') return text.slice(0, i) + '\\u00' + c.charCodeAt(0).toString(16) + text.slice(i + 1);
  }
  return text;
}

/** The definition: is `text` exactly canonicalJson(JSON.parse(text))? */
function canonicalByDefinition(text: string): boolean {
  try {
    return canonicalJson(JSON.parse(text)) === text;
  } catch {
    return false;
  }
}

describe('isCanonicalText agrees with canonicalJson', () => {
  it('on canonical texts of random values (always true)', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        let text: string;
        try {
          text = canonicalJson(v);
        } catch {
          return; // a lone surrogate: no canonical form to test
        }
        expect(isCanonicalText(JSON.parse(text), text)).toBe(true);
      }),
      { numRuns: runs(500, 50_000) },
    );
  }, SOAK_TIMEOUT);

  it('on other encodings of random values (JSON.stringify, spaces, escapes)', () => {
    fc.assert(
      fc.property(jsonArb, fc.constantFrom(0, 1, 2), (v, how) => {
        let text = JSON.stringify(v);
        if (how === 1) text = JSON.stringify(v, null, 1);
        if (how === 2) text = escapeFirstLetterInString(text);
        expect(isCanonicalText(JSON.parse(text), text)).toBe(canonicalByDefinition(text));
      }),
      { numRuns: runs(500, 50_000) },
    );
  }, SOAK_TIMEOUT);

  it('on the hard cases named one by one', () => {
    for (const text of ['{"10":1,"9":2}', '{"9":2,"10":1}', '{"a":1.0}', '{"a":1e2}', '{"a":-0}', '{"a":9007199254740993}', '{"a":"\\ud800"}', '{"\\udc00":1}', '{"a":"\\u00e9"}', '{"a":"é"}', '{"b":1,"a":2}', '{"a":1,"a":1}', '"\\/"', '[1,2]', '{"a":"\\u2028"}', '{"a":"\u2028"}']) {
      expect(isCanonicalText(JSON.parse(text), text), text).toBe(canonicalByDefinition(text));
    }
  });
});

describe('lineRecordId agrees with recordId', () => {
  it('on every kind of generated record', () => {
    const led = buildLedger({ count: 40, kinds: ['handoff', 'checkpoint', 'start', 'finish', 'intent', 'revoke', 'consume'] });
    led.lines.forEach((line, i) => {
      expect(lineRecordId(Buffer.from(line.slice(0, -1)), parseLine(line) as never), `seq ${i}`).toBe(led.ids[i]);
    });
  });

  it('when an evidence entry is named "sig" or a string holds the sig member text', () => {
    const tricky = buildLedger({
      count: 4,
      kinds: ['handoff'],
      edit: (r, seq) => (seq === 0 ? r : { ...r, evidence: { sig: { digest: 'sha256:' + 'a'.repeat(64), source: '"sig":{"alg":"ed25519"}' } }, note: ',"sig":' }),
    });
    tricky.lines.forEach((line, i) => expect(lineRecordId(Buffer.from(line.slice(0, -1)), parseLine(line) as never)).toBe(tricky.ids[i]));
  });

  it('on random payload values around a valid envelope', () => {
    fc.assert(
      fc.property(fc.dictionary(keyArb, jsonArb, { maxKeys: 4 }), (extra) => {
        const base = { ...payloadFor('intent', 3, '2026-11-29T12:00:00.000Z'), v: 1, seq: 3, prev_tail_hash: null, ts: '2026-11-29T12:00:00.000Z', kind: 'intent', agent: 'a' };
        const record = { ...extra, ...base, sig: { alg: 'ed25519', key: 'A'.repeat(43), value: 'B'.repeat(86) } };
        let line: string;
        try {
          line = canonicalLine(record);
        } catch {
          return;
        }
        expect(lineRecordId(Buffer.from(line.slice(0, -1)), JSON.parse(line))).toBe(recordId(JSON.parse(line)));
      }),
      { numRuns: runs(300, 30_000) },
    );
  }, SOAK_TIMEOUT);
});
