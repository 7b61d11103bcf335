// What an audit finds, and the collector that keeps the verdict rule of SPEC 8: the lowest
// failing layer wins, and in it the lowest seq; every finding of that layer is listed.
import { EXIT } from '../src/errors.js';

/** The five layers of SPEC 8, in order. The index is the layer's rank. */
export const LAYER_NAMES = ['schema', 'linkage', 'signature', 'key-pin', 'freshness'] as const;
export type LayerName = (typeof LAYER_NAMES)[number];

/** SPEC 8: the exit code of a failing layer, from the one table (src/errors.ts). */
export const LAYER_EXIT: Record<LayerName, number> = {
  schema: EXIT.schema,
  linkage: EXIT.linkage,
  signature: EXIT.signature,
  'key-pin': EXIT.keyPin,
  freshness: EXIT.freshness,
};

export interface Finding {
  layer: LayerName;
  /** A stable code for scripts and tests, e.g. LINKAGE_PREV; the prefix names the layer. */
  code: string;
  /** The seq of the record at fault, or null when the fault is in HEAD or the floor (SPEC 8). */
  seq: number | null;
  /** The record's id when it is known, else HEAD's tail for HEAD faults, else null. */
  id: string | null;
  expected: string;
  actual: string;
  /** One line a person can act on: "prev_tail_hash is not the id of seq 4811". */
  reason: string;
}

/**
 * Policy: at most this many record findings are kept per layer (the count is exact). A ledger
 * with every line damaged would otherwise hold a million findings in memory, and the first
 * thousand name the fault as well as all of them would.
 */
export const MAX_LISTED = 1000;

export interface CollectedFindings { lowest: number; listed: Finding[][]; counts: number[] }

export class FindingCollector {
  /** Rank of the lowest layer with a finding; LAYER_NAMES.length while none has. */
  lowest: number = LAYER_NAMES.length;
  private readonly listed: Finding[][] = LAYER_NAMES.map(() => []);
  private readonly counts: number[] = LAYER_NAMES.map(() => 0);

  /**
   * Whether a layer can still decide the verdict. A layer above the lowest failing one cannot,
   * so the orchestrator skips its (expensive) work from then on.
   */
  active(rank: number): boolean {
    return rank <= this.lowest;
  }

  add(f: Finding): void {
    const rank = LAYER_NAMES.indexOf(f.layer);
    if (rank > this.lowest) return;
    if (rank < this.lowest) this.lowest = rank;
    this.counts[rank]++;
    // HEAD and floor findings (seq null) are few by construction and always kept.
    if (f.seq === null || this.listed[rank].length < MAX_LISTED) this.listed[rank].push(f);
  }

  /** What a parallel segment hands back: plain data, for postMessage. */
  toJSON(): CollectedFindings {
    return { lowest: this.lowest, listed: this.listed, counts: this.counts };
  }

  /**
   * Adds a segment's findings, its record seqs shifted by `base` (a segment counts its lines from
   * 0). Segments are merged in file order, so the MAX_LISTED kept are still the lowest seqs.
   */
  merge(other: CollectedFindings, base: number): void {
    other.listed.forEach((list, rank) => {
      if (rank > this.lowest && rank > other.lowest) return;
      for (const f of list) this.add({ ...f, seq: f.seq === null ? null : f.seq + base });
      // Findings beyond the other side's list were counted there but not kept.
      const unlisted = other.counts[rank] - list.length;
      if (unlisted > 0 && rank <= this.lowest) this.counts[rank] += unlisted;
    });
  }

  /** The failing layer, or null on a pass. */
  failedLayer(): LayerName | null {
    return this.lowest < LAYER_NAMES.length ? LAYER_NAMES[this.lowest] : null;
  }

  /**
   * The failing layer's findings, lowest seq first. Policy: faults in records rank before faults
   * in HEAD or the floor (seq null), because a damaged record usually explains the HEAD mismatch
   * that follows from it, not the other way round.
   */
  verdictFindings(): { findings: Finding[]; total: number } {
    if (this.lowest >= LAYER_NAMES.length) return { findings: [], total: 0 };
    const list = [...this.listed[this.lowest]];
    list.sort((a, b) => (a.seq ?? Infinity) - (b.seq ?? Infinity));
    return { findings: list, total: this.counts[this.lowest] };
  }
}

/** Shortens a long value for a finding (an over-long line must not flood the report). */
export function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/** Short form of a digest for verdict lines: sha256:0123abcd…. */
export function shortId(id: string | null): string {
  return id === null ? '(unknown)' : id.length > 20 ? `${id.slice(0, 19)}…` : id;
}
