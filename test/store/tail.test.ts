// The one check that HEAD's tail is the last line (store/read.ts assertTailIsLastLine), at each
// place that relies on it: reading, appending, recovering. Each refuses before it shows, writes or
// moves anything.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFileOps } from '../../src/fs/ops.js';
import type { Draft } from '../../src/record.js';
import { appendDrafts, recoverLedger } from '../../src/store/append.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { assertTailIsLastLine, readRecords } from '../../src/store/read.js';
import { buildLedger, resignHead, serializeLedger, signerFor, writeLedgerFiles, type BuiltLedger } from '../helpers/gen-ledger.js';
import { scratch, snapshot } from '../helpers/cli.js';

let s: { dir: string; cleanup: () => void };
let dir: string;
let led: BuiltLedger;
beforeEach(() => {
  s = scratch('store-tail-');
  dir = join(s.dir, '.ledger');
  led = buildLedger({ count: 5 });
  writeLedgerFiles(dir, serializeLedger(led));
});
afterEach(() => s.cleanup());

const harness = signerFor('harness');
const paths = () => ledgerPaths(dir);
const draft = { kind: 'intent', agent: 'agent-1', logical_operation_id: 'op', execution_id: 'e', action: 'a' } as Draft;
/** HEAD re-signed by the harness key with some of its members changed. */
const rewriteHead = (change: Record<string, unknown>) => writeFileSync(join(dir, 'HEAD'), resignHead({ ...led.head, ...change }, harness).line);
const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
};

describe('when HEAD\'s tail is the last line', () => {
  it('returns that record, its id and where its line starts', () => {
    const tail = assertTailIsLastLine(realFileOps, paths(), readHead(realFileOps, paths())!);
    expect(tail).toMatchObject({ seq: 4, id: led.ids[4], offset: led.offsets[4] });
    expect(tail.record.seq).toBe(4);
  });
});

describe.each([
  ['HEAD names another record as its tail', () => ({ tail: led.ids[3] }), /HEAD says the tail is seq 4 sha256:\w+, but the last published line is seq 4 sha256:\w+/],
  ['HEAD\'s size ends at an earlier line', () => ({ size: led.offsets[4] }), /HEAD says the tail is seq 4 sha256:\w+, but the last published line is seq 3 sha256:\w+/],
])('when %s', (_name, change, message) => {
  beforeEach(() => rewriteHead(change()));

  it('the check refuses with OP_CORRUPT', () => {
    const e = errorOf(() => assertTailIsLastLine(realFileOps, paths(), readHead(realFileOps, paths())!));
    expect(e.code).toBe('OP_CORRUPT');
    expect(e.message).toMatch(message);
  });

  it('reading refuses before it yields a single record', () => {
    const seen: number[] = [];
    const e = errorOf(() => {
      for (const at of readRecords(paths(), readHead(realFileOps, paths())!)) seen.push(at.seq);
    });
    expect(e.code).toBe('OP_CORRUPT');
    expect(seen).toEqual([]);
  });

  it('an append refuses and changes nothing', () => {
    const before = snapshot(dir);
    const e = errorOf(() => appendDrafts({ dir }, harness, [draft]));
    expect(e.code).toBe('OP_CORRUPT');
    expect(e.message).toMatch(message);
    expect(snapshot(dir)).toEqual(before);
  });

  it('recover refuses, saying so, and moves nothing', () => {
    appendFileSync(join(dir, 'records.jsonl'), 'unpublished bytes');
    const before = snapshot(dir);
    const e = errorOf(() => recoverLedger({ dir }, false, harness.publicKey));
    expect(e.code).toBe('OP_CORRUPT');
    expect(e.message).toMatch(/^refusing to recover: HEAD says the tail is/);
    expect(snapshot(dir)).toEqual(before);
  });
});
