// What the layers share during one run: the inputs (trust, one `now`, limits), what the
// orchestrator read from disk (HEAD's bytes, the floor and the line at its offset), and what
// earlier layers established (the parsed HEAD, each line's record and id).
import type { Head, LedgerRecord, TrustFloor } from '../src/record.js';
import type { Trust } from '../src/keys/trust.js';
import type { FindingCollector, LayerName } from './findings.js';
import type { RawLine, ReadEnd } from './lines.js';
import { placeFloor, type FloorPlacement } from './floor.js';

export interface AuditContext {
  readonly trust: Trust;
  /** The one reference time of this run (ms since the epoch); never read again mid-check. */
  readonly now: number;
  readonly skewMs: number;
  /** null: no --max-age. */
  readonly maxAgeMs: number | null;
  /** HEAD's bytes as read, or null when the file does not exist. */
  readonly headBytes: Buffer | null;
  /** HEAD once the schema layer accepted it; null before that or when it did not. */
  head: Head | null;
  /** The floor as read from --floor, or null for a full audit. */
  readonly floor: TrustFloor | null;
  /** The bytes found at the floor's offset, up to its newline (null when there is none). */
  readonly floorLine: Buffer | null;
  /** Where the floor stands against HEAD: computed once, after the schema layer read HEAD. */
  placementMemo: FloorPlacement | null;
  /** Size of records.jsonl when it was opened (-1 when it does not exist). */
  readonly fileSize: number;
  /** How the reading of records.jsonl ended; set before the layers' end checks. */
  readEnd: ReadEnd;
  /**
   * What precedes the first line read: null before the genesis (a full audit), the floor's record
   * when the audit resumes above it, or 'deferred' in a parallel segment, whose first link the
   * orchestrator checks once the segment before it is done.
   */
  before: ChainPoint | null | 'deferred';
  /** The last line read (or the floor's record when no line was), for HEAD's end checks. */
  tail: { seq: number; id: string | null; ts: string | null } | null;
  /** The id of the genesis record when it was read (a full audit). */
  genesisId: string | null;
}

/** A record in the chain, as the next record's checks need it. */
export interface ChainPoint { seq: number; id: string; ts: string }

/** One record line as it moves through the layers; each fills in what the next needs. */
export interface LineView extends RawLine {
  /** Set by the schema layer when the line is a schema-valid record. */
  record: LedgerRecord | null;
  /** Set by the linkage layer: the record's id (SPEC 4). */
  id: string | null;
}

export interface Layer {
  readonly name: LayerName;
  /** Checks on HEAD and the floor, before any record. */
  checkHead(sink: FindingCollector): void;
  /** Checks one record; false when it failed here (the layers after it then skip it). */
  checkRecord(line: LineView, sink: FindingCollector): boolean;
  /** Checks after the last record (HEAD against the chain's end). */
  checkEnd(sink: FindingCollector): void;
}

export type LayerFactory = (ctx: AuditContext) => Layer;

export { shortId } from './findings.js';

/** The floor's placement (SPEC 8), decided once per run on the HEAD the schema layer accepted. */
export function placementOf(ctx: AuditContext): FloorPlacement {
  ctx.placementMemo ??= placeFloor(ctx.floor, ctx.head, ctx.floorLine);
  return ctx.placementMemo;
}
