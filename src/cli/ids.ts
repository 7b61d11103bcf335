// Record ids on the command line (SPEC 10, issue 14.8): every verb that takes a record id
// (`show`, `revoke`, `--supersedes` of `append handoff` and `finish`, `gate --handoff`) reads it
// here (`consume-failed`, whose argument may also be an operation id, resolves it with the same
// store/ids.ts under its writer lock: causal/consume-failed.ts), so each takes the same forms: a seq, HEAD, a full id, or a unique prefix of 8+ hex
// digits, with or without `sha256:`. The resolving is store/ids.ts's, through the Ledger; this
// file says when it happens. Loaded only by the verbs' implementations (never at start-up).
//
// Policy: a full id is passed on as typed, and the verb's own rule looks it up where it decides
// (a revocation or a supersedes under the writer lock, the gate's --handoff among its inputs), so
// what those rules say about an id stays as it was. A seq, HEAD or prefix is resolved to the one
// record's full id before the verb runs: an unknown one exits 2, an ambiguous one exits 2 listing
// the candidates. The form is checked first, before anything is read (`parseRecordArg`).
import { Ledger } from '../ledger.js';
import { parseRecordRef, type RecordRef } from '../store/ids.js';

/** The form of a record argument or flag value; USAGE (exit 2) for anything else. */
export function parseRecordArg(text: string, what: string): RecordRef {
  return parseRecordRef(text, what);
}

/** The full id a reference names: as typed when it is one, else resolved in the ledger at `dir`. */
export function fullRecordId(dir: string, ref: RecordRef, what: string): string {
  if (ref.kind === 'id') return ref.id;
  return Ledger.open({ dir }).resolve(ref, what).id;
}

/** Form-checks and resolves a flag value in one step (for flags read among others: --supersedes). */
export function recordIdsIn(dir: string): (text: string, what: string) => string {
  return (text, what) => fullRecordId(dir, parseRecordArg(text, what), what);
}
