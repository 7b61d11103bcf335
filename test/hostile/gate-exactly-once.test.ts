// Issue 13 finding 15 and issue 14 item 13 (SPEC 9: exactly once per operation). A producer that
// re-drives an operation (a new execution id, the same evidence) must not get it consumed twice by
// the same consumer; a consumer whose action failed says so, and may then consume it again.
import { afterEach, describe, expect, it } from 'vitest';
import { handoff, project, type Project } from '../causal/kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const OP = 'migrate_schema_17';
const C = 'deploy_api_18';

async function consumedOnce() {
  p = await project();
  p.write('db/schema.sql', 'create table a (id int);\n');
  const h1 = await p.id(handoff(OP, 'execution_001', 'success', '--evidence', 'schema=db/schema.sql'));
  const g = await p.gate(OP, '--consume-as', C);
  expect(g.code).toBe(0);
  expect(g.r.consume?.id).toBeTruthy();
  return { h1, consume: g.r.consume!.id!, consumeSeq: g.r.consume!.seq! };
}

describe('when a producer re-drives an operation already consumed (new execution, same evidence)', () => {
  it('the same consumer holds, naming the seq at which it consumed the operation', async () => {
    const { consume, consumeSeq } = await consumedOnce();
    const h2 = await p.id(handoff(OP, 'execution_002', 'success', '--evidence', 'schema=db/schema.sql', '--note', 're-driven after a timeout'));
    const before = p.snap();
    const g = await p.gate(OP, '--consume-as', C);
    expect(g.code).toBe(20);
    expect(g.r.handoff?.id).toBe(h2);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reasons.handoff_valid.join(' ')).toContain(`already consumed ${OP} at seq ${consumeSeq}`);
    expect(g.r.consumed_by).toEqual([consume]);
    expect(g.r.consume).toEqual({ consumer: C, id: null, seq: null });
    expect(p.snap()).toEqual(before);
    // Another consumer has not acted on it: it proceeds. The gate without a consumer proceeds too.
    expect((await p.gate(OP, '--consume-as', 'other_consumer')).code).toBe(0);
    expect((await p.gate(OP)).code).toBe(0);
  });

  it('a re-drive that lists the consumed handoff in --supersedes is still the same state', async () => {
    const { h1 } = await consumedOnce();
    await p.id(handoff(OP, 'execution_002', 'success', '--evidence', 'schema=db/schema.sql', '--supersedes', h1));
    expect((await p.gate(OP, '--consume-as', C)).code).toBe(20);
  });

  it('a later success with different evidence is new: the consumer may consume it', async () => {
    const { h1 } = await consumedOnce();
    p.write('db/schema.sql', 'create table a (id int, name text);\n');
    const h2 = await p.id(handoff(OP, 'execution_002', 'success', '--evidence', 'schema=db/schema.sql', '--supersedes', h1));
    const g = await p.gate(OP, '--consume-as', C);
    expect(g.code, g.r.reason).toBe(0);
    expect(g.r.handoff?.id).toBe(h2);
  });
});

describe('when the consumer\'s action failed after gate --consume-as', () => {
  it('consume-failed records it, and the consumer may consume the same handoff again', async () => {
    const { h1, consume } = await consumedOnce();
    expect((await p.gate(OP, '--consume-as', C)).code).toBe(20); // spent
    const r = await p.run(['consume-failed', OP, '--consumer', C, '--reason', 'helm upgrade exited 1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, existing: false, consume: { id: consume }, handoff: h1, consumer: C, logical_operation_id: OP });
    const rec = p.records().at(-1)!;
    // The agent is the one that consumed it (LEDGER_AGENT here, as for the gate).
    expect(rec).toMatchObject({ kind: 'consume_failed', agent: 'alice', consumer: C, consume, handoff: h1, reason: 'helm upgrade exited 1', logical_operation_id: OP });
    // The same report again: the existing record, nothing appended.
    const before = p.snap();
    const again = await p.run(['consume-failed', consume, '--consumer', C, '--reason', 'helm upgrade exited 1', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, existing: true, id: out.id });
    expect(p.snap()).toEqual(before);
    // Consumed again, and then spent again.
    const g = await p.gate(OP, '--consume-as', C);
    expect(g.code, g.r.reason).toBe(0);
    expect(g.r.handoff?.id).toBe(h1);
    expect((await p.gate(OP, '--consume-as', C)).code).toBe(20);
  });

  it('a re-drive of a handoff whose consumption failed may be consumed', async () => {
    const { h1 } = await consumedOnce();
    expect((await p.run(['consume-failed', h1, '--consumer', C, '--reason', 'deploy failed'])).code).toBe(0);
    await p.id(handoff(OP, 'execution_002', 'success', '--evidence', 'schema=db/schema.sql'));
    expect((await p.gate(OP, '--consume-as', C)).code).toBe(0);
  });

  it('another agent cannot report the consumer\'s failure, nor another consumer: refused, nothing written', async () => {
    const { consume } = await consumedOnce();
    const before = p.snap();
    const byOther = await p.run(['consume-failed', consume, '--consumer', C, '--reason', 'x', '--agent', 'mallory']);
    expect(byOther.code).toBe(2);
    expect(byOther.stderr).toContain('only the consumer that consumed it');
    const otherConsumer = await p.run(['consume-failed', consume, '--consumer', 'other_consumer', '--reason', 'x']);
    expect(otherConsumer.code).toBe(2);
    expect(otherConsumer.stderr).toContain('only the consumer that consumed it');
    expect(p.snap()).toEqual(before);
    expect((await p.gate(OP, '--consume-as', C)).code).toBe(20);
  });
});
