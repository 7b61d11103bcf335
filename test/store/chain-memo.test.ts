// src/store/chain-memo.ts: the verified-chain memo lets a reader or writer check only the bytes
// past what was checked before, and only while records.jsonl is exactly the file it names (dev,
// ino, size, mtime and ctime in ns). Anything else (an edit, another user's writer, a copy) is
// one full check. Proven by the byte offsets the check reads.
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { LedgerCache } from '../../src/cache/ledger-cache.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { assertPublishedChain } from '../../src/store/read.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { toBase64url } from '../../src/canonical.js';
import { parseCheckpoint } from '../../src/tlog/checkpoint.js';
import { leafHash } from '../../src/tlog/hash.js';
import { parseNote } from '../../src/tlog/note.js';
import { RightEdge } from '../../src/tlog/tree.js';
import { scratch } from '../helpers/cli.js';

let s: ReturnType<typeof scratch>;
let dir: string;
let state: string;
/** This test's Ledger's caches: a new one is a fresh process. */
let cache: LedgerCache;
const fresh = () => void (cache = new LedgerCache(true, state));
const key = signerFor('harness');
const intent = (i: number) => ({ kind: 'intent', agent: 'a', logical_operation_id: 'op', execution_id: `x${i}`, action: 'a' }) as Draft;

beforeEach(() => {
  s = scratch('chain-memo-');
  dir = join(s.dir, '.ledger');
  state = join(s.dir, 'state');
  Ledger.init({ dir, key, agent: 'a', stateDir: state });
  Ledger.open({ dir, key, stateDir: state }).append([intent(1), intent(2), intent(3)]);
  fresh(); // as a fresh process would start
});
afterEach(() => s.cleanup());

/** Runs the chain check with the given state directory; returns the offsets it read at. */
function check(stateDir = state): number[] {
  const reads: number[] = [];
  const ops: FileOps = { ...realFileOps, read: (fd, buf, pos) => (reads.push(pos), realFileOps.read(fd, buf, pos)) };
  const paths = ledgerPaths(dir, stateDir, stateDir === state ? cache : new LedgerCache(true, stateDir));
  assertPublishedChain(ops, paths, readHead(realFileOps, paths)!);
  return reads;
}

describe('when records.jsonl is exactly the file the memo names', () => {
  it('nothing is read again: neither in this process nor in a fresh one', () => {
    expect(check()).toEqual([]); // the writer's memo, from the file after its append
    fresh();
    expect(check()).toEqual([]);
  });

  it('after this writer appends, only nothing (its own bytes) or the new bytes are read', () => {
    const size = readFileSync(join(dir, 'records.jsonl')).length;
    Ledger.open({ dir, key, stateDir: state }).append(intent(4));
    fresh();
    const reads = check();
    expect(reads.every((at) => at >= size)).toBe(true);
  });
});

describe('when the memo does not name the file as it is', () => {
  it('a fresh state directory (another user, a lost memo): one full check from byte 0, then none', () => {
    const other = mkdtempSync(join(tmpdir(), 'chain-memo-other-'));
    try {
      expect(check(other)[0]).toBe(0);
      expect(check(other)).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('another writer appended (its memo is elsewhere): a full check from byte 0', () => {
    const other = mkdtempSync(join(tmpdir(), 'chain-memo-other-'));
    try {
      Ledger.open({ dir, key, stateDir: other }).append(intent(9));
      fresh(); // it was another process
      expect(check()[0]).toBe(0);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('the same bytes written back in place (same size, new ctime): a full check from byte 0', () => {
    writeFileSync(join(dir, 'records.jsonl'), readFileSync(join(dir, 'records.jsonl')));
    expect(check()[0]).toBe(0);
  });

  it('a memo file that is junk is no memo: a full check, never a failure', () => {
    const chain = join(state, 'chain');
    for (const f of readdirSync(chain)) writeFileSync(join(chain, f), '{"junk');
    fresh();
    expect(check()[0]).toBe(0);
  });

  it('a memo file this user does not own alone (writable by its group or others, a link) is no memo: a full check', () => {
    const chain = join(state, 'chain');
    const [name] = readdirSync(chain);
    const file = join(chain, name);
    const text = readFileSync(file);
    expect(check()).toEqual([]); // the control: the very memo, as this user's own, is believed
    for (const mode of [0o620, 0o602]) {
      chmodSync(file, mode);
      fresh();
      expect(check()[0]).toBe(0);
      rmSync(file);
      writeFileSync(file, text, { mode: 0o600 });
    }
    const elsewhere = join(s.dir, 'memo-elsewhere');
    writeFileSync(elsewhere, text, { mode: 0o600 });
    rmSync(file);
    symlinkSync(elsewhere, file);
    fresh();
    expect(check()[0]).toBe(0);
  });

  it('a torn newest entry is passed over for the one before it (entries are told whole by their text)', () => {
    const chain = join(state, 'chain');
    const [name] = readdirSync(chain);
    const file = join(chain, name);
    const whole = readFileSync(file, 'utf8');
    const entry = whole.slice(whole.lastIndexOf('\n', whole.length - 2));
    appendFileSync(file, entry.slice(0, entry.length - 10)); // a second copy, torn
    fresh();
    expect(check()).toEqual([]);
  });

  it('without caches (LEDGER_NO_CACHE): a full check every time, and no memo written', () => {
    const none = mkdtempSync(join(tmpdir(), 'chain-memo-none-'));
    try {
      const paths = ledgerPaths(dir, none, new LedgerCache(false, none));
      for (let i = 0; i < 2; i++) {
        const reads: number[] = [];
        const ops: FileOps = { ...realFileOps, read: (fd, buf, pos) => (reads.push(pos), realFileOps.read(fd, buf, pos)) };
        assertPublishedChain(ops, paths, readHead(realFileOps, paths)!);
        expect(reads[0]).toBe(0);
      }
      expect(readdirSync(none)).toEqual([]);
    } finally {
      rmSync(none, { recursive: true, force: true });
    }
  });
});

// SPEC 13, issue 27: the writer records the tree's root through the chain it checked, and the
// next append by this user on the same file believes `.ledger/tree` by that root instead of
// verifying the checkpoint's signature; a tree that does not give it is rebuilt from the records.
describe('the tree\'s root a writer records beside the chain', () => {
  /** Appends one record in a fresh process's Ledger; returns whether it read `.ledger/checkpoint`. */
  function appendReadsCheckpoint(i: number, caches = true): boolean {
    let read = false;
    const ops: FileOps = { ...realFileOps, readFile: (p) => ((read ||= p.endsWith('/checkpoint')), realFileOps.readFile(p)) };
    Ledger.open({ dir, key, stateDir: state, ops, cache: caches }).append(intent(i));
    return read;
  }
  const rootOfRecords = () => {
    const e = new RightEdge();
    for (const l of readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').filter(Boolean)) e.append(leafHash(l));
    return toBase64url(e.root());
  };
  const checkpointRoot = () => toBase64url(parseCheckpoint(parseNote(readFileSync(join(dir, 'checkpoint'))).text).root);

  it('is the root of the records it checked, and the next append reads no checkpoint to believe the tree', () => {
    expect(appendReadsCheckpoint(4)).toBe(false);
    const entry = readFileSync(join(state, 'chain', readdirSync(join(state, 'chain'))[0]), 'utf8').trim().split('\n').at(-1)!;
    expect(JSON.parse(entry.slice(entry.indexOf(' ') + 1)).root).toBe(rootOfRecords()); // state-log.ts: digest, space, JSON
    expect(checkpointRoot()).toEqual(rootOfRecords());
  });

  it('without caches, or after another writer changed the file, the signed checkpoint is read instead', () => {
    expect(appendReadsCheckpoint(4, false)).toBe(true);
    expect(appendReadsCheckpoint(5)).toBe(true); // the memo names the file as it was before the uncached append
    expect(appendReadsCheckpoint(6)).toBe(false);
    expect(checkpointRoot()).toEqual(rootOfRecords());
  });

  it('a tree file that does not give the recorded root is rebuilt from the records: the signed root is theirs', () => {
    writeFileSync(join(dir, 'tree'), Buffer.alloc(readFileSync(join(dir, 'tree')).length, 7));
    expect(appendReadsCheckpoint(4)).toBe(false);
    expect(checkpointRoot()).toEqual(rootOfRecords());
  });
});
