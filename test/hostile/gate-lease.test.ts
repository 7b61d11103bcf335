// Issue 13 finding 5 (SPEC 9): while claude holds a live lease on work item `fix`, another
// agent's `append handoff --op fix` made `gate fix` proceed, though `resume` and the views still
// said "owned by claude". Only the owner's finish is terminal while the lease lasts: the writer
// refuses such a handoff, and the gate holds on one written around the writer.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { handoff, project, type Project } from '../causal/kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const SLUG = 'fix';
const start = (agent: string, lease = '60m') => ['start', SLUG, '--agent', agent, '--summary', 'fix the timezone bug', '--lease', lease];

describe('when another agent appends a handoff of a work item whose lease is live', () => {
  it('append refuses it (exit 2) naming the owner, and nothing is written', async () => {
    p = await project('claude');
    expect((await p.run(start('claude'))).code).toBe(0);
    const before = p.snap();
    const r = await p.run(handoff(SLUG, 'codex-1', 'success'), { env: { LEDGER_AGENT: 'codex' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('owned by claude');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(p.snap()).toEqual(before);
    // The owner's own handoff is its word.
    expect((await p.run(handoff(SLUG, 'claude-1', 'success'))).code).toBe(0);
  });

  it('the gate holds on such a handoff written around the writer, naming the owner', async () => {
    p = await project('claude');
    expect((await p.run(start('claude'))).code).toBe(0);
    // A writer of the format (the library's store, not the CLI's rules) at a time when the
    // lease was not yet checked: written directly under the lock with the same key.
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key'), now: () => new Date(Date.now() + 2 * 3_600_000) });
    ledger.append({ kind: 'handoff', agent: 'codex', logical_operation_id: SLUG, execution_id: 'codex-1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft);
    const g = await p.gate(SLUG);
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('handoff_valid');
    expect(g.r.reasons.handoff_valid.join(' ')).toMatch(/owned by claude .* live lease until .*a handoff by codex is not terminal/);
  });

  it('once the lease has lapsed, the handoff counts (the lease is judged at now)', async () => {
    p = await project('claude');
    expect((await p.run(start('claude', '1s'))).code).toBe(0);
    // Judged two hours later: the same records, a lapsed lease.
    const later = new Date(Date.now() + 2 * 3_600_000);
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key'), now: () => later });
    ledger.append({ kind: 'handoff', agent: 'codex', logical_operation_id: SLUG, execution_id: 'codex-1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft);
    const { readTrust } = await import('../../src/causal/gate-run.js');
    const r = Ledger.open({ dir: p.ledger }).gate(SLUG, { trust: readTrust(join(p.dir, 'keys/trust.json')), now: later.getTime() });
    expect(r.reasons.handoff_valid.join(' ')).not.toContain('owned by claude');
    expect(r.terms.handoff_valid).toBe(true);
  });
});
