// src/store/state-log.ts: a per-user state file (a writer's mark, the chain memo) is a log of
// digested entries appended in place; the newest whole one is read, a torn one never is, and a
// file of the format before (one JSON object) still reads.
import { appendFileSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { LOG_LIMIT, appendStateLog, newestEntry, readStateLog, stateEntry } from '../../src/store/state-log.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { scratch } from '../helpers/cli.js';

let s: ReturnType<typeof scratch>;
beforeEach(() => {
  s = scratch('state-log-');
});
afterEach(() => s.cleanup());

describe('when a state log is read', () => {
  it('gives the newest entry whose digest matches, skipping a torn one after it', () => {
    const a = stateEntry('{"n":1}').toString();
    const b = stateEntry('{"n":2}').toString();
    expect(newestEntry(a + b)).toBe('{"n":2}');
    // A crash in the middle of the second append: the first entry is what holds.
    expect(newestEntry(a + b.slice(0, b.length - 4))).toBe('{"n":1}');
    // A torn append followed by a whole one (the next writer's): the whole one.
    expect(newestEntry(a + b.slice(0, 20) + stateEntry('{"n":3}').toString())).toBe('{"n":3}');
  });

  it('never gives an entry whose text does not match its digest', () => {
    const e = stateEntry('{"seq":5}').toString();
    expect(newestEntry(e.replace('"seq":5', '"seq":9'))).toBeNull();
    expect(newestEntry('')).toBeNull();
    expect(newestEntry('\n\n\n')).toBeNull();
    expect(newestEntry('junk')).toBeNull();
  });

  it('reads a file of the format before (one JSON object, replaced whole) as its one entry', () => {
    expect(newestEntry('{"v":1,"seq":3}\n')).toBe('{"v":1,"seq":3}');
    expect(newestEntry('{"v":1,"seq":3}\n' + stateEntry('{"v":1,"seq":4}').toString())).toBe('{"v":1,"seq":4}');
    // The old format is believed only as the first line: a bare object later is no entry.
    expect(newestEntry(stateEntry('{"a":1}').toString() + '{"a":2}\n')).toBe('{"a":1}');
  });
});

describe('when a state log is written', () => {
  it('appends in place (the same inode), 0600 from its creation, and reads back the newest', () => {
    appendStateLog(s.dir, 'm.json', '{"n":1}');
    const ino = statSync(join(s.dir, 'm.json')).ino;
    appendStateLog(s.dir, 'm.json', '{"n":2}');
    expect(statSync(join(s.dir, 'm.json')).ino).toBe(ino);
    expect(statSync(join(s.dir, 'm.json')).mode & 0o777).toBe(0o600);
    expect(readStateLog(join(s.dir, 'm.json'))).toEqual({ text: '{"n":2}' });
    expect(readStateLog(join(s.dir, 'none.json'))).toBeNull();
  });

  it('is replaced whole by its newest entry once it reaches the limit', () => {
    const big = JSON.stringify({ pad: 'x'.repeat(1000) });
    for (let i = 0; i < Math.ceil(LOG_LIMIT / 1000) + 2; i++) appendStateLog(s.dir, 'm.json', big);
    expect(statSync(join(s.dir, 'm.json')).size).toBeLessThan(LOG_LIMIT + 1200);
    appendStateLog(s.dir, 'm.json', '{"n":"last"}');
    expect(readStateLog(join(s.dir, 'm.json'))).toEqual({ text: '{"n":"last"}' });
    expect(readdirSync(s.dir)).toEqual(['m.json']);
  });

  it('never writes through a symbolic link planted by its name', () => {
    writeFileSync(join(s.dir, 'target'), 'untouched');
    symlinkSync(join(s.dir, 'target'), join(s.dir, 'm.json'));
    expect(() => appendStateLog(s.dir, 'm.json', '{"n":1}')).toThrow(expect.objectContaining({ code: 'OP_SYMLINK' }));
    expect(readFileSync(join(s.dir, 'target'), 'utf8')).toBe('untouched');
  });
});

describe('when the writer mark is a log', () => {
  const key = signerFor('harness');
  const intent = (i: number) => ({ kind: 'intent', agent: 'a', logical_operation_id: 'op', execution_id: `x${i}`, action: 'a' }) as Draft;

  it('a torn last entry falls back to the mark before it, which still refuses a rollback below it', () => {
    const dir = join(s.dir, '.ledger');
    const state = join(s.dir, 'state');
    Ledger.init({ dir, key, agent: 'a', stateDir: state });
    const l = Ledger.open({ dir, key, stateDir: state });
    l.append(intent(1));
    const old = { head: readFileSync(join(dir, 'HEAD')), records: readFileSync(join(dir, 'records.jsonl')) };
    l.append(intent(2));
    l.append(intent(3));
    const [mark] = readdirSync(join(state, 'marks'));
    appendFileSync(join(state, 'marks', mark), stateEntry('{"v":1,"seq":99}').subarray(0, 30));
    // The mark read is seq 3's (the torn entry is skipped): HEAD at seq 1 copied back is refused.
    writeFileSync(join(dir, 'HEAD'), old.head);
    writeFileSync(join(dir, 'records.jsonl'), old.records);
    expect(() => Ledger.open({ dir, key, stateDir: state }).append(intent(4))).toThrow(expect.objectContaining({ code: 'OP_ROLLBACK' }));
  });
});
