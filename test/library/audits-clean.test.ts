// Everything the library writes audits clean. A random sequence of library calls (appends and
// retries of handoffs, intents and revocations, the kinds append refuses, the workflow with its
// ownership and leases, the gate with consumeAs, the clock moving on), many of them refused:
// every refused call leaves records.jsonl and HEAD byte-identical, and afterwards the auditor
// passes the whole ledger, on one thread and on two alike.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditLedger, LedgerError, type AuditReport, type Draft } from '../../src/index.js';
import { ROOT, snapshot } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';
import { handoff, intent, libraryProject, type LibraryProject } from './kit.js';

const ops = fc.constantFrom('migrate', 'deploy');
const execs = fc.constantFrom('e1', 'e2', 'e3');
const agents = fc.constantFrom('alice', 'bob');
const slugs = fc.constantFrom('fix-tz', 'docs');

type Call =
  | { c: 'handoff'; op: string; exec: string; outcome: string; agent: string }
  | { c: 'intent'; op: string; exec: string; action: string }
  | { c: 'revoke'; pick: number; reason: string }
  | { c: 'forbidden'; kind: 'genesis' | 'consume' | 'start' | 'checkpoint' | 'finish' }
  | { c: 'batch'; n: number; exec: string }
  | { c: 'start'; slug: string; agent: string; takeover: boolean; leaseMin: number }
  | { c: 'checkpoint'; slug: string; agent: string; tests: 'none' | 'text' | 'pass' | 'fail' }
  | { c: 'finish'; slug: string; agent: string; outcome: string }
  | { c: 'gate'; op: string; consumer: string | null }
  | { c: 'clock'; minutes: number };

const call: fc.Arbitrary<Call> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ c: fc.constant('handoff' as const), op: ops, exec: execs, outcome: fc.constantFrom('success', 'failure'), agent: fc.constantFrom('lib', 'lib', 'other') }) },
  { weight: 2, arbitrary: fc.record({ c: fc.constant('intent' as const), op: ops, exec: execs, action: fc.constantFrom('apply', 'roll back') }) },
  { weight: 2, arbitrary: fc.record({ c: fc.constant('revoke' as const), pick: fc.nat(), reason: fc.constantFrom('stale', 'wrong branch') }) },
  { weight: 1, arbitrary: fc.record({ c: fc.constant('forbidden' as const), kind: fc.constantFrom('genesis' as const, 'consume' as const, 'start' as const, 'checkpoint' as const, 'finish' as const) }) },
  { weight: 1, arbitrary: fc.record({ c: fc.constant('batch' as const), n: fc.integer({ min: 1, max: 4 }), exec: execs }) },
  { weight: 3, arbitrary: fc.record({ c: fc.constant('start' as const), slug: slugs, agent: agents, takeover: fc.boolean(), leaseMin: fc.constantFrom(5, 60) }) },
  { weight: 3, arbitrary: fc.record({ c: fc.constant('checkpoint' as const), slug: slugs, agent: agents, tests: fc.constantFrom('none' as const, 'text' as const, 'text' as const, 'pass' as const, 'fail' as const) }) },
  { weight: 2, arbitrary: fc.record({ c: fc.constant('finish' as const), slug: slugs, agent: agents, outcome: fc.constantFrom('success', 'failure') }) },
  { weight: 2, arbitrary: fc.record({ c: fc.constant('gate' as const), op: fc.constantFrom('migrate', 'deploy', 'fix-tz'), consumer: fc.constantFrom(null, 'ci', 'ci', 'prod') }) },
  { weight: 1, arbitrary: fc.record({ c: fc.constant('clock' as const), minutes: fc.constantFrom(1, 30, 90) }) },
);

function forbiddenDraft(p: LibraryProject, kind: 'genesis' | 'consume' | 'start' | 'checkpoint' | 'finish'): Draft {
  const work = { logical_operation_id: 'fix-tz', execution_id: 'alice-1' };
  const lease = new Date(p.clock.t + 3_600_000).toISOString();
  const checkpoint = { ...work, done: 'd', state: 's', next: 'n', verified: [], attempted: [], blockers: [] };
  switch (kind) {
    case 'genesis': return { kind, agent: 'lib', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' } as Draft;
    case 'consume': return { kind, agent: 'lib', logical_operation_id: 'migrate', consumer: 'ci', handoff: p.ledger.head().tail, seen_head: { seq: p.ledger.head().seq, tail: p.ledger.head().tail } } as Draft;
    case 'start': return { kind, agent: 'alice', ...work, summary: 'around the workflow', lease_until: lease } as Draft;
    case 'checkpoint': return { kind, agent: 'alice', ...checkpoint, lease_until: lease } as Draft;
    case 'finish': return { kind, agent: 'alice', ...checkpoint, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] } as Draft;
  }
}

/** One call; true when it wrote, false when it was refused or (the gate) held. */
async function perform(p: LibraryProject, k: Call): Promise<'wrote' | 'refused' | 'held'> {
  const l = p.ledger;
  const views = false as const;
  switch (k.c) {
    case 'handoff': l.append(handoff(k.op, k.exec, k.outcome, k.agent)); break;
    case 'intent': l.append(intent(k.op, k.exec, k.action)); break;
    case 'revoke': {
      const ids = [...l.records()].map((r) => r.id);
      l.append({ kind: 'revoke', agent: 'lib', target: ids[k.pick % ids.length], reason: k.reason } as Draft);
      break;
    }
    case 'forbidden': l.append(forbiddenDraft(p, k.kind)); break;
    case 'batch': l.append(Array.from({ length: k.n }, (_, i) => (i % 2 ? intent('deploy', `${k.exec}-${i}`) : handoff('deploy', `${k.exec}-${i}`)))); break;
    case 'start': await l.start({ slug: k.slug, agent: k.agent, summary: `take ${k.slug}`, takeover: k.takeover, leaseMs: k.leaseMin * 60_000, views }); break;
    case 'checkpoint': {
      const tests = k.tests === 'none' ? undefined : k.tests === 'text' ? { text: '3 pass' } : { command: k.tests === 'pass' ? 'echo ok' : 'echo no; exit 3' };
      await l.checkpoint({ slug: k.slug, agent: k.agent, done: 'a step', state: 'going', next: 'the next step', verified: ['parser'], tests, views });
      break;
    }
    case 'finish': await l.finish({ slug: k.slug, agent: k.agent, done: 'done', state: 'all of it', next: 'none', outcome: k.outcome as 'success', invariants: { tests: { ok: true, detail: '' } }, views }); break;
    case 'gate': {
      const r = l.gate(k.op, { trust: p.trust, ...(k.consumer ? { consumeAs: k.consumer } : {}) });
      return r.consume?.id ? 'wrote' : 'held';
    }
    case 'clock': p.clock.t += k.minutes * 60_000; return 'held';
  }
  return 'wrote';
}

const workerUrl = pathToFileURL(join(ROOT, 'dist/audit/worker.js'));
const view = (r: AuditReport) => ({ ok: r.ok, failed_layer: r.failed_layer, checked: r.checked, findings: r.findings, head: r.head, verdict: r.verdict });

describe('when the library is driven by a random sequence of calls, refused ones included', () => {
  it('every refused call changes nothing, and the ledger it leaves audits clean on one thread and two', async () => {
    const seen = { wrote: 0, refused: 0, held: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 4, maxLength: 16 }), async (calls) => {
        const p = libraryProject();
        try {
          for (const k of calls) {
            const before = snapshot(p.dir);
            let outcome: 'wrote' | 'refused' | 'held';
            try {
              outcome = await perform(p, k);
            } catch (e) {
              // Only a coded refusal is expected; anything else is a bug.
              if (!(e instanceof LedgerError) || e.exitCode !== 2) throw e;
              outcome = 'refused';
            }
            seen[outcome]++;
            if (outcome !== 'wrote') expect(snapshot(p.dir), `${JSON.stringify(k)} was ${outcome} but changed the ledger`).toEqual(before);
          }
          const opts = { dir: p.dir, trust: p.trust, now: p.clock.t };
          const one = await auditLedger({ ...opts, threads: 1 });
          expect(one.ok, one.verdict).toBe(true);
          expect(one.checked).toBe(p.ledger.head().seq + 1);
          const two = await auditLedger({ ...opts, threads: 2, minBytes: 0, workerUrl });
          expect(view(two)).toEqual(view(one));
        } finally {
          p.cleanup();
        }
      }),
      { numRuns: runs(20, 300) },
    );
    // The sequences reach both sides of the rules (the property is not vacuous).
    expect(seen.wrote).toBeGreaterThan(20);
    expect(seen.refused).toBeGreaterThan(20);
  });
});
