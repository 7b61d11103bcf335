// The causal verbs' implementation: gate (with --consume-as), revoke, consume-failed, pending.
// Declared in causal.ts. Each verb's flags become its request (../../requests/causal.ts), checked
// before anything is read or written, and the Ledger runs it.
import { resolve } from 'node:path';
import { EXIT } from '../../errors.js';
import { Ledger, formatGateText, formatPendingText } from '../../index.js';
import { checkConsumeFailed, checkGate, checkOp, checkRevoke } from '../../requests/causal.js';
import type { Flags } from '../flags.js';
import { agentOf, emit, ledgerDir, trustPath, type CliIO, type Global } from './common.js';
import type { CONSUME_FAILED, GATE, REVOKE } from './causal.js';
import { NETWORK_BUDGET_MS, assertWitnessed, currentRead, witnessRule, writerOptions } from './remote-opts.js';

export async function runGate(io: CliIO, op: string | undefined, f: Flags<ReturnType<typeof GATE>> & Global): Promise<number> {
  // Everything the command line says is checked before anything is read or written; a seq, HEAD
  // or prefix given to --handoff names one record when the gate runs, a full id as typed.
  const req = checkGate({
    op: op as string,
    accept: f.accept,
    requireInvariants: f.requireInvariant,
    ...(f.maxAge !== undefined ? { maxAge: f.maxAge } : {}),
    floorPath: f.floor === undefined ? null : resolve(io.cwd, f.floor),
    ...(f.consumeAs !== undefined ? { consumeAs: f.consumeAs } : {}),
    ...(agentOf(io, f) !== undefined ? { agent: agentOf(io, f) } : {}),
    expectHandoff: f.handoff ?? null,
    allowOpaque: f.allowOpaqueEvidence,
  });
  // Consuming writes: the ledger is opened as its writer, with its key; a plain gate reads.
  const ledger = req.consume !== null ? Ledger.open(writerOptions(io, f)) : Ledger.open({ dir: ledgerDir(io, f), env: io.env, trust: trustPath(io, f) });
  // SPEC 11: a plain gate decides on the remote's state (within the read budget) and says how
  // current it was; a consuming gate refreshes as every write does, under the lock.
  const cur = req.consume === null ? await currentRead(io, ledger) : { json: {}, lead: [] as string[] };
  // SPEC 13: under a witness policy, the gate decides only on a state the witnesses stand behind
  // (a consuming gate brings the copy to the remote first, as its write would).
  const rule = witnessRule(io, f, trustPath(io, f));
  if (rule) {
    if (req.consume !== null) await ledger.current({ budgetMs: NETWORK_BUDGET_MS });
    await assertWitnessed(ledger, rule, trustPath(io, f));
  }
  const r = ledger.gate(req);
  for (const w of await ledger.viewsAfterAdoption()) io.stderr(`ledger: warning: ${w}\n`);
  const lines = [...cur.lead, ...formatGateText(r)];
  if (r.consume) {
    lines.push(r.consume.id ? `consumed as ${r.consume.consumer}: ${r.consume.id} (seq ${r.consume.seq})` : `not consumed: the gate holds for ${r.consume.consumer}`);
  }
  for (const w of r.chain.warnings) io.stderr(`ledger: warning: ${w}\n`);
  // An operation id the ledger has never seen: the nearest ones it holds, when one is close.
  if (!r.ok && r.handoff === null) {
    const { nameSuggestion } = await import('./name-suggest.js');
    const guess = await nameSuggestion(req.op, ledgerDir(io, f));
    if (guess) {
      lines.push(`${req.op}: ${guess}`);
      io.stderr(`ledger: ${req.op} has no records in this ledger; ${guess}\n`);
    }
  }
  emit(io, f, { ...r, ...cur.json }, lines);
  return r.ok ? EXIT.ok : EXIT.hold;
}

export async function runRevoke(io: CliIO, target: string | undefined, f: Flags<ReturnType<typeof REVOKE>> & Global): Promise<number> {
  const req = checkRevoke({ target: target as string, reason: f.reason as string, agent: agentOf(io, f) as string });
  const res = Ledger.open(writerOptions(io, f)).revoke(req);
  const r = res.records[0];
  const revoked = (r.record as { target: string }).target;
  if (r.existing) io.stderr(`ledger: ${revoked} is already revoked by ${r.id} (seq ${r.seq}) with the same reason; nothing appended\n`);
  emit(io, f, { ok: true, id: r.id, seq: r.seq, existing: r.existing, target: revoked }, r.id);
  return 0;
}

export async function runConsumeFailed(io: CliIO, target: string | undefined, f: Flags<ReturnType<typeof CONSUME_FAILED>> & Global): Promise<number> {
  // Every flag is checked before anything is read (SPEC 10: a bad flag changes nothing).
  const req = checkConsumeFailed({ target: target as string, consumer: f.consumer as string, reason: f.reason as string, ...(agentOf(io, f) !== undefined ? { agent: agentOf(io, f) } : {}) });
  const r = Ledger.open(writerOptions(io, f, false)).consumeFailed(req);
  if (r.existing) io.stderr(`ledger: this failure is already reported by ${r.id} (seq ${r.seq}) with the same reason; nothing appended\n`);
  const line = `${r.id}: ${req.consumer}'s consumption ${r.consume.id} (seq ${r.consume.seq}) of ${r.logical_operation_id} failed; it may consume handoff ${r.handoff} again`;
  emit(io, f, { ok: true, ...r, consumer: req.consumer }, line);
  return 0;
}

export async function runPending(io: CliIO, f: Global & { op?: string }): Promise<number> {
  const op = f.op === undefined ? undefined : checkOp(f.op);
  const now = Date.now();
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const head = ledger.head();
  const { pending, unresolved } = ledger.pendingReport({ ...(op !== undefined ? { op } : {}), now, head });
  const lines = formatPendingText({ pending, unresolved }, head.seq);
  emit(io, f, { ok: true, pending, count: pending.length, unresolved, head: { seq: head.seq, tail: head.tail } }, lines);
  return 0;
}
