// The gate's words: the short forms its reasons use, and the text form of a result.
import { neutraliseLine } from '../../text/sanitize.js';
import type { GateResult, Term } from './types.js';

/** A record id cut to its first 12 hex digits, for reasons a person reads. */
export const short = (id: string) => `${id.slice(0, 19)}…`;

/** A duration as a person says it: 45s, 12m, 5h, 3d. */
export function age(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)}h`;
  return `${Math.round(ms / 86_400_000)}d`;
}

/**
 * The text form: a verdict line, then every term with its reasons. A reason may quote record
 * text (a revocation's reason, an invariant's detail, an evidence source): each is one line,
 * neutralised, so no record can print a second verdict line or clear the screen above it.
 */
export function formatGateText(r: GateResult): string[] {
  const lines = [`${r.ok ? 'proceed' : 'hold'}: ${r.op}: ${neutraliseLine(r.reason)}`];
  // `terms` is written in TERMS order (SPEC 9's), as --json prints it; reading the order from the
  // result keeps this file free of the term list.
  for (const t of Object.keys(r.terms) as Term[]) {
    const [first, ...rest] = r.reasons[t].map(neutraliseLine);
    lines.push(`  ${r.terms[t] ? 'ok  ' : 'FAIL'} ${t}: ${first ?? ''}`);
    for (const more of rest) lines.push(`       ${' '.repeat(t.length)}  ${more}`);
  }
  return lines;
}
