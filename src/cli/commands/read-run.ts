// The reading verbs' implementation: show, log, head. Published records only (never bytes
// past HEAD). Registered in read.ts.
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import { KINDS, type Kind, type LedgerRecord } from '../../record.js';
import type { RecordAt } from '../../store/read.js';
import { parseRecordArg } from '../ids.js';
import { formatTable } from '../table.js';
import { emit, ledgerDir, one, type CliIO, type Opts } from './common.js';

/** One row of `log`: seq, time, kind, agent, operation/execution, outcome, short id. */
function row(r: RecordAt): string[] {
  const rec = r.record as LedgerRecord & Record<string, unknown>;
  const op = typeof rec.logical_operation_id === 'string' ? rec.logical_operation_id : '';
  const exec = typeof rec.execution_id === 'string' ? `/${rec.execution_id}` : '';
  const outcome = typeof rec.outcome === 'string' ? rec.outcome : '';
  return [String(r.seq), rec.ts, rec.kind, rec.agent, op + exec, outcome, r.id.slice(0, 19)];
}

export function runShow(io: CliIO, refText: string, opts: Opts): number {
  // The form first (exit 2 before anything is read), then the one resolver (store/ids.ts): a
  // seq or HEAD costs a few short reads, an id the index, a prefix a scan.
  const ref = parseRecordArg(String(refText), 'show');
  const found = Ledger.open({ dir: ledgerDir(io, opts), env: io.env }).resolve(ref, 'show');
  emit(io, opts, { ok: true, id: found.id, seq: found.seq, offset: found.offset, record: found.record }, [`id ${found.id}`, ...JSON.stringify(found.record, null, 2).split('\n')]);
  return 0;
}

export function runLog(io: CliIO, opts: Opts): number {
  const kind = one(opts, 'kind');
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind)) throw new LedgerError('USAGE', `--kind must be one of ${KINDS.join(', ')}, got "${kind}"`);
  const limitText = one(opts, 'limit');
  let limit = 20;
  if (limitText !== undefined) {
    if (!/^[1-9][0-9]{0,6}$/.test(limitText)) throw new LedgerError('USAGE', `--limit expects a whole number from 1 to 9999999, got "${limitText}"`);
    limit = Number(limitText);
  }
  const rows = Ledger.open({ dir: ledgerDir(io, opts), env: io.env }).log({ op: one(opts, 'op'), kind: kind as Kind | undefined, limit });
  const text = rows.length ? formatTable([['SEQ', 'TIME', 'KIND', 'AGENT', 'OPERATION', 'OUTCOME', 'ID'], ...rows.map(row)], ['right']) : ['no records match'];
  emit(io, opts, { ok: true, records: rows.map((r) => ({ id: r.id, seq: r.seq, record: r.record })) }, text);
  return 0;
}

export function runHead(io: CliIO, opts: Opts): number {
  const head = Ledger.open({ dir: ledgerDir(io, opts), env: io.env }).head();
  emit(io, opts, { ok: true, ...head }, [`seq ${head.seq}`, `tail ${head.tail}`, `size ${head.size}`, `ts ${head.ts}`, `genesis ${head.genesis}`, `key ${head.sig.key}`]);
  return 0;
}
