// The requests' checks (src/requests/) on any value of each field's type: a request is checked
// or refused with a coded LedgerError, never another exception (src/requests/README.md, Policy
// (types)); and a JavaScript caller's value that is not text, where text is read, is a USAGE
// refusal too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import * as W from '../../src/requests/work.js';
import * as C from '../../src/requests/causal.js';
import * as R from '../../src/requests/read.js';
import * as F from '../../src/requests/fields.js';
import { runs } from '../helpers/runs.js';

const hostile = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('fix-tz', 'claude', 'success', 'timeout', 'failure', '10m', '0s', '25d', '1e400m', 'file:src/a.ts', 'dir:src', 'git:HEAD', 'sha256:' + 'a'.repeat(64)),
  fc.constantFrom('', ' ', '\u202e', '-1', 'NaN', 'a,b', 'success,failure', '3', 'HEAD', 'HEAD~1', 'abcdef12', 'x'.repeat(5000)),
);
const list = fc.array(hostile, { maxLength: 4 });
const num = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 53, Number.MAX_SAFE_INTEGER, 1e300));
const inv = fc.dictionary(hostile, fc.record({ ok: fc.boolean(), detail: hostile }, { requiredKeys: ['ok'] }), { maxKeys: 3 });
const ev = fc.dictionary(hostile, hostile, { maxKeys: 3 });
const TYPED: Record<string, fc.Arbitrary<unknown>> = {};
for (const f of 'slug agent summary lease reason done state note op consumer consumeAs text target action exec floorPath trustPath maxAge supersedes cwd kind'.split(' ')) TYPED[f] = hostile;
for (const f of 'verified attempted blockers depends_on requireInvariants accept'.split(' ')) TYPED[f] = list;
for (const f of 'leaseMs maxAgeMs limit now'.split(' ')) TYPED[f] = num;
for (const f of 'takeover force allowOpaque newItem adoptViews'.split(' ')) TYPED[f] = fc.boolean();
TYPED.next = fc.oneof(hostile, list);
TYPED.invariants = inv;
TYPED.evidence = ev;
TYPED.tests = fc.oneof(fc.record({ text: hostile }), fc.record({ command: hostile, timeout: hostile }, { requiredKeys: ['command'] }));
TYPED.expectHandoff = fc.oneof(hostile, fc.constant(null));
const req = fc.record(Object.fromEntries(Object.entries(TYPED).map(([k, a]) => [k, a])), { requiredKeys: [] }).map((r) => ({ slug: 'fix-tz', agent: 'claude', op: 'fix-tz', ...r }));
// What each check is given: the fields of every verb's request (src/requests/), each of its type,
// most of them text that is hostile, empty, huge or a near miss of a valid value.
const fns: Record<string, (r: any) => unknown> = {
  start: W.checkStart, checkpoint: W.checkCheckpoint, finish: W.checkFinish, release: W.checkRelease, note: W.checkNote,
  gate: C.checkGate, revoke: C.checkRevoke, handoff: C.checkHandoff, intent: C.checkIntent, consumeFailed: C.checkConsumeFailed,
  status: R.checkStatus, resume: R.checkResume, log: R.checkLog,
  evidence: (r) => W.checkEvidence('finish', r.evidence ?? r), tests: (r) => W.checkTestsCommand(r.tests ?? r.slug),
  duration: (r) => F.parseDuration(String(r.lease ?? r.slug ?? ''), 'lease'),
  span: (r) => F.checkSpan({ text: r.lease, ms: r.leaseMs }, 'lease', 86_400_000, '24h'),
  items: (r) => F.checkItems(r.verified, 'verified'), outcome: (r) => F.checkOutcome(r.outcome),
};
describe('when a request holds any value of the right type', () => {
  for (const [name, fn] of Object.entries(fns)) {
    it(`property: ${name}: it is checked, or refused with a coded LedgerError`, () => {
      fc.assert(
        fc.property(req, (r) => {
          try {
            fn(r);
          } catch (e) {
            if (!(e instanceof LedgerError)) throw new Error(`${name} threw ${(e as Error)?.constructor?.name}: ${(e as Error)?.message} on ${JSON.stringify(r).slice(0, 400)}`);
            expect(e.code).toMatch(/^[A-Z_]+$/);
          }
        }),
        { numRuns: runs(200, 20_000) },
      );
    });
  }
});

describe('when a JavaScript caller passes a value that is not text where text is read', () => {
  it('is refused with USAGE, not a TypeError', () => {
    expect(() => C.checkIntent({ agent: 'claude', op: 'fix-tz', exec: 'e1', action: 0 } as never)).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => C.checkGate({ op: 'fix-tz', accept: {} } as never)).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect(() => F.checkLength(7 as never, 'note', 10)).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});
