// src/record-line.ts: the one decoder of a stored record line. Every problem has one kind and
// one wording, whichever reader meets it; what the caller already knows (seq, link, id, a chain
// checked) narrows or shortens the check; and no other module of src/ decodes a record line.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalLine } from '../src/canonical.js';
import { LineProblem, canonicalValue, decodeRecordLine, lineError, readRecordLine } from '../src/record-line.js';
import { buildLedger } from './helpers/gen-ledger.js';
import { ROOT } from './helpers/cli.js';

const led = buildLedger({ count: 4 });
const bytesOf = (seq: number) => Buffer.from(led.lines[seq].slice(0, -1), 'utf8');

function problem(bytes: Uint8Array, expect = {}): LineProblem {
  const got = decodeRecordLine(bytes, expect);
  if (!(got instanceof LineProblem)) throw new Error('expected a problem');
  return got;
}

describe('decodeRecordLine', () => {
  it('gives every record of a valid ledger with its id, at its seq, linked to the one before', () => {
    for (let seq = 0; seq < led.lines.length; seq++) {
      const got = decodeRecordLine(bytesOf(seq), { seq, prev: seq === 0 ? null : led.ids[seq - 1], id: led.ids[seq], schema: true });
      expect(got).not.toBeInstanceOf(LineProblem);
      expect((got as { id: string }).id).toBe(led.ids[seq]);
      expect((got as { record: { seq: number } }).record.seq).toBe(seq);
    }
  });

  it('names each problem with one kind and one wording', () => {
    const line = bytesOf(2);
    const bad = Buffer.from(line);
    bad[bad.indexOf('"agent"') + 2] = 0xff;
    expect(problem(bad)).toMatchObject({ kind: 'utf8', why: 'is not UTF-8' });
    expect(problem(line.subarray(0, 20))).toMatchObject({ kind: 'json', why: 'is not JSON' });
    expect(problem(Buffer.from(' ' + line.toString()))).toMatchObject({ kind: 'canonical', why: 'is not a canonical record line' });
    expect(problem(Buffer.from('[1,2]'))).toMatchObject({ kind: 'canonical' });
    expect(problem(Buffer.from('{"seq":1}'))).toMatchObject({ kind: 'canonical' }); // no kind: not a record
    expect(problem(Buffer.from(canonicalLine({ kind: 'x', seq: 2 }).slice(0, -1)), { schema: true }).kind).toBe('schema');
    expect(problem(line, { seq: 3 })).toMatchObject({ kind: 'seq', why: 'has seq 2, expected 3' });
    expect(problem(line, { prev: led.ids[0] })).toMatchObject({ kind: 'link', why: `does not link to the record before it (its prev_tail_hash is not ${led.ids[0]})` });
    expect(problem(line, { id: led.ids[1] })).toMatchObject({ kind: 'id', why: `is not the record the chain names there (its id is ${led.ids[2]}, not ${led.ids[1]})` });
  });

  it('chained: parsed only (no UTF-8 or canonical check), the id computed only when asked', () => {
    const spaced = Buffer.from(' ' + bytesOf(1).toString());
    expect(decodeRecordLine(spaced, { chained: true, needId: false })).toMatchObject({ id: '', record: { seq: 1 } });
    expect(problem(spaced)).toMatchObject({ kind: 'canonical' });
    expect(problem(Buffer.from('{'), { chained: true }).kind).toBe('json');
    expect(problem(bytesOf(1), { chained: true, seq: 2 }).kind).toBe('seq');
  });

  it('property: any one byte changed is a problem, or a record whose canonical line is exactly those bytes', () => {
    fc.assert(fc.property(fc.nat(bytesOf(3).length - 1), fc.integer({ min: 0, max: 255 }), (at, byte) => {
      const b = Buffer.from(bytesOf(3));
      b[at] = byte;
      const got = decodeRecordLine(b, { seq: 3, prev: led.ids[2] });
      if (got instanceof LineProblem) return true;
      // Never lossy: what was decoded is what is stored (a changed signature keeps the id: SPEC 4).
      return Buffer.from(canonicalLine(got.record)).equals(Buffer.concat([b, Buffer.from('\n')]));
    }));
  });
});

describe('lineError and readRecordLine: where is the caller\'s, the wording the decoder\'s', () => {
  it('OP_CORRUPT naming the file, byte and seq', () => {
    const e = lineError(new LineProblem('utf8', 'is not UTF-8'), '/l/records.jsonl', 795, 2);
    expect(e.code).toBe('OP_CORRUPT');
    expect(e.message).toBe('/l/records.jsonl: the line at byte 795 (seq 2) is not UTF-8');
    expect(() => readRecordLine(bytesOf(1), 'r', 10, { seq: 0 })).toThrow('r: the line at byte 10 (seq 0) has seq 1, expected 0');
  });

  it('canonicalValue: what HEAD\'s readers share (UTF-8, JSON, canonical; no record shape asked)', () => {
    const head = Buffer.from(led.headLine.slice(0, -1));
    expect(canonicalValue(head)).toMatchObject({ value: { seq: 3 } });
    expect(canonicalValue(Buffer.from('{"b":1,"a":2}'))).toMatchObject({ kind: 'canonical' });
  });
});

describe('one decoder', () => {
  const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  // HEAD's readers compute HEAD's digest from its canonical line (record-line.ts canonicalValue first).
  const ALLOWED = ['src/canonical.ts', 'src/record-line.ts', 'src/store/head.ts', 'src/remote/fetch.ts'];

  it('no other module of src/ checks a line\'s UTF-8 or canonical form, or computes an id from a line', () => {
    const bad: string[] = [];
    for (const f of files(join(ROOT, 'src'))) {
      const rel = relative(ROOT, f);
      if (ALLOWED.includes(rel)) continue;
      const text = readFileSync(f, 'utf8');
      for (const name of ['isCanonicalText', 'idFromLine', 'isUtf8']) {
        if (new RegExp(`\\b${name}\\b`).test(text) && !(name === 'isUtf8' && rel.startsWith('src/causal/evidence/'))) bad.push(`${rel} uses ${name}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
