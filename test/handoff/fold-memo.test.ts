// The fold memo (src/handoff/fold-memo.ts): `start`, `checkpoint`, `status`, `resume` and the
// views fold only the records it names and those after it. What it must never change is the
// answer: on any mix of work records, intents and outcomes, the work log and the outcome fold
// are exactly those of a fold over every record; a memo that does not match the ledger (planted,
// stale, pointing at the wrong bytes, a FIFO) is not believed, hangs nothing, and the ledger
// stays byte-identical.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MEMO_EVERY, memoPath, readFolds, readWorkLogFast } from '../../src/handoff/fold-memo.js';
import { LedgerCache } from '../../src/cache/ledger-cache.js';
import { statusOf } from '../../src/handoff/status.js';
import { OutcomeFold, tap } from '../../src/handoff/unresolved.js';
import { foldWorkLog, type WorkLog } from '../../src/handoff/workitems.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { readRecords } from '../../src/store/read.js';
import { realFileOps } from '../../src/fs/ops.js';
import { serializeLedger, buildLedger, writeLedgerFiles, type Json, type LedgerSpec } from '../helpers/gen-ledger.js';
import { scratch, snapshot } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';

const NOW = new Date('2027-01-01T00:00:00.000Z');
const SLUGS = ['fix-tz', 'docs', 'api', 'billing'];
const OUTCOMES = ['success', 'failure', 'ambiguous', 'timeout', 'cancelled'];

/**
 * A mix of every kind the two folds read, chosen per seq from `pick` (so fast-check can vary it):
 * the work log's, CI intents and handoffs, and the operations' story (issue 26): handoffs of a
 * work item's operation, consume, consume_failed and revoke records naming earlier records, some
 * of them a work item's, some a CI's, some failure reports from an agent that did not consume.
 */
function mixed(pick: (seq: number) => number) {
  const ids: string[] = [];
  const terminals: number[] = [];
  const consumes: { seq: number; agent: string; handoff: string }[] = [];
  return (u: Json, seq: number): Json => {
    if (seq > 0) ids[seq - 1] = u.prev_tail_hash as string;
    if (seq === 0) return u;
    const base = { v: u.v, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts };
    const n = pick(seq);
    const slug = SLUGS[n % SLUGS.length];
    const agent = ['claude', 'codex'][(n >>> 2) % 2];
    const exec = `exec-${slug}-${agent}`;
    const lease = new Date(Date.parse(String(u.ts)) + 3_600_000).toISOString();
    const work = { logical_operation_id: slug, execution_id: exec, done: 'did', state: 'now', next: 'then', verified: [], attempted: [], blockers: [] };
    const op = `ci-${n % 7}`;
    const earlier = terminals.length ? ids[terminals[(n >>> 5) % terminals.length]] : null;
    const record = ((): Json => {
      switch ((n >>> 3) % 12) {
        case 0: return { ...base, agent, kind: 'start', logical_operation_id: slug, execution_id: exec, summary: `work on ${slug}`, lease_until: lease };
        case 1: return { ...base, agent, kind: 'checkpoint', ...work, lease_until: lease };
        case 2: return { ...base, agent, kind: 'finish', ...work, outcome: OUTCOMES[n % 5], evidence: {}, invariants: {}, depends_on: [] };
        case 3: return { ...base, agent, kind: 'release', logical_operation_id: slug, execution_id: exec, note: 'handing it back' };
        case 4: return { ...base, agent: 'alice', kind: 'note', logical_operation_id: slug, text: 'a reviewer says' };
        case 5:
        case 6: return { ...base, agent: 'ci', kind: 'intent', logical_operation_id: op, execution_id: `run-${seq}`, action: 'deploy' };
        case 9: return { ...base, agent: 'ci', kind: 'handoff', logical_operation_id: slug, execution_id: `run-${seq}`, outcome: OUTCOMES[(n >>> 1) % 5], evidence: {}, invariants: {}, depends_on: [], note: 'a script ran it' };
        case 10:
          if (earlier === null) break;
          return { ...base, agent: ['deployer', 'eve'][n % 2], kind: 'consume', logical_operation_id: (n >>> 6) % 3 === 0 ? op : slug, consumer: `c${(n >>> 1) % 2}`, handoff: earlier, seen_head: { seq: seq - 1, tail: ids[seq - 1] } };
        case 11: {
          const c = consumes.length && n % 2 === 0 ? consumes[(n >>> 5) % consumes.length] : null;
          if (c) return { ...base, agent: n % 3 === 0 ? 'eve' : c.agent, kind: 'consume_failed', logical_operation_id: slug, consumer: 'c0', consume: ids[c.seq], handoff: c.handoff, reason: 'the deploy failed' };
          if (earlier === null) break;
          return { ...base, agent: 'alice', kind: 'revoke', target: earlier, reason: 'stale evidence' };
        }
      }
      return { ...base, agent: 'ci', kind: 'handoff', logical_operation_id: op, execution_id: `run-${seq}`, outcome: OUTCOMES[(n >>> 1) % 5], evidence: {}, invariants: {}, depends_on: [] };
    })();
    if (record.kind === 'finish' || record.kind === 'handoff') terminals.push(seq);
    if (record.kind === 'consume') consumes.push({ seq, agent: record.agent as string, handoff: record.handoff as string });
    return record;
  };
}

const specOf = (count: number, pick: (seq: number) => number): LedgerSpec => ({ count, start: '2026-01-01T00:00:00.000Z', edit: mixed(pick) });

/** The work log as plain data (its Map as entries), to compare two folds. */
const plain = (log: WorkLog) => JSON.stringify({ ...log, items: [...log.items.entries()], operations: [...log.operations.entries()] });

/** What a fold over every record gives: the reference the memo must match. */
function fullFolds(dir: string) {
  const paths = ledgerPaths(dir);
  const head = readHead(realFileOps, paths)!;
  const outcomes = new OutcomeFold();
  const log = foldWorkLog(tap(readRecords(paths, head), (r) => outcomes.add(r)));
  return { log, outcomes, status: statusOf(log, outcomes, 'claude', NOW) };
}

/** The caches of this test's Ledger (src/cache/): a new one is the user's next process. */
let cache: LedgerCache;
const state = () => process.env.LEDGER_STATE_DIR!;
function forgetProcessFold() {
  cache = new LedgerCache(true, state());
}

/** Forgets the fold kept by this test's Ledger (fold-kept.ts). */
function forgetKept() {
  forgetProcessFold();
}

/** The paths of the ledger with this test's caches. */
const cached = (dir: string) => ledgerPaths(dir, state(), cache);

/** The memo-based folds, as a fresh process of a user with no kept fold gets them (unless `kept`). */
function fastFolds(dir: string, kept = false, ops = realFileOps) {
  if (!kept) forgetKept();
  const paths = cached(dir);
  const { log, outcomes } = readFolds(paths, readHead(realFileOps, paths)!, { ops });
  return { log, outcomes, status: statusOf(log, outcomes, 'claude', NOW) };
}

const write = (dir: string, spec: LedgerSpec) => writeLedgerFiles(dir, serializeLedger(buildLedger(spec)));

/** Whether a record past the memo (its text `memo`) revokes a record before it that is not among the outcome records the memo locates. */
function revokesUnheld(dir: string, memo: string): boolean {
  const m = JSON.parse(memo) as { seq: number; outcomes: [number, number][] };
  const paths = ledgerPaths(dir);
  const records = [...readRecords(paths, readHead(realFileOps, paths)!)];
  const located = new Set(m.outcomes.map(([seq]) => records[seq].id));
  return records.some((r) => r.seq > m.seq && r.record.kind === 'revoke' && records.findIndex((t) => t.id === (r.record as { target?: string }).target) <= m.seq && !located.has(String((r.record as { target?: string }).target)));
}

let s: { dir: string; cleanup: () => void };
let dir: string;
beforeEach(() => {
  s = scratch('fold-memo-');
  dir = join(s.dir, '.ledger');
  forgetProcessFold();
});
afterEach(() => s.cleanup());

describe('when a ledger grows past the memo with every kind the folds read', () => {
  it('the memo-based folds equal a fold over every record, at the memo and after it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1 << 16 }), { minLength: 16, maxLength: 16 }), fc.integer({ min: 1, max: 300 }), (salt, more) => {
        rmSync(dir, { recursive: true, force: true });
        const pick = (seq: number) => (salt[seq % 16] ^ (seq * 2654435761)) >>> 0;
        const first = MEMO_EVERY + 40;
        write(dir, specOf(first, pick));
        // No memo yet: the whole ledger is folded, and a memo at HEAD is written.
        expect(plain(fastFolds(dir).log)).toBe(plain(fullFolds(dir).log));
        expect(existsSync(memoPath(ledgerPaths(dir)))).toBe(true);
        const memo = readFileSync(memoPath(ledgerPaths(dir)), 'utf8');
        // The same ledger grown: the same first records (the spec is deterministic), more after.
        write(dir, specOf(first + more, pick));
        const full = fullFolds(dir);
        // From the fold kept in this process, then from the memo alone (fold-kept.ts).
        for (const fresh of [false, true]) {
          if (fresh) forgetProcessFold();
          const kept = fastFolds(dir, true);
          expect(plain(kept.log)).toBe(plain(full.log));
          expect(kept.status).toEqual(full.status);
        }
        const fast = fastFolds(dir);
        expect(plain(fast.log)).toBe(plain(full.log));
        expect(fast.status).toEqual(full.status);
        // A memo is rewritten once more than MEMO_EVERY records lie past it, or once a record
        // past it revokes one before it that it does not hold (the fold then starts over).
        expect(readFileSync(memoPath(ledgerPaths(dir)), 'utf8') === memo).toBe(more <= MEMO_EVERY && !revokesUnheld(dir, memo));
        // render --check's older folds: as of any seq, the same as the full fold stopped there.
        const paths = cached(dir);
        const head = readHead(realFileOps, paths)!;
        for (const at of [0, first - 1, first + Math.floor(more / 2)]) {
          expect(plain(readWorkLogFast(paths, head, at))).toBe(plain(foldWorkLog(readRecords(paths, head), at)));
        }
      }),
      { numRuns: runs(6, 60) },
    );
  });
});

describe('when a success that resolved a timed-out outcome is revoked after the memo (found by `npm run soak`)', () => {
  // seq 1-3: a timed-out handoff and the success that resolves it (a CI's handoff, which the memo
  // does not locate; or a work item's finish, which it locates for the work log, not for the
  // outcomes); filler past MEMO_EVERY; then, after the memo, a revocation of the success.
  const filler = MEMO_EVERY + 20;
  const handoff = (base: Json, op: string, exec: string, outcome: string): Json => ({ ...base, agent: 'ci', kind: 'handoff', logical_operation_id: op, execution_id: exec, outcome, evidence: {}, invariants: {}, depends_on: [] });
  const cases: Record<string, { op: string; record: (base: Json, seq: number) => Json }> = {
    'a CI handoff': {
      op: 'ci-2',
      record: (base, seq) => (seq === 1 ? handoff(base, 'ci-2', 'run-1', 'timeout') : seq === 2 ? handoff(base, 'ci-2', 'run-2', 'success') : { ...base, agent: 'ci', kind: 'intent', logical_operation_id: 'ci-x', execution_id: 'run-x', action: 'deploy' }),
    },
    'a work item\'s finish': {
      op: 'docs',
      record: (base, seq) =>
        seq === 1 ? handoff(base, 'docs', 'run-1', 'timeout')
          : seq === 2 ? { ...base, agent: 'claude', kind: 'start', logical_operation_id: 'docs', execution_id: 'claude-1', summary: 'the docs', lease_until: '2026-01-01T02:00:00.000Z' }
            : { ...base, agent: 'claude', kind: 'finish', logical_operation_id: 'docs', execution_id: 'claude-1', done: 'did', state: 'done', next: 'none', verified: [], attempted: [], blockers: [], outcome: 'success', evidence: {}, invariants: {}, depends_on: [] },
    },
  };
  for (const [what, c] of Object.entries(cases)) {
    it(`${what}: the timeout is unresolved again, as a fold over every record says, and a memo is written past the revocation`, () => {
      const resolver = what === 'a CI handoff' ? 2 : 3;
      let success = '';
      const edit = (revokeAt: number | null) => (u: Json, seq: number): Json => {
        if (seq === 0) return u;
        const base = { v: u.v, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts };
        if (seq === resolver + 1) success = u.prev_tail_hash as string;
        if (seq <= resolver) return c.record(base, seq);
        if (seq === revokeAt) return { ...base, agent: 'alice', kind: 'revoke', target: success, reason: 'the deploy it reported never happened' };
        return { ...base, agent: 'ci', kind: 'intent', logical_operation_id: `ci-${seq}`, execution_id: `run-${seq}`, action: 'deploy' };
      };
      const spec = (count: number, revokeAt: number | null): LedgerSpec => ({ count, start: '2026-01-01T00:00:00.000Z', edit: edit(revokeAt) });
      write(dir, spec(filler, null));
      expect(fastFolds(dir).status.unresolved_outcomes).toEqual([]);
      const memo = readFileSync(memoPath(ledgerPaths(dir)), 'utf8');
      write(dir, spec(filler + 2, filler));
      const full = fullFolds(dir);
      expect(full.status.unresolved_outcomes.map((o) => [o.logical_operation_id, o.seq])).toEqual([[c.op, 1]]);
      for (const fresh of [false, true]) {
        if (fresh) forgetProcessFold();
        expect(fastFolds(dir, true).status).toEqual(full.status);
      }
      expect(fastFolds(dir).status).toEqual(full.status);
      // The fold that started over wrote a memo past the revocation; a fold from it agrees.
      expect(readFileSync(memoPath(ledgerPaths(dir)), 'utf8')).not.toBe(memo);
      expect(JSON.parse(readFileSync(memoPath(ledgerPaths(dir)), 'utf8')).seq).toBe(filler + 1);
      expect(fastFolds(dir).status).toEqual(full.status);
    });
  }
});

describe('when this process folded a ledger, and another ledger of the same genesis took its place', () => {
  it('the fold this process kept is not believed: the answer is the new ledger\'s full fold', () => {
    const count = MEMO_EVERY + 60;
    write(dir, specOf(count, (seq) => (seq * 2654435761) >>> 0));
    const first = plain(fastFolds(dir).log);
    fastFolds(dir, true); // from the disk memo: now kept in this process
    // Same genesis (the same first record), other records after it, and longer: the kept fold
    // ends within the new file, at a line that is not its record.
    write(dir, specOf(count + 40, (seq) => (seq * 40503 + 7) >>> 0));
    rmSync(memoPath(ledgerPaths(dir)), { force: true });
    const full = fullFolds(dir);
    expect(plain(full.log)).not.toBe(first);
    for (const fresh of [false, true]) {
      // In this process, then as this user's next process.
      if (fresh) forgetProcessFold();
      const fast = fastFolds(dir, true);
      expect(plain(fast.log)).toBe(plain(full.log));
      expect(fast.status).toEqual(full.status);
    }
  });
});

describe('when work items were started before a long batch of CI records (issue 22)', () => {
  // The work items first, then a batch longer than a fold keeps its outcome records whole for.
  const BATCH = 4200;
  const items = mixed((seq) => (seq * 2654435761) >>> 0);
  // After seq 40, CI pairs: an intent (odd seq) and its successful handoff (the next seq).
  const ci = (u: Json, seq: number): Json => {
    if (seq <= 40) return items(u, seq);
    const k = (seq + 1) >> 1;
    const base = { v: u.v, seq, prev_tail_hash: u.prev_tail_hash, ts: u.ts, agent: 'ci', logical_operation_id: `ci-${k}`, execution_id: `run-${k}` };
    return seq % 2 === 1 ? { ...base, kind: 'intent', action: 'deploy' } : { ...base, kind: 'handoff', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] };
  };
  const specOf = (count: number): LedgerSpec => ({ count, start: '2026-01-01T00:00:00.000Z', edit: ci });
  /** The bytes of the batch `f` reads (from 16 KiB past its start: the work items' own records are read where they are). */
  const bytesRead = (f: (ops: typeof realFileOps) => unknown) => {
    const from = readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').slice(0, 41).join('\n').length + (16 << 10);
    let n = 0;
    const ops = { ...realFileOps, read: (fd: number, buf: Uint8Array, at: number) => { const got = realFileOps.read(fd, buf, at); if (at >= from) n += got; return got; } };
    f(ops);
    return n;
  };

  it('the first fold after the batch writes the memo, and the next command reads only what is new', () => {
    write(dir, specOf(41));
    fastFolds(dir); // this user looked before the batch
    write(dir, specOf(41 + BATCH));
    forgetProcessFold();
    const size = readFileSync(join(dir, 'records.jsonl')).length;
    const first = bytesRead((ops) => fastFolds(dir, true, ops));
    expect(first).toBeGreaterThan(size / 2); // the batch, once
    for (let i = 0; i < 2; i++) {
      forgetProcessFold(); // the user's next command
      const fast = fastFolds(dir, true);
      expect(plain(fast.log)).toBe(plain(fullFolds(dir).log));
      expect(fast.status).toEqual(fullFolds(dir).status);
      forgetProcessFold();
      expect(bytesRead((ops) => fastFolds(dir, true, ops))).toBeLessThan(size / 20);
    }
  });

  it('a fold this Ledger kept before the batch is passed over for the memo written after it', () => {
    write(dir, specOf(41));
    fastFolds(dir); // kept by this Ledger, as of seq 40
    const before = cache;
    write(dir, specOf(41 + BATCH));
    forgetProcessFold();
    fastFolds(dir, true); // another command: writes the memo at HEAD
    cache = before; // the first Ledger again, its fold 4,200 records behind
    const size = readFileSync(join(dir, 'records.jsonl')).length;
    expect(bytesRead((ops) => fastFolds(dir, true, ops))).toBeLessThan(size / 20);
    expect(plain(fastFolds(dir, true).log)).toBe(plain(fullFolds(dir).log));
  });

  it('without caches, every fold reads every record and nothing is kept', () => {
    write(dir, specOf(41 + 300));
    rmSync(state(), { recursive: true, force: true });
    const paths = ledgerPaths(dir, state(), new LedgerCache(false, state()));
    const size = readFileSync(join(dir, 'records.jsonl')).length;
    for (let i = 0; i < 2; i++) {
      let n = 0;
      const ops = { ...realFileOps, read: (fd: number, buf: Uint8Array, at: number) => { const got = realFileOps.read(fd, buf, at); n += got; return got; } };
      readFolds(paths, readHead(realFileOps, paths)!, { ops });
      expect(n).toBeGreaterThanOrEqual(size);
    }
    expect(existsSync(memoPath(paths))).toBe(false);
    expect(existsSync(state())).toBe(false);
    expect(plain(readFolds(paths, readHead(realFileOps, paths)!).log)).toBe(plain(fullFolds(dir).log));
  });
});

describe('when records.jsonl changes between the chain check and the read of the records after the memo', () => {
  it('the fold refuses (OP_CORRUPT), rather than fold bytes the check did not see', () => {
    write(dir, specOf(MEMO_EVERY + 20, (seq) => (seq * 2654435761) >>> 0));
    const paths = ledgerPaths(dir);
    const head = readHead(realFileOps, paths)!;
    // The second read of the last line's bytes (the tail read, after the chain check's) sees
    // them changed: its first byte is no longer a JSON object's.
    const lastStart = readFileSync(paths.records).lastIndexOf('\n', head.size - 2) + 1;
    let reads = 0;
    const ops = {
      ...realFileOps,
      read: (fd: number, buf: Uint8Array, position: number) => {
        const n = realFileOps.read(fd, buf, position);
        if (position <= lastStart && lastStart < position + n && ++reads === 2) buf[lastStart - position] = 0x78;
        return n;
      },
    };
    expect(() => readFolds(paths, head, { ops, write: false })).toThrow(/changed while it was read/);
    expect(reads).toBe(2);
  });
});

describe('when the memo in the ledger directory does not match the ledger', () => {
  const pick = (seq: number) => (seq * 2654435761) >>> 0;
  const count = MEMO_EVERY + 100;
  let reference: string;
  let memoFile: string;
  let memo: Json;
  beforeEach(() => {
    write(dir, specOf(count, pick));
    reference = plain(fullFolds(dir).log);
    fastFolds(dir);
    memoFile = memoPath(ledgerPaths(dir));
    memo = JSON.parse(readFileSync(memoFile, 'utf8')) as Json;
  });

  const plant = (m: unknown) => writeFileSync(memoFile, typeof m === 'string' ? m : JSON.stringify(m));

  const cases: [string, () => void][] = [
    ['it is not JSON', () => plant('{"v":1,')],
    ['it names another genesis', () => plant({ ...memo, genesis: `sha256:${'0'.repeat(64)}` })],
    ['it ends past HEAD', () => plant({ ...memo, end: (memo.end as number) + 10 })],
    ['its end is not where its record ends', () => plant({ ...memo, end: (memo.end as number) - 1 })],
    ['it names a record at the wrong offset', () => plant({ ...memo, work: (memo.work as number[][]).map(([q, o], i) => (i === 3 ? [q, o + 1] : [q, o])) })],
    ['it names an intent as a work record', () => plant({ ...memo, work: [...(memo.work as number[][]), ...(memo.outcomes as number[][])].sort((a, b) => a[0] - b[0]) })],
    ['it leaves out the genesis', () => plant({ ...memo, work: (memo.work as number[][]).slice(1) })],
    ['it is of version 1 (which located no consume or revoke records)', () => plant({ ...memo, v: 1 })],
    ['its locators are out of order', () => plant({ ...memo, work: [...(memo.work as number[][])].reverse() })],
    ['it is a symbolic link to another memo', () => {
      const other = join(s.dir, 'other.json');
      writeFileSync(other, JSON.stringify({ ...memo, work: (memo.work as number[][]).slice(0, 1) }));
      rmSync(memoFile);
      symlinkSync(other, memoFile);
    }],
    ['it is a FIFO (a read would block)', () => {
      rmSync(memoFile);
      execFileSync('mkfifo', [memoFile]);
    }],
    ['it is a directory', () => {
      rmSync(memoFile);
      mkdirSync(memoFile);
    }],
  ];
  for (const [name, plantIt] of cases) {
    it(`${name}: it is not believed, the answer is the full fold's, and the ledger is unchanged`, () => {
      plantIt();
      const before = snapshot(dir);
      expect(plain(fastFolds(dir).log)).toBe(reference);
      expect(snapshot(dir)).toEqual(before);
    });
  }

  it('a record it names was rewritten in place (same length, new id): the memo is not believed', () => {
    // The located record's bytes change, its id with them, so the record after it no longer
    // links to it: the memo is dropped, and the answer is whatever reading every line gives
    // (the store's chain check refuses such an edit where it is made).
    const paths = ledgerPaths(dir);
    const [seq, offset] = (memo.work as number[][])[5];
    expect(seq).toBeGreaterThan(0);
    const bytes = readFileSync(paths.records);
    const at = bytes.indexOf('"ts":"2026-', offset) + '"ts":"2026-'.length;
    bytes[at + 1] = bytes[at + 1] === 0x31 ? 0x32 : 0x31; // the month's second digit
    writeFileSync(paths.records, bytes);
    const outcome = (f: () => unknown) => {
      try {
        return { value: plain((f() as { log: WorkLog }).log) };
      } catch (e) {
        return { error: (e as Error).message };
      }
    };
    const fast = outcome(() => fastFolds(dir));
    expect(fast).toEqual(outcome(() => fullFolds(dir)));
    expect(fast).not.toEqual({ value: reference });
  });

  it('the ledger it was made for has open items, waiting intents and unresolved outcomes (the cases are not vacuous)', () => {
    const { status } = fullFolds(dir);
    expect(status.items.length).toBeGreaterThan(0);
    expect(status.pending_intents.length).toBeGreaterThan(0);
    expect(status.unresolved_outcomes.length).toBeGreaterThan(0);
    expect((memo.outcomes as unknown[]).length).toBeGreaterThan(0);
    // the operations' story: consumed, reported failed and revoked outcomes, located by the memo
    const attempts = [...fullFolds(dir).log.operations.values()].flatMap((o) => o.attempts);
    expect(attempts.some((a) => a.kind === 'handoff')).toBe(true);
    expect(attempts.some((a) => a.consumed.some((c) => c.failed !== null))).toBe(true);
    expect(attempts.some((a) => a.revoked.length > 0)).toBe(true);
    const kinds = new Set((memo.work as number[][]).map(([seq]) => kindAt(seq)));
    for (const k of ['handoff', 'consume', 'consume_failed', 'revoke']) expect(kinds, k).toContain(k);
  });

  it('it names story records the fold does not take (a CI handoff, a consume of one): believed, and the answer is still the full fold\'s', () => {
    const taken = new Set((memo.work as number[][]).map(([seq]) => seq));
    const extra = lineStarts().filter(([seq]) => !taken.has(seq) && ['handoff', 'consume', 'revoke', 'consume_failed'].includes(kindAt(seq)));
    expect(extra.length).toBeGreaterThan(0);
    plant({ ...memo, work: [...(memo.work as number[][]), ...extra].sort((a, b) => a[0] - b[0]) });
    const planted = readFileSync(memoFile, 'utf8');
    const before = snapshot(dir);
    expect(plain(fastFolds(dir).log)).toBe(reference);
    expect(snapshot(dir)).toEqual(before);
    // Believed: a memo not believed means a fold of every record, which writes a fresh one.
    expect(readFileSync(memoFile, 'utf8')).toBe(planted);
  });
});

/** Each record's seq and the offset its line starts at. */
function lineStarts(): [number, number][] {
  const out: [number, number][] = [];
  let offset = 0;
  for (const line of readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n').slice(0, -1)) {
    out.push([out.length, offset]);
    offset += Buffer.byteLength(line) + 1;
  }
  return out;
}

/** The kind of the record at `seq`. */
function kindAt(seq: number): string {
  return (JSON.parse(readFileSync(join(dir, 'records.jsonl'), 'utf8').split('\n')[seq]) as { kind: string }).kind;
}
