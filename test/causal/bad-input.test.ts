// Bad input to the causal verbs (consume-failed included, issue 14 item 13): each row exits 2 with a one-line reason and leaves records.jsonl
// and HEAD byte for byte as they were (SPEC 10).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handoff, project, type Project } from './kit.js';

let p: Project;
let h: string;
let intent: string;
const NOT_IN_LEDGER = 'sha256:' + '0'.repeat(64);

beforeAll(async () => {
  p = await project();
  h = await p.id(handoff('op', 'e1', 'success', '--invariant', 'tests=ok'));
  intent = await p.id(['append', 'intent', '--op', 'op', '--exec', 'e2', '--action', 'deploy']);
  writeFileSync(join(p.dir, 'garbage-floor.json'), '{"v":1,');
  writeFileSync(join(p.dir, 'wrong-floor.json'), JSON.stringify({ v: 1, seq: 0 }));
});
afterAll(() => p?.cleanup());

type Row = [string, () => string[], (string | (() => string))?, string?];
const rows: Row[] = [
  // gate
  ['gate: an op that is not an id', () => ['gate', 'no spaces allowed'], 'OP must be'],
  ['gate: an unknown outcome in --accept', () => ['gate', 'op', '--accept', 'sucess'], '--accept'],
  ['gate: an empty entry in --accept', () => ['gate', 'op', '--accept', 'success,'], '--accept'],
  ['gate: --accept with no value', () => ['gate', 'op', '--accept'], '--accept'],
  ['gate: a duration with no unit', () => ['gate', 'op', '--max-age', '10'], '--max-age'],
  ['gate: a duration with a bad unit', () => ['gate', 'op', '--max-age', '5y'], '--max-age'],
  ['gate: a negative duration', () => ['gate', 'op', '--max-age=-5m'], '--max-age'],
  ['gate: a zero --max-age', () => ['gate', 'op', '--max-age', '0s'], '--max-age'],
  ['gate: --max-age twice', () => ['gate', 'op', '--max-age', '1h', '--max-age', '2h'], '--max-age'],
  ['gate: a bad invariant name', () => ['gate', 'op', '--require-invariant', 'no spaces'], '--require-invariant'],
  ['gate: --handoff that is not a record id', () => ['gate', 'op', '--handoff', 'sha256:xyz'], '--handoff'],
  ['gate: a bad consumer name', () => ['gate', 'op', '--consume-as', 'bad consumer'], '--consume-as'],
  ['gate: a floor that is not JSON', () => ['gate', 'op', '--floor', join(p.dir, 'garbage-floor.json')]],
  ['gate: a floor that is not a floor', () => ['gate', 'op', '--floor', join(p.dir, 'wrong-floor.json')]],
  ['gate: no trust file', () => ['gate', 'op', '--trust', join(p.dir, 'nope.json')], 'trust'],
  ['gate --consume-as: no key file', () => ['gate', 'op', '--consume-as', 'c1', '--key', join(p.dir, 'nope.key')]],
  // revoke
  ['revoke: an id that is not a digest', () => ['revoke', 'abc', '--reason', 'x'], 'record id'],
  ['revoke: an upper-case digest', () => ['revoke', h.toUpperCase(), '--reason', 'x'], 'record id'],
  ['revoke: a record that is not in the ledger', () => ['revoke', NOT_IN_LEDGER, '--reason', 'x'], 'no record'],
  ['revoke: an intent (not a handoff)', () => ['revoke', intent, '--reason', 'x'], 'only a handoff or finish'],
  ['revoke: no --reason', () => ['revoke', h], '--reason'],
  ['revoke: a reason over 4096 chars', () => ['revoke', h, '--reason', 'x'.repeat(4097)], '--reason'],
  // append intent / handoff
  ['append intent: no --action', () => ['append', 'intent', '--op', 'op', '--exec', 'e3'], '--action'],
  ['append intent: a handoff flag', () => ['append', 'intent', '--op', 'op', '--exec', 'e3', '--action', 'a', '--outcome', 'success'], '--outcome'],
  ['append intent: a bad execution id', () => ['append', 'intent', '--op', 'op', '--exec', 'e 3', '--action', 'a'], '--exec'],
  ['append intent: the same execution with another action', () => ['append', 'intent', '--op', 'op', '--exec', 'e2', '--action', 'something else'], () => intent],
  ['append handoff: --action', () => ['append', 'handoff', '--op', 'op', '--exec', 'e3', '--outcome', 'success', '--action', 'a'], '--action'],
  ['append handoff: supersedes a record not in the ledger', () => [...handoff('op', 'e3', 'success'), '--supersedes', NOT_IN_LEDGER], 'supersedes'],
  ['append handoff: supersedes an intent', () => [...handoff('op', 'e3', 'success'), '--supersedes', intent], 'supersedes'],
  ['append handoff: a retry with a different payload', () => handoff('op', 'e1', 'success', '--invariant', 'tests=fail'), () => h],
  ['append: a kind the flags do not write', () => ['append', 'consume', '--op', 'op'], 'handoff'],
  // consume-failed
  ['consume-failed: a target that is neither a record id nor an op', () => ['consume-failed', 'no spaces', '--consumer', 'c1', '--reason', 'x'], 'record id'],
  ['consume-failed: no --consumer', () => ['consume-failed', 'op', '--reason', 'x'], '--consumer'],
  ['consume-failed: a bad consumer name', () => ['consume-failed', 'op', '--consumer', 'bad consumer', '--reason', 'x'], '--consumer'],
  ['consume-failed: --consumer twice', () => ['consume-failed', 'op', '--consumer', 'c1', '--consumer', 'c2', '--reason', 'x'], '--consumer'],
  ['consume-failed: no --reason', () => ['consume-failed', 'op', '--consumer', 'c1'], '--reason'],
  ['consume-failed: a reason over 4096 chars', () => ['consume-failed', 'op', '--consumer', 'c1', '--reason', 'x'.repeat(4097)], '--reason'],
  ['consume-failed: an op the consumer never consumed', () => ['consume-failed', 'op', '--consumer', 'c1', '--reason', 'x'], 'has no consumption'],
  ['consume-failed: a handoff the consumer never consumed', () => ['consume-failed', h, '--consumer', 'c1', '--reason', 'x'], 'has no consumption'],
  ['consume-failed: a record that is not in the ledger', () => ['consume-failed', NOT_IN_LEDGER, '--consumer', 'c1', '--reason', 'x'], 'no record'],
  ['consume-failed: an intent', () => ['consume-failed', intent, '--consumer', 'c1', '--reason', 'x'], 'consume-failed names'],
  ['consume-failed: no key file', () => ['consume-failed', 'op', '--consumer', 'c1', '--reason', 'x', '--key', join(p.dir, 'nope.key')]],
  ['append: a consume_failed payload in a batch', () => ['append', '--batch'], 'consume-failed',
    JSON.stringify({ kind: 'consume_failed', logical_operation_id: 'op', consumer: 'c1', consume: NOT_IN_LEDGER, handoff: NOT_IN_LEDGER, reason: 'x' }) + '\n'],
  // pending
  ['pending: a bad --op', () => ['pending', '--op', 'bad op'], 'OP must be'],
];

describe('bad input to gate, revoke, consume-failed, append intent/handoff and pending', () => {
  it.each(rows)('%s: exit 2, nothing written', async (_name, args, mention, stdin) => {
    const before = p.snap();
    const r = await p.run(args(), { stdin });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    if (mention) expect(r.stderr).toContain(typeof mention === 'function' ? mention() : mention);
    expect(p.snap()).toEqual(before);
  });

  it('reports the error as one JSON object with --json', async () => {
    const r = await p.run(['gate', 'op', '--accept', 'maybe', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'USAGE' } });
  });
});
