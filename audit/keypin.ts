// Layer 4, key-pin (SPEC 8, exit 13; SPEC 7): each key is pinned in the trust file, valid from
// its `valid_from_seq`, not revoked at that seq, and allowed to sign for that agent. The auditor
// never takes a key from the ledger it audits.
import { pinProblem, type Trust, type TrustKey } from '../src/keys/trust.js';
import type { AuditContext, Layer, LineView } from './context.js';

/**
 * The pin rules of SPEC 7 as a yes/no, with the trust file indexed by key once per run (the
 * per-record lookup is a Map hit, not a scan). Only a yes is taken from here; every no is
 * re-decided and worded by `pinProblem` in src/keys/trust.ts, and test/audit/keypin.test.ts holds the
 * property test that the two agree.
 */
export function pinIndex(trust: Trust): (key: string, seq: number, agent: string | null) => boolean {
  const byKey = new Map<string, TrustKey>();
  for (const k of trust.keys) if (!byKey.has(k.key)) byKey.set(k.key, k);
  return (key, seq, agent) => {
    const pin = byKey.get(key);
    if (pin === undefined) return false;
    if (seq < pin.valid_from_seq) return false;
    if (pin.revoked_at_seq !== null && seq >= pin.revoked_at_seq) return false;
    return agent === null || pin.agents.includes('*') || pin.agents.includes(agent);
  };
}

/** A stable code for a pin problem, from the same facts `pinProblem` words. */
function pinCode(trust: Trust, key: string, seq: number): string {
  const pin = trust.keys.find((k) => k.key === key);
  if (!pin) return 'PIN_UNPINNED';
  if (seq < pin.valid_from_seq) return 'PIN_NOT_YET_VALID';
  if (pin.revoked_at_seq !== null && seq >= pin.revoked_at_seq) return 'PIN_REVOKED';
  return 'PIN_AGENT';
}

export function keyPinLayer(ctx: AuditContext): Layer {
  const accepts = pinIndex(ctx.trust);
  // Policy: fail closed. A pin passes only on the indexed yes (held to `pinProblem` by the
  // property test); a no stays a no even if `pinProblem` found nothing to word it with.
  const problem = (key: string, seq: number, agent: string | null): string | null =>
    accepts(key, seq, agent) ? null : pinProblem(ctx.trust, key, seq, agent) ?? `key ${key} is not accepted for seq ${seq}`;

  return {
    name: 'key-pin',

    checkHead(sink) {
      const head = ctx.head!;
      // SPEC 7: HEAD's key must be pinned and not revoked at HEAD's seq; agents do not apply.
      const why = problem(head.sig.key, head.seq, null);
      if (why !== null) {
        sink.add({ layer: 'key-pin', code: pinCode(ctx.trust, head.sig.key, head.seq), seq: null, id: head.tail, expected: 'a key pinned for HEAD', actual: head.sig.key, reason: `HEAD: ${why}` });
      }
    },

    checkRecord(line: LineView, sink) {
      const r = line.record!;
      const why = problem(r.sig.key, r.seq, r.agent);
      if (why === null) return true;
      sink.add({ layer: 'key-pin', code: pinCode(ctx.trust, r.sig.key, r.seq), seq: line.pos, id: line.id, expected: `a key pinned for agent ${r.agent} at seq ${r.seq}`, actual: r.sig.key, reason: why });
      return false;
    },

    checkEnd() {
      // Nothing: each pin is checked at its own seq.
    },
  };
}
