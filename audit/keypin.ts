// Layer 4, key-pin (SPEC 8, exit 13; SPEC 7): each key is pinned in the trust file, valid from
// its `valid_from_seq`, not revoked at that seq, and allowed to sign for that agent. The auditor
// never takes a key from the ledger it audits: a key not pinned there passes only when an admin's
// `key` record authorized it (SPEC 7), folded here by the auditor's own code (keyrecords.ts).
import { pinProblem, type Trust, type TrustKey } from '../src/keys/trust.js';
import type { LedgerRecord } from '../src/record.js';
import { placementOf, type AuditContext, type Layer, type LineView } from './context.js';
import type { FindingCollector } from './findings.js';
import { foldKeyRecord, grantFault, keyRecordFault, tableFromFloor, type KeyTable } from './keyrecords.js';

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

/** A worker's key uses it could not decide alone: a key not pinned, by agent, lowest and highest seq. */
export interface DeferredKeys {
  /** Each `key` record of the segment (seq relative to the segment's first line). */
  records: { pos: number; id: string; record: LedgerRecord<'key'> }[];
  /** Records signed by keys the trust file does not pin: "key agent" -> [lowest pos, highest pos]. */
  uses: Record<string, [number, number]>;
}

/** The key-pin layer, with what a parallel audit needs to finish it on the main thread. */
export interface KeyPinLayer extends Layer {
  /** In a worker: what was left for the main thread. */
  deferred(): DeferredKeys;
  /**
   * On the main thread: folds a later segment's deferrals (positions already absolute). False
   * when they cannot be decided without the order of the records (a fault): the caller then
   * audits on one thread.
   */
  absorb(d: DeferredKeys): boolean;
  /** The table of keys records authorized, through the last record checked. */
  table(): KeyTable;
}

export function keyPinLayer(ctx: AuditContext): KeyPinLayer {
  const accepts = pinIndex(ctx.trust);
  const pins = new Map<string, TrustKey>();
  for (const k of ctx.trust.keys) if (!pins.has(k.key)) pins.set(k.key, k);
  // Policy: fail closed. A pin passes only on the indexed yes (held to `pinProblem` by the
  // property test); a no stays a no even if `pinProblem` found nothing to word it with.
  const problem = (key: string, seq: number, agent: string | null): string | null =>
    accepts(key, seq, agent) ? null : pinProblem(ctx.trust, key, seq, agent) ?? `key ${key} is not accepted for seq ${seq}`;
  // A worker's segment does not know the key records before it (ctx.before is 'deferred').
  const worker = ctx.before === 'deferred';
  let table: KeyTable | null = null;
  const tableNow = (): KeyTable => {
    // The floor carries the keys authorized at or below it (SPEC 7), when it holds.
    table ??= tableFromFloor(placementOf(ctx).kind === 'ok' ? ctx.floor : null);
    return table;
  };
  const deferred: DeferredKeys = { records: [], uses: {} };
  let headDeferred = false;

  const headFinding = (sink: FindingCollector, code: string, why: string) => {
    const head = ctx.head!;
    sink.add({ layer: 'key-pin', code, seq: null, id: head.tail, expected: 'a key pinned or authorized for HEAD', actual: head.sig.key, reason: `HEAD: ${why}` });
  };

  return {
    name: 'key-pin',

    checkHead(sink) {
      const head = ctx.head!;
      // SPEC 7: HEAD's key must be pinned and not revoked at HEAD's seq (agents do not apply),
      // or authorized by a key record and accepted at HEAD's seq: that is known at the end.
      if (!pins.has(head.sig.key)) {
        headDeferred = true;
        return;
      }
      const why = problem(head.sig.key, head.seq, null);
      if (why !== null) headFinding(sink, pinCode(ctx.trust, head.sig.key, head.seq), why);
    },

    checkRecord(line: LineView, sink) {
      const r = line.record!;
      const pos = line.pos;
      const fault = (code: string, expected: string, reason: string) => {
        sink.add({ layer: 'key-pin', code, seq: pos, id: line.id, expected, actual: r.sig.key, reason });
        return false;
      };
      if (pins.has(r.sig.key)) {
        const why = problem(r.sig.key, r.seq, r.agent);
        if (why !== null) return fault(pinCode(ctx.trust, r.sig.key, r.seq), `a key pinned for agent ${r.agent} at seq ${r.seq}`, why);
      } else if (worker) {
        const k = `${r.sig.key} ${r.agent}`;
        const u = deferred.uses[k];
        if (u === undefined) deferred.uses[k] = [pos, pos];
        else u[1] = pos;
      } else {
        const f = grantFault(tableNow(), r.sig.key, pos, r.agent);
        if (f !== null) return fault(f.code, `a key pinned or authorized for agent ${r.agent} at seq ${r.seq}`, f.reason);
      }
      if (r.kind === 'key') {
        const rec = r as LedgerRecord<'key'>;
        if (worker) {
          deferred.records.push({ pos, id: line.id!, record: rec });
          return true;
        }
        const f = keyRecordFault(pins, tableNow(), rec, pos);
        if (f !== null) return fault(f.code, 'a key record that counts (SPEC 7)', f.reason);
        foldKeyRecord(pins, tableNow(), rec, pos, line.id!);
      }
      return true;
    },

    checkEnd(sink) {
      if (!headDeferred || ctx.head === null) return;
      const f = grantFault(tableNow(), ctx.head.sig.key, ctx.head.seq, null);
      if (f !== null) headFinding(sink, f.code, f.reason);
    },

    deferred: () => deferred,

    absorb(d) {
      const t = tableNow();
      for (const k of d.records) {
        if (keyRecordFault(pins, t, k.record, k.pos) !== null) return false;
        foldKeyRecord(pins, t, k.record, k.pos, k.id);
      }
      // Each authorized key's acceptance is one interval, so the lowest and highest use decide.
      for (const [k, [lo, hi]] of Object.entries(d.uses)) {
        const [key, agent] = k.split(' ');
        if (grantFault(t, key, lo, agent) !== null || grantFault(t, key, hi, agent) !== null) return false;
      }
      return true;
    },

    table: tableNow,
  };
}
