// The reading verbs' implementation: show, log, head. Published records only (never bytes
// past HEAD). Registered in read.ts.
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import { KINDS, type Kind, type LedgerRecord } from '../../record.js';
import type { RecordAt } from '../../store/read.js';
import { emit, ledgerDir, one, type CliIO, type Opts } from './common.js';


function parseRef(ref: string): string | number {
  if (/^sha256:[0-9a-f]{64}$/.test(ref)) return ref;
  if (/^(0|[1-9][0-9]{0,15})$/.test(ref) && Number.isSafeInteger(Number(ref))) return Number(ref);
  throw new LedgerError('USAGE', `expected a record id ("sha256:" + 64 lowercase hex) or a seq number, got "${ref}"`);
}

function summary(r: RecordAt): string {
  const rec = r.record as LedgerRecord & Record<string, unknown>;
  const op = typeof rec.logical_operation_id === 'string' ? ` ${rec.logical_operation_id}` : '';
  const exec = typeof rec.execution_id === 'string' ? `/${rec.execution_id}` : '';
  const outcome = typeof rec.outcome === 'string' ? ` ${rec.outcome}` : '';
  return `${String(r.seq).padStart(6)}  ${rec.ts}  ${rec.kind.padEnd(10)} ${rec.agent}${op}${exec}${outcome}  ${r.id.slice(0, 19)}`;
}

export function runShow(io: CliIO, refText: string, opts: Opts): number {
  const ref = parseRef(refText);
  const found = Ledger.open({ dir: ledgerDir(io, opts), env: io.env }).get(ref);
  if (!found) throw new LedgerError('INPUT_NOT_FOUND', `no published record ${typeof ref === 'number' ? `at seq ${ref}` : ref} in this ledger`);
  emit(io, opts, { id: found.id, seq: found.seq, offset: found.offset, record: found.record }, [`id ${found.id}`, JSON.stringify(found.record, null, 2)]);
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
  emit(io, opts, { records: rows.map((r) => ({ id: r.id, seq: r.seq, record: r.record })) }, rows.map(summary));
  return 0;
}

export function runHead(io: CliIO, opts: Opts): number {
  const head = Ledger.open({ dir: ledgerDir(io, opts), env: io.env }).head();
  emit(io, opts, head, [`seq ${head.seq}`, `tail ${head.tail}`, `size ${head.size}`, `ts ${head.ts}`, `genesis ${head.genesis}`, `key ${head.sig.key}`]);
  return 0;
}
