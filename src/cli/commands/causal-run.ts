// The causal verbs' implementation: gate (with --consume-as), revoke, pending. Declared in
// causal.ts.
import { resolve } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import { AGENT_RE, ID_RE, OUTCOMES, type Outcome } from '../../record.js';
import { checkConsumer, checkOp, checkRequiredInvariants } from '../../causal/gate/options.js';
import { checkConsumeFailedTarget } from '../../causal/consume-failed.js';
import { age } from '../../causal/gate/format.js';
import { fullRecordId, parseRecordArg } from '../ids.js';
import { formatTable } from '../../text/table.js';
import { agentName, durationFlag, emit, flag, guardOptions, keyPath, ledgerDir, many, maxChars, one, required, trustPath, waitMs, type CliIO, type Opts } from './common.js';
import { remoteOpts } from './remote-opts.js';

export function parseAccept(values: string[]): Outcome[] {
  if (values.length === 0) return ['success'];
  const out: Outcome[] = [];
  for (const v of values) {
    for (const o of v.split(',')) {
      if (!(OUTCOMES as readonly string[]).includes(o)) throw new LedgerError('USAGE', `--accept takes outcomes from ${OUTCOMES.join(', ')}, comma-separated; got "${o}" in "${v}"`);
      if (!out.includes(o as Outcome)) out.push(o as Outcome);
    }
  }
  return out;
}

export async function runGateCommand(io: CliIO, opText: string, opts: Opts): Promise<number> {
  // Everything the command line says is checked before anything is read or written.
  const op = checkOp(opText);
  const accept = parseAccept(many(opts, 'accept'));
  const requireInvariants = checkRequiredInvariants(many(opts, 'requireInvariant', 'require-invariant'));
  const maxAgeMs = durationFlag(opts, 'maxAge', undefined) ?? null;
  if (maxAgeMs === 0) throw new LedgerError('USAGE', '--max-age must be more than 0 (a handoff is never younger than that)');
  const floorFlag = one(opts, 'floor');
  const consumerFlag = one(opts, 'consumeAs', 'consume-as');
  const consumer = consumerFlag === undefined ? undefined : checkConsumer(consumerFlag);
  const handoffFlag = one(opts, 'handoff');
  const handoffRef = handoffFlag === undefined ? undefined : parseRecordArg(handoffFlag, '--handoff');
  const allowOpaque = flag(opts, 'allowOpaqueEvidence');
  const dir = ledgerDir(io, opts);
  const tp = trustPath(io, opts);
  const floorPath = floorFlag === undefined ? null : resolve(io.cwd, floorFlag);
  // Consuming writes: its key and agent are checked up front too. Policy: the agent defaults to
  // the consumer's name when that is a valid agent name (the consumer is who acts).
  const writer = consumer === undefined ? null : { key: keyPath(io, opts), agent: agentName(io, opts, AGENT_RE.test(consumer) ? consumer : undefined), waitMs: waitMs(opts) };

  // A seq, HEAD or prefix names one record now (cli/ids.ts); a full id goes to the gate as typed.
  const expect = handoffRef === undefined ? undefined : fullRecordId(dir, handoffRef, '--handoff');
  const now = Date.now(); // the one reference time of this command
  const [{ readTrust, formatGateText }, { Ledger }] = await Promise.all([import('../../causal/gate-run.js'), import('../../ledger.js')]);
  const trust = readTrust(tp);
  const base = { trust, trustPath: tp, floorPath, accept, requireInvariants, maxAgeMs, now, allowOpaque, expectHandoff: expect ?? null };
  const r = writer
    ? Ledger.open({ dir, key: writer.key, waitMs: writer.waitMs, trust: tp, ...remoteOpts(io, opts) }).gate(op, { ...base, consumeAs: consumer, agent: writer.agent })
    : Ledger.open({ dir, env: io.env }).gate(op, base);
  const lines = formatGateText(r);
  if (r.consume) {
    lines.push(r.consume.id ? `consumed as ${r.consume.consumer}: ${r.consume.id} (seq ${r.consume.seq})` : `not consumed: the gate holds for ${r.consume.consumer}`);
  }
  for (const w of r.chain.warnings) io.stderr(`ledger: warning: ${w}\n`);
  emit(io, opts, r, lines);
  return r.ok ? EXIT.ok : EXIT.hold;
}

export async function runRevoke(io: CliIO, targetText: string, opts: Opts): Promise<number> {
  const ref = parseRecordArg(String(targetText), 'revoke');
  const reason = maxChars(required(opts, 'reason', 'why the handoff is revoked'), 'reason', 4096);
  const agent = agentName(io, opts);
  const dir = ledgerDir(io, opts);
  // A seq, HEAD or prefix names one record now (cli/ids.ts); the revoke rule checks what it is.
  const target = fullRecordId(dir, ref, 'revoke');
  const { Ledger } = await import('../../ledger.js');
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts), ...remoteOpts(io, opts) });
  const res = ledger.append({ kind: 'revoke', agent, target, reason });
  const r = res.records[0];
  if (r.existing) io.stderr(`ledger: ${target} is already revoked by ${r.id} (seq ${r.seq}) with the same reason; nothing appended\n`);
  emit(io, opts, { ok: true, id: r.id, seq: r.seq, existing: r.existing, target }, r.id);
  return 0;
}

export async function runConsumeFailed(io: CliIO, target: string, opts: Opts): Promise<number> {
  // Every flag is checked before anything is read (SPEC 10: a bad flag changes nothing).
  checkConsumeFailedTarget(target); // a record as people type it, or an operation (causal/consume-failed.ts)
  const consumer = required(opts, 'consumer', 'the consumer that consumed it');
  if (!ID_RE.test(consumer)) throw new LedgerError('USAGE', `--consumer must be 1-128 chars of [A-Za-z0-9._:-], got "${consumer}"`);
  const reason = maxChars(required(opts, 'reason', 'what failed'), 'reason', 4096);
  const agent = agentName(io, opts, AGENT_RE.test(consumer) ? consumer : undefined);
  const { Ledger } = await import('../../ledger.js');
  const ledger = Ledger.open({ dir: ledgerDir(io, opts), key: keyPath(io, opts), waitMs: waitMs(opts), ...remoteOpts(io, opts) });
  const r = ledger.consumeFailed(target, { consumer, agent, reason });
  if (r.existing) io.stderr(`ledger: this failure is already reported by ${r.id} (seq ${r.seq}) with the same reason; nothing appended\n`);
  const line = `${r.id}: ${consumer}'s consumption ${r.consume.id} (seq ${r.consume.seq}) of ${r.logical_operation_id} failed; it may consume handoff ${r.handoff} again`;
  emit(io, opts, { ok: true, ...r, consumer }, line);
  return 0;
}

export async function runPending(io: CliIO, opts: Opts): Promise<number> {
  const op = one(opts, 'op');
  if (op !== undefined) checkOp(op);
  const now = Date.now();
  const { Ledger } = await import('../../ledger.js');
  const ledger = Ledger.open({ dir: ledgerDir(io, opts), env: io.env });
  const head = ledger.head();
  const { pending, unresolved } = ledger.pendingReport({ op, now, head });
  const lines = pending.length
    ? formatTable([
      ['SEQ', 'OPERATION', 'KIND', 'AGE', 'AGENT', 'WHAT'],
      ...pending.map((p) => [String(p.seq), `${p.logical_operation_id}/${p.execution_id}`, p.kind, `${age(p.age_ms)} ago`, p.agent, `${p.what}${p.problem ? `  [does not verify: ${p.problem}]` : ''}`]),
    ], ['right', 'left', 'left', 'right'])
    : [`nothing pending at HEAD seq ${head.seq}`];
  if (unresolved.length) {
    lines.push(`unresolved outcomes (ambiguous or timeout, no later success or cancel):`);
    for (const u of unresolved) lines.push(`${String(u.seq).padStart(6)}  ${u.logical_operation_id}/${u.execution_id}  ${u.outcome.padEnd(9)}  ${age(u.age_ms).padStart(4)} ago  ${u.agent}${u.problem ? `  [does not verify: ${u.problem}]` : ''}`);
  }
  emit(io, opts, { ok: true, pending, count: pending.length, unresolved, head: { seq: head.seq, tail: head.tail } }, lines);
  return 0;
}
