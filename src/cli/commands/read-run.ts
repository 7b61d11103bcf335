// The reading verbs' implementation: show, log, head. Published records only (never bytes
// past HEAD). Registered in read.ts.
import { LedgerError } from '../../errors.js';
import { Ledger } from '../../ledger.js';
import type { Kind, LedgerRecord } from '../../record.js';
import { checkLog } from '../../requests/read.js';
import type { RecordAt } from '../../index.js';
import { formatTable } from '../../text/table.js';
import { emit, ledgerDir, type CliIO, type Global } from './common.js';
import { currentRead } from './remote-opts.js';

/** One row of `log`: seq, time, kind, agent, operation/execution, outcome, short id. */
function row(r: RecordAt): string[] {
  const rec = r.record as LedgerRecord & Record<string, unknown>;
  const op = typeof rec.logical_operation_id === 'string' ? rec.logical_operation_id : '';
  const exec = typeof rec.execution_id === 'string' ? `/${rec.execution_id}` : '';
  const outcome = typeof rec.outcome === 'string' ? rec.outcome : '';
  return [String(r.seq), rec.ts, rec.kind, rec.agent, op + exec, outcome, r.id.slice(0, 19)];
}

export async function runShow(io: CliIO, refText: string, f: Global): Promise<number> {
  // The one resolver (store/ids.ts, through the Ledger): the form first (exit 2 before anything
  // is read), then a seq or HEAD costs a few short reads, an id the index, a prefix a scan.
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const cur = await currentRead(io, ledger);
  const found = ledger.resolve(refText, 'show');
  emit(io, f, { ok: true, id: found.id, seq: found.seq, offset: found.offset, record: found.record, ...cur.json }, () => [...cur.lead, `id ${found.id}`, ...JSON.stringify(found.record, null, 2).split('\n')]);
  return 0;
}

export async function runLog(io: CliIO, f: Global & { op?: string; kind?: string; limit?: string }): Promise<number> {
  if (f.limit !== undefined && !/^[1-9][0-9]{0,6}$/.test(f.limit)) throw new LedgerError('USAGE', `--limit expects a whole number from 1 to 9999999, got "${f.limit}"`);
  const req = checkLog({ ...(f.op !== undefined ? { op: f.op } : {}), ...(f.kind !== undefined ? { kind: f.kind as Kind } : {}), limit: f.limit === undefined ? 20 : Number(f.limit) });
  const ledger = Ledger.open({ dir: ledgerDir(io, f), env: io.env });
  const cur = await currentRead(io, ledger);
  const rows = ledger.log(req);
  const text = () => [...cur.lead, ...(rows.length ? formatTable([['SEQ', 'TIME', 'KIND', 'AGENT', 'OPERATION', 'OUTCOME', 'ID'], ...rows.map(row)], ['right']) : ['no records match'])];
  emit(io, f, { ok: true, records: rows.map((r) => ({ id: r.id, seq: r.seq, record: r.record })), ...cur.json }, text);
  return 0;
}

export function runHead(io: CliIO, f: Global): number {
  const head = Ledger.open({ dir: ledgerDir(io, f), env: io.env }).head();
  emit(io, f, { ok: true, ...head }, [`seq ${head.seq}`, `tail ${head.tail}`, `size ${head.size}`, `ts ${head.ts}`, `genesis ${head.genesis}`, `key ${head.sig.key}`]);
  return 0;
}
