// A witness policy's verdict that is not ok, as the refusal a verb exits with (SPEC 13): the
// failing layer's code (14 freshness, 11 linkage, 12 signature). Its own small module: the CLI and
// the public entry reach it without loading the witness client (node:http) or node:os.
import { LedgerError, type ErrorCode } from '../errors.js';
import type { WitnessedVerdict } from './enforce.js';

const LAYER_CODE: Record<NonNullable<WitnessedVerdict['failed']>, ErrorCode> = {
  freshness: 'REMOTE_FRESHNESS', linkage: 'REMOTE_LINKAGE', signature: 'REMOTE_SIGNATURE',
};

/** A verdict that is not ok, as the refusal a verb exits with (14, 11 or 12); `what` names the state. */
export function witnessRefusal(v: WitnessedVerdict, what: string): LedgerError {
  return new LedgerError(LAYER_CODE[v.failed ?? 'freshness'], `${what} is not witnessed: ${v.reason}; nothing was done`, { witnessed: v }, 'review the remote ref with the ledger\'s writers before anyone acts on it; `ledger audit --policy P` says what each witness answered');
}

