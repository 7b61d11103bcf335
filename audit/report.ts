// The audit's result: the `--json` object of SPEC 8 (ok, failed_layer, failure, checked,
// warnings, plus the failing layer's findings) and its text form, which ends with one verdict
// line a person can act on.
import type { FloorKey, TrustFloor } from '../src/record.js';
import { shortId } from './context.js';
import { EXIT } from '../src/errors.js';
import { LAYER_EXIT, type Finding, type LayerName } from './findings.js';

export interface AuditReport {
  ok: boolean;
  failed_layer: LayerName | null;
  /** SPEC 8: `seq` is null when the fault is in HEAD or the floor. */
  failure: { layer: LayerName; seq: number | null; id: string | null; reason: string } | null;
  /** Record lines read and checked in this run (those after the floor, when one held). */
  checked: number;
  warnings: string[];
  /** Every finding of the failing layer, lowest seq first (at most MAX_LISTED records'). */
  findings: Finding[];
  /** How many findings the failing layer had in all. */
  findings_total: number;
  /** The HEAD audited, when it could be read. */
  head: { seq: number; tail: string; ts: string; size: number } | null;
  /** The floor the audit started from (null: from genesis). */
  floor: TrustFloor | null;
  /** The floor written by --advance, when it was written. */
  advanced: TrustFloor | null;
  /**
   * SPEC 7: the keys admins' `key` records authorized, through the last record checked, as a
   * floor carries them (empty when none). The gate checks the records it relies on against these.
   */
  keys: FloorKey[];
  /** 0 on a pass, else 10-14 by layer (SPEC 8). */
  exit_code: number;
  /** The last line of the text form. */
  verdict: string;
  /** With the `reportFloor` option only: HEAD as a floor after a pass (not printed). */
  next_floor?: TrustFloor | null;
  /** With the `reportFloorTree` option only: the tree's edge at a floor that carried none, hashed this run (not printed). */
  floor_tree?: string[];
}

export interface ReportInput {
  failedLayer: LayerName | null;
  findings: Finding[];
  total: number;
  checked: number;
  warnings: string[];
  head: AuditReport['head'];
  floor: TrustFloor | null;
  advanced: TrustFloor | null;
  keys?: FloorKey[];
}

function where(f: Finding): string {
  if (f.seq !== null) return `at seq ${f.seq}`;
  return f.code === 'LINKAGE_FLOOR_GENESIS' ? 'at the floor' : 'at HEAD';
}

export function buildReport(input: ReportInput): AuditReport {
  const first = input.findings[0] ?? null;
  const layer = input.failedLayer;
  let verdict: string;
  if (layer === null) {
    const h = input.head!;
    const what = input.floor ? `${input.checked} new records verified above the floor at seq ${input.floor.seq}` : `${input.checked} records verified`;
    verdict = `pass: ${what}, HEAD seq ${h.seq} ${shortId(h.tail)} written ${h.ts}`;
    if (input.advanced) verdict += `; floor advanced to seq ${input.advanced.seq}`;
  } else {
    verdict = `${layer} fails ${where(first!)}: ${first!.reason}`;
    if (input.total > 1) verdict += ` (${input.total - 1} more ${layer} finding${input.total > 2 ? 's' : ''} above)`;
  }
  return {
    ok: layer === null,
    failed_layer: layer,
    failure: layer === null ? null : { layer, seq: first!.seq, id: first!.id, reason: first!.reason },
    checked: input.checked,
    warnings: input.warnings,
    findings: input.findings,
    findings_total: input.total,
    head: input.head,
    floor: input.floor,
    advanced: input.advanced,
    keys: input.keys ?? [],
    exit_code: layer === null ? EXIT.ok : LAYER_EXIT[layer],
    verdict,
  };
}

/** The text form: what was audited, warnings, the failing layer's findings, then the verdict. */
export function formatReportText(r: AuditReport, dir: string): string {
  const out: string[] = [];
  const from = r.floor ? `from the floor at seq ${r.floor.seq}` : 'from genesis';
  out.push(`audit of ${dir} ${from}: ${r.checked} record${r.checked === 1 ? '' : 's'} checked`);
  for (const w of r.warnings) out.push(`warning: ${w}`);
  if (r.failed_layer !== null) {
    out.push(`${r.failed_layer}: ${r.findings_total} finding${r.findings_total === 1 ? '' : 's'}${r.findings_total > r.findings.length ? ` (first ${r.findings.length} listed)` : ''}`);
    for (const f of r.findings) {
      out.push(`  ${f.seq === null ? 'HEAD' : `seq ${f.seq}`} ${f.code}: ${f.reason}`);
      out.push(`    expected ${f.expected}`);
      out.push(`    actual   ${f.actual}`);
    }
  }
  out.push(r.verdict);
  return out.join('\n') + '\n';
}
