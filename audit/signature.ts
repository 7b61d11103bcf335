// Layer 3, signature (SPEC 8, exit 12): every record's and HEAD's signature verifies under strict
// Ed25519 (SPEC 4: S < L, canonical encodings, no small-order key or R) with its own `sig.key`.
// Whether that key may sign is the next layer's question, not this one's.
import { headDigest } from '../src/canonical.js';
import { verifySig, type KeyMemo } from '../src/sign.js';
import type { AuditContext, Layer, LineView } from './context.js';

export function signatureLayer(ctx: AuditContext): Layer {
  // The key object of each key, built once for this run (a ledger has few keys; sign.ts KeyMemo):
  // the run's own, dropped with it.
  const keys: KeyMemo = new Map();
  return {
    name: 'signature',

    checkHead(sink) {
      const head = ctx.head!;
      // SPEC 5: over "handoff-ledger/head/v1 " + the digest of JCS(head without sig).
      if (!verifySig('head', headDigest(head), head.sig, keys)) {
        sink.add({ layer: 'signature', code: 'SIG_HEAD', seq: null, id: head.tail, expected: `a valid signature by ${head.sig.key}`, actual: head.sig.value, reason: "HEAD's signature does not verify" });
      }
    },

    checkRecord(line: LineView, sink) {
      const r = line.record!;
      // SPEC 4: over "handoff-ledger/record/v1 " + id(r); the id came from the linkage layer.
      if (verifySig('record', line.id!, r.sig, keys)) return true;
      sink.add({ layer: 'signature', code: 'SIG_RECORD', seq: line.pos, id: line.id, expected: `a valid signature by ${r.sig.key}`, actual: r.sig.value, reason: `the signature of seq ${r.seq} does not verify` });
      return false;
    },

    checkEnd() {
      // Nothing: every signature was checked where it stands.
    },
  };
}
