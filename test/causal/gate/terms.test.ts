// The gate's five terms from tables (issue 12): each term is a pure function over a GateInputs
// built here in code, with no project and no ledger on disk. The tests that run the gate against
// a real ledger are in test/causal/gate-terms.test.ts and test/causal/failure-modes.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateGate, judgeTerm, TERMS, type GateInputs, type HandoffFacts, type Term } from '../../../src/causal/gate/index.js';
import type { EvidenceCheck } from '../../../src/causal/evidence.js';
import { OUTCOMES, type Outcome } from '../../../src/record.js';
import { runs } from '../../helpers/runs.js';

const id = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const NOW = Date.parse('2026-11-29T17:00:00.000Z');
const TEN_MINUTES_AGO = new Date(NOW - 600_000).toISOString();

const currentCheck = (name: string): EvidenceCheck => ({ name, source: `file:${name}.txt`, recorded: id(90), actual: id(90), current: true, reason: `file:${name}.txt is unchanged` });

/** A handoff on which every term holds: one invariant, one piece of evidence, one dependency. */
function passing(): GateInputs {
  return {
    op: 'migrate',
    head: { seq: 9, tail: id(9) },
    chain: { ok: true, reason: 'the chain audits clean through HEAD seq 9' },
    now: NOW,
    options: { accept: ['success'], requireInvariants: ['tests'], maxAgeMs: 3_600_000, consumer: null },
    opRecords: 2,
    latest: {
      ref: { id: id(5), seq: 5, kind: 'handoff', execution_id: 'e2', outcome: 'success', agent: 'alice', ts: TEN_MINUTES_AGO },
      invariants: { tests: { ok: true, detail: '12 passed' } },
      revocations: [],
      named: null,
      consumptions: [],
      redrives: [],
      leaseHolds: [],
      conflicts: [],
      evidence: [currentCheck('schema')],
      reopenings: [],
      dependencies: [{ logical_operation_id: 'build', outcome: 'success', ok: true, failed_term: null, reason: 'holds' }],
    },
    problems: [],
  };
}

/** The passing inputs with one change. */
function given(change: (i: GateInputs & { latest: HandoffFacts }) => void): GateInputs {
  const i = passing();
  change(i as GateInputs & { latest: HandoffFacts });
  return i;
}
const noHandoff = (opRecords = 0) => given((i) => Object.assign(i, { latest: null, opRecords }));
/** Drops a collected field, as a caller that built the inputs by hand might. */
const without = (field: keyof HandoffFacts) => given((i) => delete (i.latest as Partial<HandoffFacts>)[field]);

interface Case { name: string; term: Term; inputs: GateInputs; ok: boolean; reason: RegExp }

const CASES: Case[] = [
  // 1. handoff valid
  { name: 'when the chain audits clean and the handoff is neither revoked nor spent', term: 'handoff_valid', inputs: passing(), ok: true, reason: /^the chain audits clean through HEAD seq 9; handoff sha256:000000000000… \(seq 5, e2\) verifies and is not revoked$/ },
  { name: 'when the chain does not audit clean', term: 'handoff_valid', inputs: given((i) => (i.chain = { ok: false, reason: 'the chain does not audit clean: linkage fails at seq 4' })), ok: false, reason: /^the chain does not audit clean: linkage fails at seq 4$/ },
  { name: 'when the operation has no handoff', term: 'handoff_valid', inputs: noHandoff(), ok: false, reason: /^migrate has no handoff$/ },
  { name: 'when the operation has only start and intent records', term: 'handoff_valid', inputs: noHandoff(2), ok: false, reason: /^migrate has no handoff \(only 2 start\/intent records: see `ledger pending`\)$/ },
  { name: 'when the latest handoff is revoked', term: 'handoff_valid', inputs: given((i) => i.latest.revocations.push({ id: id(7), seq: 7, reason: 'bad build' })), ok: false, reason: /^handoff sha256:000000000000… \(seq 5\) was revoked by sha256:000000000000… \(seq 7\): bad build$/ },
  { name: 'when --handoff names an earlier, superseded handoff', term: 'handoff_valid', inputs: given((i) => (i.latest.named = { id: id(3), seq: 3 })), ok: false, reason: /^the handoff named by --handoff \(seq 3\) is superseded: the latest handoff of migrate is sha256:000000000000… \(seq 5, e2\)$/ },
  { name: 'when --handoff names a record that is no handoff of the operation', term: 'handoff_valid', inputs: given((i) => (i.latest.named = { id: id(8), seq: null })), ok: false, reason: /^the handoff named by --handoff \(sha256:000000000000…\) is not a handoff of migrate$/ },
  { name: 'when --handoff names the latest handoff', term: 'handoff_valid', inputs: given((i) => (i.latest.named = { id: id(5), seq: 5 })), ok: true, reason: /verifies and is not revoked$/ },
  { name: 'when the consumer already consumed the handoff', term: 'handoff_valid', inputs: given((i) => { i.options.consumer = 'deployer'; i.latest.consumptions.push({ id: id(6), seq: 6 }); }), ok: false, reason: /^deployer already consumed handoff sha256:000000000000… at seq 6 \(sha256:000000000000…\): duplicate delivery$/ },
  { name: 'when the consumer already consumed an identical re-drive of it (same evidence)', term: 'handoff_valid', inputs: given((i) => { i.options.consumer = 'deployer'; i.latest.redrives.push({ consume: id(6), seq: 6, handoff: id(3), handoff_seq: 3 }); }), ok: false, reason: /^deployer already consumed migrate at seq 6 \(sha256:000000000000…, handoff seq 3\); handoff sha256:000000000000… \(seq 5, e2\) is a re-drive with the same evidence: exactly once per operation$/ },
  { name: 'when another agent holds a live lease on the work item', term: 'handoff_valid', inputs: given((i) => i.latest.leaseHolds.push({ owner: 'claude', execution_id: 'claude-1', lease_until: '2026-11-29T18:00:00.000Z', agent: 'alice' })), ok: false, reason: /^migrate is a work item owned by claude \(execution claude-1\) with a live lease until 2026-11-29T18:00:00.000Z: a handoff by alice is not terminal while it lasts$/ },
  { name: 'when a record the decision relies on failed verification', term: 'handoff_valid', inputs: given((i) => i.problems.push('the record at seq 4 has a signature that does not verify')), ok: false, reason: /^the record at seq 4 has a signature that does not verify$/ },
  { name: 'when the revocations were not collected', term: 'handoff_valid', inputs: without('revocations'), ok: false, reason: /^handoff_valid could not be evaluated: / },
  { name: 'when the chain verdict is not a clear pass', term: 'handoff_valid', inputs: given((i) => (i.chain = { ok: 'yes' as unknown as boolean, reason: 'unsure' })), ok: false, reason: /^unsure$/ },

  // 2. outcome accepted
  { name: 'when the latest outcome is the default success', term: 'outcome_accepted', inputs: passing(), ok: true, reason: /^the latest outcome of migrate is success \(e2, seq 5\), accepted$/ },
  { name: 'when the latest outcome is not accepted', term: 'outcome_accepted', inputs: given((i) => (i.latest.ref.outcome = 'cancelled')), ok: false, reason: /^the latest outcome of migrate is cancelled \(e2, seq 5\); accepted: success$/ },
  { name: 'when --accept widens what passes', term: 'outcome_accepted', inputs: given((i) => { i.latest.ref.outcome = 'cancelled'; i.options.accept = ['success', 'cancelled']; }), ok: true, reason: /is cancelled \(e2, seq 5\), accepted$/ },
  { name: 'when two executions left conflicting successful states', term: 'outcome_accepted', inputs: given((i) => i.latest.conflicts.push({ a: id(2), b: id(5), a_execution: 'e1', b_execution: 'e2' })), ok: false, reason: /^conflicting successors: e1 \(sha256:000000000000…\) and e2 \(sha256:000000000000…\) left different successful evidence and neither supersedes the other$/ },
  { name: 'when the operation has no handoff (outcome)', term: 'outcome_accepted', inputs: noHandoff(), ok: false, reason: /^no handoff to check$/ },
  { name: 'when the outcome was not collected', term: 'outcome_accepted', inputs: given((i) => delete (i.latest.ref as { outcome?: Outcome }).outcome), ok: false, reason: /^the latest outcome of migrate is undefined/ },
  { name: 'when the conflicts were not collected', term: 'outcome_accepted', inputs: without('conflicts'), ok: false, reason: /^outcome_accepted could not be evaluated: / },

  // 3. invariants satisfied
  { name: 'when every invariant is ok and the required one is present', term: 'invariants_satisfied', inputs: passing(), ok: true, reason: /^all 1 invariant ok, required ones present$/ },
  { name: 'when no invariant is recorded and none is required', term: 'invariants_satisfied', inputs: given((i) => { i.latest.invariants = {}; i.options.requireInvariants = []; }), ok: true, reason: /^no invariants recorded, none required$/ },
  { name: 'when an invariant is not ok, with its detail', term: 'invariants_satisfied', inputs: given((i) => (i.latest.invariants.lint = { ok: false, detail: '3 warnings' })), ok: false, reason: /^invariant lint is not ok: 3 warnings$/ },
  { name: 'when an invariant is not ok, without detail', term: 'invariants_satisfied', inputs: given((i) => (i.latest.invariants.lint = { ok: false, detail: '' })), ok: false, reason: /^invariant lint is not ok$/ },
  { name: 'when a required invariant is missing', term: 'invariants_satisfied', inputs: given((i) => (i.options.requireInvariants = ['tests', 'coverage'])), ok: false, reason: /^required invariant coverage is missing from the handoff$/ },
  { name: 'when an invariant says ok in something other than true', term: 'invariants_satisfied', inputs: given((i) => (i.latest.invariants.tests = { ok: 1 as unknown as boolean, detail: '' })), ok: false, reason: /^invariant tests is not ok$/ },
  { name: 'when the operation has no handoff (invariants)', term: 'invariants_satisfied', inputs: noHandoff(), ok: false, reason: /^no handoff to check$/ },
  { name: 'when the invariants were not collected', term: 'invariants_satisfied', inputs: without('invariants'), ok: false, reason: /^invariants_satisfied could not be evaluated: / },

  // 4. state current
  { name: 'when the evidence matches, nothing reopened it and it is young enough', term: 'state_current', inputs: passing(), ok: true, reason: /^1 evidence digest matches now; not reopened since seq 5; 10m old, within --max-age$/ },
  { name: 'when no evidence is recorded and no --max-age is given', term: 'state_current', inputs: given((i) => { i.latest.evidence = []; i.options.maxAgeMs = null; }), ok: true, reason: /^no evidence recorded \(nothing to re-check\); not reopened since seq 5$/ },
  { name: 'when a piece of evidence has changed', term: 'state_current', inputs: given((i) => i.latest.evidence.push({ ...currentCheck('out'), current: false, reason: 'dir:out has changed' })), ok: false, reason: /^evidence out: dir:out has changed$/ },
  { name: 'when a later start reopened the operation', term: 'state_current', inputs: given((i) => i.latest.reopenings.push({ id: id(8), seq: 8, kind: 'start', execution_id: 'e3' })), ok: false, reason: /^migrate was reopened after its handoff: start of e3 at seq 8 \(sha256:000000000000…\)$/ },
  { name: 'when a later intent reopened the operation', term: 'state_current', inputs: given((i) => i.latest.reopenings.push({ id: id(8), seq: 8, kind: 'intent', execution_id: 'e3' })), ok: false, reason: /^migrate was reopened after its handoff: intent of e3/ },
  { name: 'when the handoff is older than --max-age', term: 'state_current', inputs: given((i) => (i.options.maxAgeMs = 300_000)), ok: false, reason: /^the handoff is 10m old \(written 2026-11-29T16:50:00.000Z\); --max-age is 5m$/ },
  { name: 'when the handoff is exactly --max-age old', term: 'state_current', inputs: given((i) => (i.options.maxAgeMs = 600_000)), ok: true, reason: /10m old, within --max-age$/ },
  { name: 'when the age of the handoff cannot be computed', term: 'state_current', inputs: given((i) => (i.now = Number.NaN)), ok: false, reason: /^the age of the handoff \(written 2026-11-29T16:50:00.000Z\) cannot be computed at NaN$/ },
  { name: 'when --max-age is not a duration', term: 'state_current', inputs: given((i) => (i.options.maxAgeMs = -1)), ok: false, reason: /^--max-age -1 is not a duration$/ },
  { name: 'when an evidence check does not say current', term: 'state_current', inputs: given((i) => (i.latest.evidence[0] = { ...currentCheck('schema'), current: undefined as unknown as boolean })), ok: false, reason: /^evidence schema: / },
  { name: 'when the operation has no handoff (state)', term: 'state_current', inputs: noHandoff(), ok: false, reason: /^no handoff to check$/ },
  { name: 'when the evidence was not re-digested', term: 'state_current', inputs: without('evidence'), ok: false, reason: /^state_current could not be evaluated: / },
  { name: 'when the reopenings were not collected', term: 'state_current', inputs: without('reopenings'), ok: false, reason: /^state_current could not be evaluated: / },

  // 5. dependency conditions true
  { name: 'when its one dependency holds', term: 'dependencies_true', inputs: passing(), ok: true, reason: /^its one dependency holds$/ },
  { name: 'when it has no dependencies', term: 'dependencies_true', inputs: given((i) => (i.latest.dependencies = [])), ok: true, reason: /^no dependencies$/ },
  { name: 'when all of several dependencies hold', term: 'dependencies_true', inputs: given((i) => i.latest.dependencies.push({ logical_operation_id: 'test', outcome: 'failure', ok: true, failed_term: null, reason: 'holds' })), ok: true, reason: /^all 2 dependencies hold$/ },
  { name: 'when a dependency does not hold', term: 'dependencies_true', inputs: given((i) => (i.latest.dependencies[0] = { logical_operation_id: 'build', outcome: 'success', ok: false, failed_term: 'handoff_valid', reason: 'handoff_valid: build has no handoff' })), ok: false, reason: /^build:success does not hold: handoff_valid: build has no handoff$/ },
  { name: 'when the dependencies form a cycle', term: 'dependencies_true', inputs: given((i) => (i.latest.dependencies[0] = { logical_operation_id: 'a', outcome: 'success', ok: false, failed_term: 'dependencies_true', reason: 'dependency cycle: a -> b -> a' })), ok: false, reason: /^a:success does not hold: dependency cycle: a -> b -> a$/ },
  { name: 'when the dependencies nest too deep', term: 'dependencies_true', inputs: given((i) => (i.latest.dependencies[0] = { logical_operation_id: 'd33', outcome: 'success', ok: false, failed_term: 'dependencies_true', reason: 'dependencies nest deeper than 32 (d0 -> ...)' })), ok: false, reason: /does not hold: dependencies nest deeper than 32/ },
  { name: 'when a dependency result does not say ok', term: 'dependencies_true', inputs: given((i) => (i.latest.dependencies[0] = { ...i.latest.dependencies[0], ok: undefined as unknown as boolean, reason: 'not decided' })), ok: false, reason: /^build:success does not hold: not decided$/ },
  { name: 'when the operation has no handoff (dependencies)', term: 'dependencies_true', inputs: noHandoff(), ok: false, reason: /^no handoff to check$/ },
  { name: 'when the dependencies were not collected', term: 'dependencies_true', inputs: without('dependencies'), ok: false, reason: /^dependencies_true could not be evaluated: / },
];

const termNamed = (name: Term) => TERMS.find((t) => t.name === name)!;

describe('each term from a table of inputs built in code', () => {
  it.each(CASES.map((c) => [`${c.term}, ${c.name}`, c] as const))('%s', (_, { term, inputs, ok, reason }) => {
    const v = judgeTerm(termNamed(term), inputs);
    expect(v.ok).toBe(ok);
    expect(v.reasons.length).toBeGreaterThan(0);
    expect(v.reasons.some((r) => reason.test(r)), `reasons: ${JSON.stringify(v.reasons)}`).toBe(true);
    // The gate reports the same verdict for that term.
    const g = evaluateGate(inputs);
    expect(g.terms[term]).toBe(ok);
    expect(g.reasons[term]).toEqual(v.reasons);
  });

  it('covers every term with at least five cases, failing and passing', () => {
    for (const { name } of TERMS) {
      const mine = CASES.filter((c) => c.term === name);
      expect(mine.length, name).toBeGreaterThanOrEqual(5);
      expect(mine.some((c) => c.ok) && mine.some((c) => !c.ok), name).toBe(true);
    }
  });
});

describe('when a term fails closed', () => {
  it('a term that throws is false with the error as its reason', () => {
    const v = judgeTerm({ name: 'state_current', check: () => { throw new Error('boom'); } }, passing());
    expect(v).toEqual({ ok: false, reasons: ['state_current could not be evaluated: boom'] });
  });

  it('a term that answers true without a reason is false', () => {
    expect(judgeTerm({ name: 'state_current', check: () => ({ ok: true, reasons: [] }) }, passing())).toEqual({ ok: false, reasons: ['state_current gave no verdict with a reason'] });
  });
});

describe('the list of terms', () => {
  it('is SPEC 9\'s, in its order', () => {
    expect(TERMS.map((t) => t.name)).toEqual(['handoff_valid', 'outcome_accepted', 'invariants_satisfied', 'state_current', 'dependencies_true']);
  });

  it('is the order of the result\'s terms and reasons (the --json object)', () => {
    const g = evaluateGate(passing());
    expect(Object.keys(g.terms)).toEqual(TERMS.map((t) => t.name));
    expect(Object.keys(g.reasons)).toEqual(TERMS.map((t) => t.name));
  });
});

describe('evaluateGate', () => {
  it('proceeds when every term holds, naming the handoff', () => {
    const g = evaluateGate(passing());
    expect(g).toMatchObject({ ok: true, failed_term: null, reason: 'all five terms hold for migrate: handoff sha256:000000000000… (seq 5, e2, success)' });
    expect(g.handoff).toEqual(passing().latest!.ref);
  });

  it('reports the first false term as failed_term, and still evaluates the later ones', () => {
    const i = given((x) => {
      x.latest.ref.outcome = 'failure';
      x.latest.invariants.lint = { ok: false, detail: '' };
      x.latest.reopenings.push({ id: id(8), seq: 8, kind: 'intent', execution_id: 'e3' });
    });
    const g = evaluateGate(i);
    expect(g.failed_term).toBe('outcome_accepted');
    expect(g.terms).toEqual({ handoff_valid: true, outcome_accepted: false, invariants_satisfied: false, state_current: false, dependencies_true: true });
    expect(g.reason).toBe('outcome_accepted: the latest outcome of migrate is failure (e2, seq 5); accepted: success');
    expect(g.reopened_by).toEqual([id(8)]);
  });

  it('with no handoff, holds on handoff_valid with every term false', () => {
    const g = evaluateGate(noHandoff(1));
    expect(g.failed_term).toBe('handoff_valid');
    expect(Object.values(g.terms)).toEqual([false, false, false, false, false]);
    expect(g.handoff).toBeNull();
    expect(g.reason).toBe('handoff_valid: migrate has no handoff (only 1 start/intent record: see `ledger pending`)');
  });

  it('lists what the terms found: revocations, consumptions, evidence, dependencies', () => {
    const g = evaluateGate(given((i) => {
      i.latest.revocations.push({ id: id(7), seq: 7, reason: 'r' });
      i.latest.consumptions.push({ id: id(6), seq: 6 });
    }));
    expect(g).toMatchObject({ revoked_by: [id(7)], consumed_by: [id(6)], evidence: passing().latest!.evidence, dependencies: passing().latest!.dependencies, conflicts: [] });
  });
});

// Random inputs: the gate's answer is the conjunction of its terms, and each term is what SPEC 9
// says it is (a second, plain statement of each rule).
const anId = fc.integer({ min: 1, max: 6 }).map(id);
const arbFacts: fc.Arbitrary<HandoffFacts> = fc.record({
  ref: fc.record({ id: anId, seq: fc.nat(20), kind: fc.constantFrom('handoff' as const, 'finish' as const), execution_id: fc.constantFrom('e1', 'e2'), outcome: fc.constantFrom(...OUTCOMES), agent: fc.constant('alice'), ts: fc.integer({ min: -7_200_000, max: 60_000 }).map((d) => new Date(NOW + d).toISOString()) }),
  invariants: fc.dictionary(fc.constantFrom('tests', 'lint', 'cov'), fc.record({ ok: fc.boolean(), detail: fc.constantFrom('', 'why') })),
  revocations: fc.array(fc.record({ id: anId, seq: fc.nat(20), reason: fc.constant('r') }), { maxLength: 2 }),
  named: fc.option(fc.record({ id: anId, seq: fc.option(fc.nat(20)) })),
  consumptions: fc.array(fc.record({ id: anId, seq: fc.nat(20) }), { maxLength: 1 }),
  redrives: fc.array(fc.record({ consume: anId, seq: fc.nat(20), handoff: anId, handoff_seq: fc.nat(20) }), { maxLength: 1 }),
  leaseHolds: fc.array(fc.record({ owner: fc.constant('claude'), execution_id: fc.constant('claude-1'), lease_until: fc.constant(new Date(NOW + 60_000).toISOString()), agent: fc.constant('alice') }), { maxLength: 1 }),
  conflicts: fc.array(fc.record({ a: anId, b: anId, a_execution: fc.constant('e1'), b_execution: fc.constant('e2') }), { maxLength: 1 }),
  evidence: fc.array(fc.boolean().map((current) => ({ ...currentCheck('x'), current })), { maxLength: 3 }),
  reopenings: fc.array(fc.record({ id: anId, seq: fc.nat(20), kind: fc.constantFrom('start' as const, 'intent' as const), execution_id: fc.constant('e3') }), { maxLength: 1 }),
  dependencies: fc.array(fc.boolean().map((ok) => ({ logical_operation_id: 'dep', outcome: 'success' as const, ok, failed_term: ok ? null : ('handoff_valid' as const), reason: ok ? 'holds' : 'handoff_valid: no' })), { maxLength: 3 }),
});
const arbInputs: fc.Arbitrary<GateInputs> = fc.record({
  op: fc.constant('op'),
  head: fc.constant({ seq: 20, tail: id(20) }),
  chain: fc.boolean().map((ok) => ({ ok, reason: ok ? 'clean' : 'not clean' })),
  now: fc.constant(NOW),
  options: fc.record({
    accept: fc.subarray([...OUTCOMES], { minLength: 1 }),
    requireInvariants: fc.subarray(['tests', 'lint', 'cov']),
    maxAgeMs: fc.option(fc.integer({ min: 0, max: 7_200_000 })),
    consumer: fc.option(fc.constant('deployer')),
  }),
  opRecords: fc.nat(3),
  latest: fc.option(arbFacts, { freq: 4 }),
  problems: fc.array(fc.constant('a record failed verification'), { maxLength: 1 }),
});

/** SPEC 9's rules, stated again plainly, term by term. */
function expected(i: GateInputs): Record<Term, boolean> {
  const h = i.latest;
  if (h === null) return { handoff_valid: false, outcome_accepted: false, invariants_satisfied: false, state_current: false, dependencies_true: false };
  return {
    handoff_valid: i.chain.ok && h.revocations.length === 0 && (h.named === null || h.named.id === h.ref.id) && h.consumptions.length === 0 && h.redrives.length === 0 && h.leaseHolds.length === 0 && i.problems.length === 0,
    outcome_accepted: i.options.accept.includes(h.ref.outcome) && h.conflicts.length === 0,
    invariants_satisfied: Object.values(h.invariants).every((v) => v.ok) && i.options.requireInvariants.every((n) => n in h.invariants),
    state_current: h.evidence.every((e) => e.current) && h.reopenings.length === 0 && (i.options.maxAgeMs === null || i.now - Date.parse(h.ref.ts) <= i.options.maxAgeMs),
    dependencies_true: h.dependencies.every((d) => d.ok),
  };
}

describe('over random inputs', () => {
  it('ok is true exactly when every term is, and failed_term is the first false term in order', () => {
    fc.assert(fc.property(arbInputs, (i) => {
      const g = evaluateGate(i);
      const values = TERMS.map((t) => g.terms[t.name]);
      expect(g.ok).toBe(values.every(Boolean));
      expect(g.failed_term).toBe(TERMS.find((t) => !g.terms[t.name])?.name ?? null);
      expect(g.terms).toEqual(expected(i));
      if (!g.ok) expect(g.reason).toBe(`${g.failed_term}: ${g.reasons[g.failed_term!][0]}`);
      for (const t of TERMS) expect(g.reasons[t.name].length).toBeGreaterThan(0);
    }), { numRuns: runs(500, 20_000) });
  });

  it('a collected list that is missing makes the term that reads it false, never true', () => {
    const reader: Partial<Record<keyof HandoffFacts, Term>> = { revocations: 'handoff_valid', named: 'handoff_valid', consumptions: 'handoff_valid', redrives: 'handoff_valid', leaseHolds: 'handoff_valid', conflicts: 'outcome_accepted', invariants: 'invariants_satisfied', evidence: 'state_current', reopenings: 'state_current', dependencies: 'dependencies_true' };
    const field = fc.constantFrom(...(Object.keys(reader) as (keyof HandoffFacts)[]));
    fc.assert(fc.property(arbInputs, arbFacts, field, (i, facts, f) => {
      delete (facts as Partial<HandoffFacts>)[f];
      const g = evaluateGate({ ...i, latest: facts });
      expect(g.terms[reader[f]!]).toBe(false);
      expect(g.ok).toBe(false);
    }), { numRuns: runs(300, 10_000) });
  });
});
