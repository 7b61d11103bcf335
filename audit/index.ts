// The auditor (SPEC 8): the independent second reader of a ledger. It imports only the pure
// modules (canonical, record, sign, keys, errors), reads records.jsonl and HEAD itself, and
// trusts nothing else under the ledger directory (SPEC 3). test/audit/independence.test.ts keeps
// it so.
//
// The pipeline is the list of layers below, in SPEC 8's order. Each record streams through them
// once; a layer can only decide the verdict while no lower layer has failed, so from the first
// failure on, the layers above it stop (and the expensive signature checks with them).
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LedgerError, ioError } from '../src/errors.js';
import type { Trust } from '../src/keys.js';
import type { Head, TrustFloor } from '../src/record.js';
import { placementOf, type AuditContext, type LayerFactory, type LineView } from './context.js';
import { FindingCollector } from './findings.js';
import { freshnessLayer } from './freshness.js';
import { isInside, readFloor, readFloorLine, writeFloor } from './floor.js';
import { keyPinLayer } from './keypin.js';
import { linkageLayer } from './linkage.js';
import { readAt, readLines, type ReadEnd } from './lines.js';
import { buildReport, type AuditReport } from './report.js';
import { schemaLayer } from './schema.js';
import { signatureLayer } from './signature.js';

export { formatReportText, type AuditReport } from './report.js';
export { LAYER_EXIT, LAYER_NAMES, type Finding, type LayerName } from './findings.js';
export { readFloor, writeFloor } from './floor.js';

/** SPEC 8, in order. */
export const LAYERS: readonly LayerFactory[] = [schemaLayer, linkageLayer, signatureLayer, keyPinLayer, freshnessLayer];

/** SPEC 10: --skew defaults to 5m. */
export const DEFAULT_SKEW_MS = 5 * 60_000;
/** HEAD is one short line; more than this is not a HEAD (and is not read further). */
const MAX_HEAD_BYTES = 64 * 1024;

export interface AuditOptions {
  /** The ledger directory. */
  dir: string;
  /** The parsed trust file (SPEC 7); never taken from the ledger. */
  trust: Trust;
  /** Where the trust file was read from, only to warn when it lies inside the ledger. */
  trustPath?: string;
  /** --floor: a missing file means a full audit (SPEC 8). */
  floorPath?: string | null;
  /** --advance: replace the floor with the new HEAD after a pass. */
  advance?: boolean;
  /** --max-age in ms; null or absent: HEAD may be any age. */
  maxAgeMs?: number | null;
  /** --skew in ms; default 5 minutes. */
  skewMs?: number;
  /** The one reference time of the run. */
  now: number | Date;
  /** Called every 65,536 records with how many were checked out of how many. */
  onProgress?: (checked: number, total: number) => void;
}

function openIfExists(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'open', path);
  }
}

function assertOptions(o: AuditOptions): number {
  const now = o.now instanceof Date ? o.now.getTime() : o.now;
  if (!Number.isFinite(now)) throw new LedgerError('USAGE', `"now" expected a time, got ${String(o.now)}`);
  if (o.skewMs !== undefined && !(Number.isSafeInteger(o.skewMs) && o.skewMs >= 0)) throw new LedgerError('USAGE', `--skew expected a duration >= 0, got ${o.skewMs}`);
  if (o.maxAgeMs != null && !(Number.isSafeInteger(o.maxAgeMs) && o.maxAgeMs >= 0)) throw new LedgerError('USAGE', `--max-age expected a duration >= 0, got ${o.maxAgeMs}`);
  if (o.advance && !o.floorPath) throw new LedgerError('USAGE', '--advance needs --floor FILE: it replaces that floor after a pass');
  return now;
}

/** Audits the ledger in `opts.dir` (SPEC 8). Throws a coded LedgerError only for bad input. */
export function auditLedger(opts: AuditOptions): AuditReport {
  const now = assertOptions(opts);
  const dir = resolve(opts.dir);
  const warnings: string[] = [];
  try {
    if (!statSync(dir).isDirectory()) throw new LedgerError('INPUT_NOT_FOUND', `${dir} is not a directory; pass --dir or set LEDGER_DIR`, { dir });
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${dir}; pass --dir or set LEDGER_DIR`, { dir });
    throw ioError(e, 'open', dir);
  }

  const floor = opts.floorPath ? readFloor(opts.floorPath) : null;
  if (opts.floorPath) {
    if (floor === null) warnings.push(`no floor at ${opts.floorPath}: audited from genesis${opts.advance ? '' : ' (add --advance to keep one)'}`);
    if (isInside(opts.floorPath, dir)) warnings.push(`the floor file ${opts.floorPath} is inside the ledger directory; whoever can rewrite the ledger can rewrite the floor: keep it elsewhere`);
  }
  if (opts.trustPath && isInside(opts.trustPath, dir)) {
    warnings.push(`the trust file ${opts.trustPath} is inside the ledger directory; the keys that vouch for a ledger must not live in it`);
  }

  const headFd = openIfExists(join(dir, 'HEAD'));
  const fd = openIfExists(join(dir, 'records.jsonl'));
  try {
    if (headFd === null && fd === null) throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${dir} (no HEAD, no records.jsonl); pass --dir or set LEDGER_DIR`, { dir });
    const fileSize = fd === null ? -1 : fstatSync(fd).size;
    const ctx: AuditContext = {
      trust: opts.trust,
      now,
      skewMs: opts.skewMs ?? DEFAULT_SKEW_MS,
      maxAgeMs: opts.maxAgeMs ?? null,
      headBytes: headFd === null ? null : readAt(headFd, 0, MAX_HEAD_BYTES + 1),
      head: null,
      floor,
      floorLine: floor !== null && fd !== null ? readFloorLine(fd, floor, fileSize) : null,
      placementMemo: null,
      fileSize,
      readEnd: { consumed: 0, trailing: 0, short: false },
      tail: null,
      genesisId: null,
    };
    const sink = new FindingCollector();
    const layers = LAYERS.map((make) => make(ctx));

    // 1. HEAD and the floor, layer by layer.
    layers.forEach((layer, rank) => sink.active(rank) && layer.checkHead(sink));

    // 2. The records after the floor (or all of them), streaming through the layers.
    const placement = placementOf(ctx);
    // (Read back through the type: the layers, not this function, set it.)
    const head = ctx.head as Head | null;
    let start = 0;
    let pos = 0;
    if (placement.kind === 'ok') {
      start = placement.record.next;
      pos = placement.record.seq + 1;
      ctx.tail = { seq: placement.record.seq, id: placement.record.id, ts: placement.record.ts };
    }
    // Policy: when HEAD is unusable no size is known, so every complete line is schema-checked.
    const end = head !== null ? head.size : Math.max(fileSize, 0);
    let checked = 0;
    let lastOffset = placement.kind === 'ok' ? floor!.offset : 0;
    if (fd !== null) {
      const total = Math.max(0, (head?.seq ?? 0) - pos + 1);
      for (const raw of readLines(fd, start, end, pos, ctx.readEnd)) {
        const line: LineView = Object.assign(raw, { record: null, id: null });
        for (let rank = 0; rank <= sink.lowest && rank < layers.length; rank++) {
          if (!layers[rank].checkRecord(line, sink)) break;
        }
        ctx.tail = { seq: line.record?.seq ?? line.pos, id: line.id, ts: line.record?.ts ?? null };
        lastOffset = line.offset;
        checked++;
        if ((checked & 0xffff) === 0) opts.onProgress?.(checked, total);
      }
    } else {
      ctx.readEnd = { consumed: 0, trailing: 0, short: end > 0 } satisfies ReadEnd;
    }

    // 3. HEAD against the end of the chain.
    layers.forEach((layer, rank) => sink.active(rank) && layer.checkEnd(sink));

    if (head !== null && fileSize > head.size) {
      warnings.push(`${fileSize - head.size} bytes past HEAD's size ${head.size} are unpublished (not part of the ledger); \`ledger recover\` moves them to quarantine/`);
    }

    // 4. --advance: only after a pass, and only when the floor moves.
    const failedLayer = sink.failedLayer();
    let advanced: TrustFloor | null = null;
    if (failedLayer === null && opts.advance && opts.floorPath && head !== null) {
      const next: TrustFloor = { v: 1, genesis: head.genesis, seq: head.seq, id: head.tail, offset: lastOffset };
      if (!floor || floor.seq !== next.seq || floor.id !== next.id || floor.offset !== next.offset || floor.genesis !== next.genesis) {
        writeFloor(opts.floorPath, next);
      }
      advanced = next;
    }

    const { findings, total } = sink.verdictFindings();
    return buildReport({
      failedLayer,
      findings,
      total,
      checked,
      warnings,
      head: head && { seq: head.seq, tail: head.tail, ts: head.ts, size: head.size },
      floor: placement.kind === 'ok' ? floor : null,
      advanced,
    });
  } finally {
    if (fd !== null) closeSync(fd);
    if (headFd !== null) closeSync(headFd);
  }
}
