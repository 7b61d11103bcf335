// The handoff fields as command-line flags (SPEC 10), shared by `append handoff` and `finish`.
// Each parser refuses a malformed value with a one-line USAGE error naming the flag.
import { LedgerError } from '../../errors.js';
import { digestSource, type EvidenceContext } from '../../causal/evidence.js';
import { NAME_RE, ID_RE, OUTCOMES, charCount, type Dependency, type Evidence, type HandoffPayload, type Invariant, type Outcome } from '../../record.js';
import { many, maxChars, one, type Opts } from './common.js';
import { DIGEST_RE } from '../../canonical.js';

export function parseOutcome(text: string, flagName = 'outcome'): Outcome {
  if (!(OUTCOMES as readonly string[]).includes(text)) {
    throw new LedgerError('USAGE', `--${flagName} must be one of ${OUTCOMES.join(', ')}, got "${text}"`);
  }
  return text as Outcome;
}

export function parseId(text: string, flagName: string): string {
  if (!ID_RE.test(text)) throw new LedgerError('USAGE', `--${flagName} must be 1-128 chars of [A-Za-z0-9._:-], got "${text}"`);
  return text;
}

function splitName(text: string, flagName: string, sep: string, form: string): [string, string] {
  const i = text.indexOf(sep);
  if (i <= 0) throw new LedgerError('USAGE', `--${flagName} expects ${form}, got "${text}"`);
  const name = text.slice(0, i);
  if (!NAME_RE.test(name)) throw new LedgerError('USAGE', `--${flagName}: name "${name}" must be 1-64 chars of [A-Za-z0-9._-]`);
  return [name, text.slice(i + 1)];
}

function noDuplicate(seen: Set<string>, name: string, flagName: string): void {
  if (seen.has(name)) throw new LedgerError('USAGE', `--${flagName}: "${name}" is given twice`);
  seen.add(name);
}

/** --evidence NAME=SOURCE, digested now. */
export function parseEvidence(values: string[], ctx: EvidenceContext): Record<string, Evidence> {
  const out: Record<string, Evidence> = {};
  const seen = new Set<string>();
  for (const v of values) {
    const [name, source] = splitName(v, 'evidence', '=', 'NAME=SOURCE (SOURCE: PATH, file:PATH, dir:PATH, git:REV or sha256:HEX)');
    noDuplicate(seen, name, 'evidence');
    out[name] = digestSource(source, ctx);
  }
  return out;
}

/** --invariant NAME=ok|fail[:DETAIL]. */
export function parseInvariants(values: string[]): Record<string, Invariant> {
  const out: Record<string, Invariant> = {};
  const seen = new Set<string>();
  for (const v of values) {
    const [name, rest] = splitName(v, 'invariant', '=', 'NAME=ok|fail[:DETAIL]');
    noDuplicate(seen, name, 'invariant');
    const colon = rest.indexOf(':');
    const verdict = colon < 0 ? rest : rest.slice(0, colon);
    const detail = colon < 0 ? '' : rest.slice(colon + 1);
    if (verdict !== 'ok' && verdict !== 'fail') throw new LedgerError('USAGE', `--invariant ${name}: expected ok or fail, got "${verdict}"`);
    if (charCount(detail) > 4096) throw new LedgerError('USAGE', `--invariant ${name}: detail is over 4096 characters`);
    out[name] = { ok: verdict === 'ok', detail };
  }
  return out;
}

/** --depends-on ID[:OUTCOME], outcome default success. The id may itself contain ':'. */
export function parseDependsOn(values: string[]): Dependency[] {
  return values.map((v) => {
    const i = v.lastIndexOf(':');
    const tail = i >= 0 ? v.slice(i + 1) : '';
    const hasOutcome = i > 0 && (OUTCOMES as readonly string[]).includes(tail);
    const op = hasOutcome ? v.slice(0, i) : v;
    return { logical_operation_id: parseId(op, 'depends-on'), outcome: hasOutcome ? (tail as Outcome) : 'success' };
  });
}

/**
 * --supersedes RECORD_ID: a full id, or with `toId` (cli/ids.ts recordIdsIn) also a seq, HEAD or
 * an id prefix, resolved to the full id.
 */
export function parseSupersedes(values: string[], toId?: (text: string, what: string) => string): string[] {
  if (toId) return values.map((v) => toId(v, '--supersedes'));
  for (const v of values) if (!DIGEST_RE.test(v)) throw new LedgerError('USAGE', `--supersedes expects a record id ("sha256:" + 64 hex), got "${v}"`);
  return values;
}

/**
 * The handoff fields that `append handoff` and `finish` read alike: --invariant, --depends-on,
 * --supersedes and --note (the operation, execution, outcome and evidence each verb reads its own way).
 */
export function parseHandoffTail(opts: Opts, toId?: (text: string, what: string) => string): Pick<HandoffPayload, 'invariants' | 'depends_on' | 'supersedes' | 'note'> {
  const tail: Pick<HandoffPayload, 'invariants' | 'depends_on' | 'supersedes' | 'note'> = {
    invariants: parseInvariants(many(opts, 'invariant')),
    depends_on: parseDependsOn(many(opts, 'dependsOn', 'depends-on')),
  };
  const sup = many(opts, 'supersedes');
  if (sup.length) tail.supersedes = parseSupersedes(sup, toId);
  const note = one(opts, 'note');
  if (note !== undefined) {
    tail.note = maxChars(note, 'note', 4096);
  }
  return tail;
}
