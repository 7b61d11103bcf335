// The handoff fields as command-line text (SPEC 10), shared by `append handoff` and `finish`:
// each flag's text form read into the request's value. Only the form is judged here (a value that
// is not NAME=SOURCE, a verdict that is not ok or fail, a name given twice); the values are
// checked once, with the request (../../requests/).
import { LedgerError } from '../../errors.js';
import { OUTCOMES, type Dependency, type Invariant, type Outcome } from '../../record.js';

function splitName(text: string, flag: string, form: string): [string, string] {
  const i = text.indexOf('=');
  if (i <= 0) throw new LedgerError('USAGE', `--${flag} expects ${form}, got "${text}"`);
  return [text.slice(0, i), text.slice(i + 1)];
}

function noDuplicate(seen: Set<string>, name: string, flag: string): void {
  if (seen.has(name)) throw new LedgerError('USAGE', `--${flag}: "${name}" is given twice`);
  seen.add(name);
}

/** --evidence NAME=SOURCE: the sources by name, digested when the request is written. */
export function evidenceSources(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const v of values) {
    const [name, source] = splitName(v, 'evidence', 'NAME=SOURCE (SOURCE: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX)');
    noDuplicate(seen, name, 'evidence');
    out[name] = source;
  }
  return out;
}

/** --invariant NAME=ok|fail[:DETAIL]. */
export function invariantsOf(values: readonly string[]): Record<string, Invariant> {
  const out: Record<string, Invariant> = {};
  const seen = new Set<string>();
  for (const v of values) {
    const [name, rest] = splitName(v, 'invariant', 'NAME=ok|fail[:DETAIL]');
    noDuplicate(seen, name, 'invariant');
    const colon = rest.indexOf(':');
    const verdict = colon < 0 ? rest : rest.slice(0, colon);
    const detail = colon < 0 ? '' : rest.slice(colon + 1);
    if (verdict !== 'ok' && verdict !== 'fail') throw new LedgerError('USAGE', `--invariant ${name}: expected ok or fail, got "${verdict}"`);
    out[name] = { ok: verdict === 'ok', detail };
  }
  return out;
}

/** --depends-on ID[:OUTCOME], outcome default success. The id may itself contain ':'. */
export function dependsOnOf(values: readonly string[]): Dependency[] {
  return values.map((v) => {
    const i = v.lastIndexOf(':');
    const tail = i >= 0 ? v.slice(i + 1) : '';
    const hasOutcome = i > 0 && (OUTCOMES as readonly string[]).includes(tail);
    return { logical_operation_id: hasOutcome ? v.slice(0, i) : v, outcome: hasOutcome ? (tail as Outcome) : 'success' };
  });
}
