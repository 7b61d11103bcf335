// The auditor (SPEC 8): the independent second reader of a ledger. It imports only the pure
// modules (canonical, record, sign, keys, errors), reads records.jsonl and HEAD itself, and
// trusts nothing else under the ledger directory (SPEC 3). test/audit/independence.test.ts keeps
// it so.
//
// The pipeline is the list of layers below, in SPEC 8's order, run in three steps:
//   1. HEAD and the floor, layer by layer;
//   2. every record after the floor (or from genesis), streaming through the layers once, on one
//      thread or split over several (audit/parallel.ts) with the seams checked afterwards;
//   3. HEAD against the end of the chain, layer by layer.
// `runAudit` is the one entry (async; `threads` picks step 2's path). The auditor only reads:
// with `advance` it reports the floor to keep, and the caller writes it (src/ledger.ts).
// A layer can only decide the verdict while no lower layer has failed, so from the first failure
// on, the layers above it stop (and the expensive signature checks with them).
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fromBase64url, toBase64url } from '../src/canonical.js';
import { LedgerError, ioError } from '../src/errors.js';
import type { Trust } from '../src/keys/trust.js';
import type { Head, TrustFloor } from '../src/record.js';
import { checkTree, edgeFits, type TreeStart } from './checkpoint.js';
import { placementOf, type AuditContext, type Layer, type LayerFactory } from './context.js';
import { FindingCollector } from './findings.js';
import { freshnessLayer } from './freshness.js';
import { isInside, readFloor, readFloorLine, type FloorPlacement } from './floor.js';
import { keyPinLayer, type KeyPinLayer } from './keypin.js';
import { tableToFloor } from './keyrecords.js';
import { linkageLayer } from './linkage.js';
import { readAt } from './lines.js';
import { checkRecordsOnThreads } from './parallel.js';
import { buildReport, type AuditReport } from './report.js';
import { schemaLayer } from './schema.js';
import { runSegment, type SegmentRun } from './segment.js';
import { signatureLayer } from './signature.js';

export { formatReportText, type AuditReport } from './report.js';
export { LAYER_EXIT, LAYER_NAMES, type Finding, type LayerName } from './findings.js';
export { readFloor } from './floor.js';

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
  /**
   * --advance: after a pass, report the new HEAD as the floor to keep (`advanced`). The auditor
   * never writes it (it only reads); `auditLedger` in src/ledger.ts does.
   */
  advance?: boolean;
  /** After a pass, give the new HEAD as a floor (`next_floor`) with or without a floor file: the caller keeps it elsewhere (src/store/user-floor.ts). */
  reportFloor?: boolean;
  /**
   * The tree's right edge at the floor (base64url hashes) when the floor file carries none (a
   * floor in SPEC 8's five fields): from the caller's own earlier audit of the same floor
   * (src/store/user-floor.ts), trusted as the floor is. With `reportFloorTree`, an audit that had
   * to hash from genesis past such a floor reports the edge there (`floor_tree`) to keep.
   */
  floorTree?: string[];
  reportFloorTree?: boolean;
  /** --max-age in ms; null or absent: HEAD may be any age. */
  maxAgeMs?: number | null;
  /** --skew in ms; default 5 minutes. */
  skewMs?: number;
  /** The one reference time of the run. */
  now: number | Date;
  /** Called every 4,096 records with how many were checked out of how many (the caller throttles). */
  onProgress?: (checked: number, total: number) => void;
  /** Threads in all, this one included: 1 runs on this thread; 'auto' (default) the cores Node reports. */
  threads?: number | 'auto';
  /** Below this many bytes of records the audit stays on one thread (a worker costs ~40 ms). */
  minBytes?: number;
  /** The compiled worker script; default: worker.js beside audit/parallel.js. */
  workerUrl?: URL;
  /**
   * For tests: the ranges past the first are checked on this thread, one after another, by the
   * worker's own function (audit/range.ts) instead of on worker threads. The cutting, the seams
   * and the merging are the parallel audit's; only the threads are left out (each costs a
   * thread's start, about 40 ms, and the property tests make about 190).
   */
  rangesHere?: boolean;
}

/** A run between its steps: what was read, the layers, the findings so far. */
export interface AuditRun {
  opts: AuditOptions;
  ctx: AuditContext;
  layers: Layer[];
  sink: FindingCollector;
  fd: number | null;
  warnings: string[];
  /** The byte range of records to check and the seq of its first line. */
  range: { start: number; end: number; firstPos: number };
  /** Records between the floor and HEAD, for progress. */
  total: number;
  close: () => void;
}

/**
 * Opens HEAD or records.jsonl, or null when absent. Policy: without blocking (a FIFO planted by
 * that name would hold the audit forever), and only a regular file: anything else is refused at
 * once (OP_NOT_REGULAR, exit 3), not audited.
 */
function openIfExists(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'open', path);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new LedgerError('OP_NOT_REGULAR', `${path} is not a regular file (a directory, FIFO, socket or device); it is not audited`, { path });
  }
  return fd;
}

function assertOptions(o: AuditOptions): number {
  const now = o.now instanceof Date ? o.now.getTime() : o.now;
  if (!Number.isFinite(now)) throw new LedgerError('USAGE', `"now" expected a time, got ${String(o.now)}`);
  if (o.skewMs !== undefined && !(Number.isSafeInteger(o.skewMs) && o.skewMs >= 0)) throw new LedgerError('USAGE', `--skew expected a duration >= 0, got ${o.skewMs}`);
  if (o.maxAgeMs != null && !(Number.isSafeInteger(o.maxAgeMs) && o.maxAgeMs >= 0)) throw new LedgerError('USAGE', `--max-age expected a duration >= 0, got ${o.maxAgeMs}`);
  if (o.threads !== undefined && o.threads !== 'auto' && !(Number.isSafeInteger(o.threads) && o.threads >= 1)) throw new LedgerError('USAGE', `"threads" expected a whole number >= 1 or 'auto', got ${String(o.threads)}`);
  if (o.advance && !o.floorPath) throw new LedgerError('USAGE', '--advance needs --floor FILE: it replaces that floor after a pass');
  return now;
}

/** Step 1: read HEAD and the floor, run the layers' HEAD checks, and plan the record range. */
export function beginAudit(opts: AuditOptions): AuditRun {
  const now = assertOptions(opts);
  const dir = resolve(opts.dir);
  const warnings: string[] = [];
  try {
    if (!statSync(dir).isDirectory()) throw new LedgerError('INPUT_NOT_FOUND', `${dir} is not a directory`, { dir }, 'pass --dir or set LEDGER_DIR');
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${dir}`, { dir }, 'pass --dir or set LEDGER_DIR');
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
  let open = fd !== null;
  const close = () => {
    if (open) closeSync(fd!);
    open = false;
  };
  try {
    let headBytes: Buffer | null = null;
    if (headFd !== null) {
      try {
        headBytes = readAt(headFd, 0, MAX_HEAD_BYTES + 1);
      } catch (e) {
        // Policy: a HEAD that is not a readable file (a directory) has no bytes at all, so the
        // schema layer reports it (exit 10) like any other HEAD that is not canonical JSON.
        if ((e as NodeJS.ErrnoException).code !== 'EISDIR') throw ioError(e, 'read', join(dir, 'HEAD'));
        headBytes = Buffer.alloc(0);
      } finally {
        closeSync(headFd);
      }
    }
    if (headFd === null && fd === null) throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${dir} (no HEAD, no records.jsonl)`, { dir }, 'pass --dir or set LEDGER_DIR');
    const fileSize = fd === null ? -1 : fstatSync(fd).size;
    const ctx: AuditContext = {
      trust: opts.trust,
      now,
      skewMs: opts.skewMs ?? DEFAULT_SKEW_MS,
      maxAgeMs: opts.maxAgeMs ?? null,
      headBytes,
      head: null,
      floor,
      floorLine: floor !== null && fd !== null ? readFloorLine(fd, floor, fileSize) : null,
      placementMemo: null,
      fileSize,
      readEnd: { consumed: 0, trailing: 0, short: false },
      before: null,
      tail: null,
      genesisId: null,
    };
    const sink = new FindingCollector();
    const layers = LAYERS.map((make) => make(ctx));

    layers.forEach((layer, rank) => sink.active(rank) && layer.checkHead(sink));

    // Where the records to check begin: above the floor when it holds, else at genesis.
    const placement = placementOf(ctx);
    const head = ctx.head as Head | null; // set by the schema layer
    const range = { start: 0, end: head !== null ? head.size : Math.max(fileSize, 0), firstPos: 0 };
    if (placement.kind === 'ok') {
      const r = placement.record;
      range.start = r.next;
      range.firstPos = r.seq + 1;
      ctx.before = { seq: r.seq, id: r.id, ts: r.ts };
      ctx.tail = { seq: r.seq, id: r.id, ts: r.ts };
    }
    // Policy: when HEAD is unusable no size is known, so every complete line is schema-checked.
    const total = Math.max(0, (head?.seq ?? 0) - range.firstPos + 1);
    return { opts, ctx, layers, sink, fd, warnings, range, total, close };
  } catch (e) {
    close();
    throw e;
  }
}

/** Step 2 on one thread: every record in the range through the layers. */
export function checkRecords(run: AuditRun): SegmentRun | null {
  const { ctx, fd, range, opts, total } = run;
  if (fd === null) {
    ctx.readEnd = { consumed: 0, trailing: 0, short: range.end > 0 };
    return null;
  }
  const seg = runSegment(ctx, run.layers, run.sink, fd, range, opts.onProgress && ((n) => opts.onProgress!(n, total)));
  ctx.readEnd = seg.readEnd;
  return seg;
}

/**
 * Where the tree's hashing may start: the floor's edge (SPEC 13; the floor carries what it needs,
 * SPEC 7) when the floor holds and its edge fits its size; else null, from genesis. Policy: an
 * edge that does not fit is ignored with a warning, never trusted in part.
 */
function treeStart(floor: TrustFloor | null, placed: FloorPlacement, warnings: string[], kept?: string[]): TreeStart | null {
  const tree = floor?.tree ?? kept;
  if (floor === null || placed.kind !== 'ok' || tree === undefined) return null;
  const hashes = tree.map((h) => fromBase64url(h, 32));
  if (!edgeFits(floor.seq + 1, hashes) || hashes.some((h) => h === null)) {
    warnings.push(`the floor's tree edge does not fit its ${floor.seq + 1} records: the tree was hashed from genesis`);
    return null;
  }
  return { edge: { size: floor.seq + 1, hashes: hashes.map((h) => Buffer.from(h!)) }, offset: placed.record.next };
}

/** Step 3: HEAD against the chain's end, the unpublished-bytes warning, the floor to keep, the report. */
export function finishAudit(run: AuditRun, checked: number, lastOffset: number): AuditReport {
  const { ctx, sink, layers, opts, warnings } = run;
  try {
    layers.forEach((layer, rank) => sink.active(rank) && layer.checkEnd(sink));
    const head = ctx.head;
    // SPEC 13: the checkpoint's root against the records, once the chain through HEAD holds,
    // hashing only what is past the floor when the floor carries the tree's edge; and the edge at
    // HEAD, when a floor is to be kept.
    const placed = placementOf(ctx);
    const wantEdge = (!!opts.advance && !!opts.floorPath) || !!opts.reportFloor;
    let edge: string[] | null = null;
    let floorTree: string[] | null = null;
    if (sink.failedLayer() === null && head !== null && run.fd !== null) {
      const start = treeStart(ctx.floor, placed, warnings, opts.floorTree);
      const floorSize = start === null && placed.kind === 'ok' && ctx.floor !== null ? ctx.floor.seq + 1 : null;
      const tree = checkTree(resolve(opts.dir), head, opts.trust, run.fd, sink, start, wantEdge, floorSize);
      warnings.push(...tree.warnings);
      edge = tree.edge && tree.edge.hashes.map((h) => toBase64url(h));
      floorTree = tree.floorEdge && tree.floorEdge.hashes.map((h) => toBase64url(h));
    }
    if (head !== null && ctx.fileSize > head.size) {
      warnings.push(`${ctx.fileSize - head.size} bytes past HEAD's size ${head.size} are unpublished (not part of the ledger); \`ledger recover\` moves them to quarantine/`);
    }

    // --advance: only after a pass. The caller keeps it (and writes only when it moved).
    const failedLayer = sink.failedLayer();
    const keys = tableToFloor((layers.find((l) => l.name === 'key-pin') as KeyPinLayer).table());
    const floor = placed.kind === 'ok' ? ctx.floor : null;
    let advanced: TrustFloor | null = null;
    if (failedLayer === null && ((opts.advance && opts.floorPath) || opts.reportFloor) && head !== null) {
      const offset = lastOffset >= 0 ? lastOffset : floor?.offset;
      // SPEC 7: the floor carries the keys records authorized through it, so an audit from it
      // reads only what is new. Absent when there are none (a floor as before key records).
      if (offset !== undefined) advanced = { v: 1, genesis: head.genesis, seq: head.seq, id: head.tail, offset, ...(keys.length ? { keys } : {}), ...(edge ? { tree: edge } : {}) };
    }

    const { findings, total } = sink.verdictFindings();
    const report = buildReport({
      failedLayer,
      findings,
      total,
      checked,
      warnings,
      head: head && { seq: head.seq, tail: head.tail, ts: head.ts, size: head.size },
      floor,
      advanced: opts.advance ? advanced : null,
      keys,
    });
    // reportFloor: the floor a caller may keep elsewhere, beside the report (not part of its form).
    const withFloor = opts.reportFloor ? Object.assign(report, { next_floor: advanced }) : report;
    return opts.reportFloorTree && floorTree && failedLayer === null ? Object.assign(withFloor, { floor_tree: floorTree }) : withFloor;
  } finally {
    run.close();
  }
}

/**
 * Audits the ledger in `opts.dir` (SPEC 8): step 2 on this thread when `threads` is 1, else
 * split over worker threads when there is enough to check (audit/parallel.ts); the verdict is
 * the same either way. Throws a coded LedgerError only for bad input; a failed check is a finding.
 */
export async function runAudit(opts: AuditOptions): Promise<AuditReport> {
  if (opts.threads === 1) return runAuditSyncInternal(opts);
  const run = beginAudit(opts);
  let counted: { checked: number; lastOffset: number } | null;
  try {
    const threaded = await checkRecordsOnThreads(run);
    if (threaded === 'serial') {
      // A key record's fault found across ranges: the one-thread audit words it (parallel.ts).
      run.close();
      return runAuditSyncInternal(opts);
    }
    counted = threaded;
    if (counted === null) {
      const seg = checkRecords(run);
      counted = { checked: seg?.lines ?? 0, lastOffset: seg?.lastOffset ?? -1 };
    }
  } catch (e) {
    run.close();
    throw e;
  }
  return finishAudit(run, counted.checked, counted.lastOffset);
}

/**
 * Internal: `runAudit` with `threads: 1`, synchronously, for a caller that cannot await (the
 * gate re-checks the chain under the writer lock, inside one synchronous critical section).
 */
export function runAuditSyncInternal(opts: AuditOptions): AuditReport {
  const run = beginAudit(opts);
  let seg: SegmentRun | null;
  try {
    seg = checkRecords(run);
  } catch (e) {
    run.close();
    throw e;
  }
  return finishAudit(run, seg?.lines ?? 0, seg?.lastOffset ?? -1);
}
