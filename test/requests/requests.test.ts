// One request per verb, checked once (issue 22): the checks of src/requests/ are the one set the
// CLI, the MCP server and a library caller go through, their messages name the flag, a checked
// request is not checked again (by identity), and the command line's flags reach it typed.
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import { checkOnce, isChecked } from '../../src/requests/checked.js';
import { checkGate, checkHandoff } from '../../src/requests/causal.js';
import { checkResume } from '../../src/requests/read.js';
import { checkCheckpoint, checkFinish, checkStart, type CheckpointRequest } from '../../src/requests/work.js';
import { all, bool, many, one, readFlags, text } from '../../src/cli/flags.js';

/** The refusal `f` throws: its code and its one-line message. */
function refusal(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (!(e instanceof LedgerError)) throw e;
    expect(e.message.split('\n')).toHaveLength(1);
    return { code: e.code, message: e.message };
  }
  throw new Error('expected a refusal');
}

const CP: CheckpointRequest = { slug: 'fix-tz', agent: 'claude', done: 'd', state: 's', next: 'n' };

describe('when a request is checked', () => {
  it('refuses each bad field with the flag that names it, as the command line does', () => {
    const rows: [() => unknown, string][] = [
      [() => checkStart({ slug: 'bad slug', agent: 'claude', summary: 's' }), 'SLUG must be 1-128 chars'],
      [() => checkStart({ slug: 'x', agent: undefined as never, summary: 's' }), '--agent is required'],
      [() => checkStart({ slug: 'x', agent: 'claude', summary: '  ' }), '--summary is empty'],
      [() => checkStart({ slug: 'x', agent: 'claude', summary: 's', lease: '40d' }), '--lease must be between 1ms and 30d, got "40d"'],
      [() => checkStart({ slug: 'x', agent: 'claude', summary: 's', leaseMs: 0 }), '--lease must be between 1ms and 30d, got "0ms"'],
      [() => checkStart({ slug: 'x', agent: 'claude', summary: 's', lease: 'soon' }), '--lease expects a duration like 90s'],
      [() => checkStart({ slug: 'x', agent: 'claude', summary: 's', force: true, reason: 'r' }), '--force applies only with --takeover'],
      [() => checkCheckpoint({ ...CP, next: ['a', 'b'] }), '--next was given 2 times'],
      [() => checkCheckpoint({ ...CP, verified: [''] }), '--verified is empty'],
      [() => checkCheckpoint({ ...CP, tests: { text: 'x', command: 'true' } as never }), '--tests and --tests-cmd both give test output'],
      [() => checkCheckpoint({ ...CP, tests: { text: 'x', timeout: '5m' } as never }), '--tests-timeout applies only with --tests-cmd'],
      [() => checkCheckpoint({ ...CP, tests: { command: 'true', timeout: '25d' } }), '--tests-timeout must be between 1ms and 24d, got "25d"'],
      [() => checkCheckpoint({ ...CP, evidence: { 'bad name': 'src' } }), '--evidence: name "bad name" must be 1-64 chars'],
      [() => checkFinish({ ...CP, outcome: 'done' as never }), '--outcome must be one of'],
      [() => checkFinish({ ...CP, invariants: { tests: { ok: true, detail: 'x'.repeat(4097) } } }), '--invariant tests: detail is over 4096 characters'],
      [() => checkFinish({ ...CP, depends_on: [{ logical_operation_id: 'no spaces', outcome: 'success' }] }), '--depends-on must be 1-128 chars'],
      [() => checkFinish({ ...CP, supersedes: ['not-an-id'] }), '--supersedes'],
      [() => checkFinish({ ...CP, note: 'x'.repeat(4097) }), '--note is 4097 characters; at most 4096'],
      [() => checkGate({ op: 'no spaces' }), 'OP must be a logical_operation_id'],
      [() => checkGate({ op: 'op', accept: ['success,done'] }), '--accept takes outcomes from'],
      [() => checkGate({ op: 'op', maxAge: '0s' }), '--max-age must be more than 0'],
      [() => checkHandoff({ agent: 'ci', op: undefined as never, exec: 'e', outcome: 'success' }), '--op is required'],
      [() => checkResume({ slug: 'x', agent: 'bad agent!' }), '--agent must be 1-64 chars'],
    ];
    for (const [f, says] of rows) expect(refusal(f).message, says).toContain(says);
  });

  it('refuses by the store\'s own schema what the flags cannot say: more invariants than a record holds, counting the one a test run adds', () => {
    const many256 = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`i${i}`, { ok: true, detail: '' }]));
    expect(() => checkFinish({ ...CP, invariants: many256 })).not.toThrow();
    expect(refusal(() => checkFinish({ ...CP, invariants: many256, tests: { command: 'true' } })).code).toBe('INPUT_SCHEMA');
  });

  it('returns the request as checked, frozen; the Ledger checks again only what its builder did not', () => {
    const req = checkCheckpoint({ ...CP, lease: '45m' });
    expect(isChecked(req)).toBe(true);
    expect(Object.isFrozen(req)).toBe(true);
    expect(req).toMatchObject({ leaseMs: 45 * 60_000, verified: [], evidence: {} });
    // By identity: the checked request is taken as it is; a copy is a new request, checked again.
    let checks = 0;
    const counting = (r: CheckpointRequest) => (checks++, checkCheckpoint(r));
    expect(checkOnce(req, counting)).toBe(req);
    expect(checks).toBe(0);
    expect(checkOnce({ ...req }, counting)).toEqual(req);
    expect(checks).toBe(1);
    expect(isChecked({ ...req })).toBe(false);
  });

  it('takes a duration as typed or in ms, and shows the refusal as it was given', () => {
    expect(checkStart({ slug: 'x', agent: 'a', summary: 's', lease: '90s' }).leaseMs).toBe(90_000);
    expect(checkStart({ slug: 'x', agent: 'a', summary: 's', leaseMs: 90_000 }).leaseMs).toBe(90_000);
    expect(refusal(() => checkStart({ slug: 'x', agent: 'a', summary: 's', lease: '90s', leaseMs: 1 })).message).toContain('--lease is given twice');
  });
});

describe('when the command line reads a verb\'s flags', () => {
  const set = { summary: text('<text>', ''), key: one('<file>', ''), evidence: many('<e>', ''), next: all('<text>', ''), force: bool('') };

  it('gives each flag its type: a value or undefined, a list, a switch', () => {
    expect(readFlags({}, set)).toEqual({ summary: undefined, key: undefined, evidence: [], next: [], force: false });
    expect(readFlags({ summary: '', key: 'k', evidence: ['a=b', 'c=d'], next: ['', 'n'], force: [true, false] }, set)).toEqual({ summary: '', key: 'k', evidence: ['a=b', 'c=d'], next: ['', 'n'], force: false });
  });

  it('refuses a one-value flag given twice, and an empty value where one is needed, naming the flag as typed', () => {
    expect(refusal(() => readFlags({ key: ['a', 'b'] }, set)).message).toBe('--key was given 2 times; it takes one value');
    expect(refusal(() => readFlags({ summary: ['a', 'b'] }, set)).message).toBe('--summary was given 2 times; it takes one value');
    expect(refusal(() => readFlags({ key: '' }, set)).message).toBe('--key needs a value');
    expect(refusal(() => readFlags({ evidence: ['a', ''] }, set)).message).toBe('--evidence needs a value');
    expect(refusal(() => readFlags({ testsCmd: ['a', 'b'] }, { testsCmd: one('<cmd>', '') })).message).toBe('--tests-cmd was given 2 times; it takes one value');
  });
});
