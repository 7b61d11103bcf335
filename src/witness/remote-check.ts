// A consumer's witness policy at the moments it takes a remote state (SPEC 13): a join under a
// policy, and a current read, a sync or a gate of a joined ledger. The fresh runner of issue 27
// is the case this exists for: it holds no earlier state, so only the witnesses can tell it that
// the ref it fetched was moved back.
//
// Policy (join): the remote's state is fetched into a scratch repository of its own, verified
// from genesis against the trust file exactly as the join will, and put to the policy's witnesses
// before the join writes anything; the join then takes that very commit or nothing (the ref moved
// in between: OP_REMOTE_CONTENDED, exit 3, try again). A state the witnesses do not stand behind
// is refused with the layer's exit code (14 freshness: rewound, unwitnessed, or cosigned too long
// ago with the witnesses away; 11 linkage; 12 signature) and nothing is written: no ledger
// directory, no state directory, nothing on the remote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerError } from '../errors.js';
import type { Trust } from '../keys/trust.js';
import { ensureRepo, fetchLedgerRef, verifyRemote } from '../remote/fetch.js';
import { hashEqual, leafHash } from '../tlog/hash.js';
import type { Policy } from '../tlog/policy.js';
import { arrayReader, storedHashesForLeaf, treeHash } from '../tlog/tree.js';
import { checkWitnessed } from './enforce.js';
import { witnessRefusal } from './refusal.js';

export interface WitnessRule {
  policy: Policy;
  /** How old a cosignature may be when its witness cannot be asked (null: any age). */
  maxAgeMs: number | null;
  /** How long each witness is waited for (then it counts as absent). */
  timeoutMs: number;
}

/**
 * The remote's tip, when the policy's quorum stands behind its state (null: the remote has no
 * ledger yet, so there is no state to take); else throws the refusal. Writes nothing but its
 * scratch repository, removed before it returns.
 */
export async function witnessedRemoteTip(o: { url: string; ref: string; trust: Trust; rule: WitnessRule; nowMs: number }): Promise<string | null> {
  const scratch = mkdtempSync(join(tmpdir(), 'ledger-witnessed-'));
  try {
    const repo = join(scratch, 'objects.git');
    ensureRepo(repo);
    const tip = fetchLedgerRef(repo, o.url, o.ref);
    if (tip === null) return null;
    const v = verifyRemote(repo, tip, null, [], o.trust, o.nowMs);
    const stored: Uint8Array[] = [];
    const r = arrayReader(stored);
    v.lines.forEach((line, i) => stored.push(...storedHashesForLeaf(i, leafHash(line.subarray(0, -1)), r)));
    if (v.checkpoint && !hashEqual(treeHash(v.checkpoint.size, r), v.checkpoint.root)) {
      throw new LedgerError('REMOTE_LINKAGE', `the remote's checkpoint names another root than its records (seq ${v.head.seq}); nothing was done`, { checkpoint: true });
    }
    const verdict = await checkWitnessed({
      text: v.checkpoint ? v.checkpoint.bytes.toString('utf8') : null,
      tree: (size, root, use) => (hashEqual(treeHash(size, r), root) ? use(r) : null),
      head: v.head, trust: o.trust, policy: o.rule.policy, nowMs: o.nowMs, maxAgeMs: o.rule.maxAgeMs, timeoutMs: o.rule.timeoutMs,
    });
    if (!verdict.ok) throw witnessRefusal(verdict, `the remote ledger (seq ${v.head.seq})`);
    return tip;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
