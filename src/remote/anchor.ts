// The anchor (SPEC 11): the last remote state this machine verified, kept in the per-user state
// directory (state.ts), where neither the remote nor the repository can change it. Every fetch
// is checked against it: the fetched ref must hold the anchor's record at the anchor's seq (else
// a fork, exit 11) and reach at least that seq (else a rollback, exit 14).
import { DIGEST_RE } from '../canonical.js';
import { LedgerError } from '../errors.js';
import { readStateJson, writeStateJson, type RemotePaths } from './state.js';

export interface Anchor {
  v: 1;
  genesis: string;
  /** HEAD's seq, tail and size at the anchor. */
  seq: number;
  tail: string;
  size: number;
  /** The tail record's ts: the next record may not be earlier. */
  ts: string;
  /** The commit of the ref that was verified. */
  commit: string;
  /** When a write of this machine last lost a race for the ref (link.ts: it then asks first). */
  contended_at?: string;
}

const OID_RE = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export function readAnchor(p: RemotePaths): Anchor | null {
  const a = readStateJson(p.anchor) as Partial<Anchor> | null;
  if (a === null) return null;
  const ok = a.v === 1 && typeof a.genesis === 'string' && DIGEST_RE.test(a.genesis) && Number.isSafeInteger(a.seq) && a.seq! >= 0
    && typeof a.tail === 'string' && DIGEST_RE.test(a.tail) && Number.isSafeInteger(a.size) && typeof a.ts === 'string'
    && typeof a.commit === 'string' && OID_RE.test(a.commit)
    && (a.contended_at === undefined || (typeof a.contended_at === 'string' && Number.isFinite(Date.parse(a.contended_at))));
  // Fail closed: an anchor we cannot read is not silently replaced by whatever the remote says.
  if (!ok) throw new LedgerError('OP_CORRUPT', `the anchor ${p.anchor} is malformed`, { path: p.anchor }, 'restore it from a backup, or review the remote and re-anchor with `ledger sync --accept-remote`');
  return a as Anchor;
}

/** Replaces the anchor durably: after a crash it is the old verified state or the new one. */
export function writeAnchor(p: RemotePaths, a: Anchor): void {
  writeStateJson(p.anchor, a);
}
