// The causal verbs' implementation: gate (with --consume-as), revoke, pending. Declared in
// causal.ts.
import { resolve } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import { DIGEST_RE } from '../../canonical.js';
import { AGENT_RE, OUTCOMES, type Outcome } from '../../record.js';
import { checkConsumer, checkOp, checkRequiredInvariants } from '../../causal/gate/options.js';
import { age } from '../../causal/gate/format.js';
import { agentName, durationFlag, emit, flag, guardOptions, keyPath, ledgerDir, many, one, required, trustPath, waitMs, type CliIO, type Opts } from './common.js';

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
  const expect = one(opts, 'handoff');
  if (expect !== undefined && !DIGEST_RE.test(expect)) throw new LedgerError('USAGE', `--handoff expects a record id ("sha256:" + 64 lowercase hex), got "${expect}"`);
  const allowOpaque = flag(opts, 'allowOpaqueEvidence');
  const dir = ledgerDir(io, opts);
  const tp = trustPath(io, opts);
  const floorPath = floorFlag === undefined ? null : resolve(io.cwd, floorFlag);
  // Consuming writes: its key and agent are checked up front too. Policy: the agent defaults to
  // the consumer's name when that is a valid agent name (the consumer is who acts).
  const writer = consumer === undefined ? null : { key: keyPath(io, opts), agent: agentName(io, opts, AGENT_RE.test(consumer) ? consumer : undefined), waitMs: waitMs(opts) };

  const now = Date.now(); // the one reference time of this command
  const [{ readTrust, formatGateText }, { Ledger }] = await Promise.all([import('../../causal/gate-run.js'), import('../../ledger.js')]);
  const trust = readTrust(tp);
  const base = { trust, trustPath: tp, floorPath, accept, requireInvariants, maxAgeMs, now, allowOpaque, expectHandoff: expect ?? null };
  const r = writer
    ? Ledger.open({ dir, key: writer.key, waitMs: writer.waitMs, trust: tp, env: io.env }).gate(op, { ...base, consumeAs: consumer, agent: writer.agent })
    : Ledger.open({ dir, env: io.env }).gate(op, base);
  const lines = formatGateText(r);
  if (r.consume) {
    lines.push(r.consume.id ? `consumed as ${r.consume.consumer}: ${r.consume.id} (seq ${r.consume.seq})` : `not consumed: the gate holds for ${r.consume.consumer}`);
  }
  for (const w of r.chain.warnings) io.stderr(`ledger: warning: ${w}\n`);
  emit(io, opts, r, lines);
  return r.ok ? EXIT.ok : EXIT.hold;
}

export async function runRevoke(io: CliIO, target: string, opts: Opts): Promise<number> {
  if (!DIGEST_RE.test(target)) throw new LedgerError('USAGE', `revoke expects a record id ("sha256:" + 64 lowercase hex), got "${target}"`);
  const reason = required(opts, 'reason', 'why the handoff is revoked');
  if (reason.length > 4096) throw new LedgerError('USAGE', `--reason is ${reason.length} chars; at most 4096`);
  const agent = agentName(io, opts);
  const { Ledger } = await import('../../ledger.js');
  const ledger = Ledger.open({ dir: ledgerDir(io, opts), key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts) });
  const res = ledger.append({ kind: 'revoke', agent, target, reason });
  const r = res.records[0];
  if (r.existing) io.stderr(`ledger: ${target} is already revoked by ${r.id} (seq ${r.seq}) with the same reason; nothing appended\n`);
  emit(io, opts, { id: r.id, seq: r.seq, existing: r.existing, target }, r.id);
  return 0;
}

export async function runPending(io: CliIO, opts: Opts): Promise<number> {
  const op = one(opts, 'op');
  if (op !== undefined) checkOp(op);
  const now = Date.now();
  const { Ledger } = await import('../../ledger.js');
  const ledger = Ledger.open({ dir: ledgerDir(io, opts), env: io.env });
  const head = ledger.head();
  const pending = ledger.pending({ op, now, head });
  const lines = pending.length
    ? pending.map((p) => `${String(p.seq).padStart(6)}  ${p.logical_operation_id}/${p.execution_id}  ${p.kind.padEnd(6)}  ${age(p.age_ms).padStart(4)} ago  ${p.agent}  ${p.what}${p.problem ? `  [does not verify: ${p.problem}]` : ''}`)
    : [`nothing pending at HEAD seq ${head.seq}`];
  emit(io, opts, { pending, count: pending.length, head: { seq: head.seq, tail: head.tail } }, lines);
  return 0;
}
