// Speed, paying for issue 22's read verbs (<= 1.6x `node -e ''` on 200,000 records): the HEAD this
// user last verified, kept as its exact bytes in the per-user state directory,
// `<state>/head/<ledger>` (../cache/ 'head-memo'). A read verb whose HEAD is byte for byte the one
// in the memo skips verifying its signature, and with it loading node:crypto (../node-crypto.ts):
// about a fifth of `node -e ''`.
//
// What it vouches for is a fact about bytes alone: that these HEAD bytes carry a valid strict
// Ed25519 signature by the key they name, over their own digest (SPEC 5). That does not depend on
// the ledger, the trust file or the time, so the memo is keyed by nothing but the bytes.
// Policy: the trust file is not part of the key. Nothing a reader decides from the trust file is
// skipped: whether HEAD's key is trusted (a writer's head-guard.ts, the auditor, the gate) is
// decided afresh by whoever decides it, and the memo changes no verdict, only whether a signature
// already verified is verified again.
//
// Policy (fail closed): the memo is believed only when it is byte for byte this HEAD, and only
// when it is a regular file (no link is followed) of this user's own, writable by no one else
// (fs/ops.ts readOwnFileUpTo). Anything else (absent, another HEAD, torn, another owner, a wider
// mode, a link) means the signature is verified for real. Only a real verification writes it.
import { stateNameOf, type LedgerPaths } from './paths.js';

export type HeadMemoPaths = Pick<LedgerPaths, 'cache' | 'real' | 'stateName'>;

// Named as the other state files are (state-dir.ts), by the ledger's realpath and genesis.
const memo = (paths: HeadMemoPaths, genesis: string) =>
  paths.cache?.on('head-memo') ? paths.cache.userFile('head-memo', 'head', stateNameOf(paths, genesis)) : null;

/** Whether this user verified the signature over exactly these HEAD bytes before. */
export function headVouched(paths: HeadMemoPaths, genesis: string, bytes: Buffer): boolean {
  const known = memo(paths, genesis)?.get();
  return known != null && known.equals(bytes);
}

/** Records that the signature over these HEAD bytes verified (best effort). */
export function rememberVerifiedHead(paths: HeadMemoPaths, genesis: string, bytes: Buffer): void {
  memo(paths, genesis)?.set(Buffer.from(bytes));
}
