// `ledger sync` (SPEC 11): the Ledger fetches, verifies, updates the local copy and publishes what
// the --offline outbox holds (src/remote/sync.ts). Registered in remote.ts; joining is `init
// --remote` (write-run.ts).
import { existsSync } from 'node:fs';
import { Ledger } from '../../ledger.js';
import type { Flags } from '../flags.js';
import { emit, keyPath, ledgerDir, trustPath, waitMs, type CliIO, type Global } from './common.js';
import { NETWORK_BUDGET_MS, assertWitnessed, remoteOpts, witnessRule } from './remote-opts.js';
import type { SYNC } from './remote.js';

export async function runSync(io: CliIO, f: Flags<ReturnType<typeof SYNC>> & Global): Promise<number> {
  const dir = ledgerDir(io, f);
  // The key only matters when writes wait; the trust file, only when given (else the one named at join).
  const keyGiven = f.key !== undefined || io.env.LEDGER_KEY !== undefined;
  const kp = keyPath(io, f);
  const given = f.trust !== undefined || io.env.LEDGER_TRUST !== undefined;
  const ledger = Ledger.open({ dir, key: keyGiven || existsSync(kp) ? kp : undefined, waitMs: waitMs(f), ...remoteOpts(io, f), ...(given ? { trust: trustPath(io, f) } : {}) });
  // SPEC 13: under a witness policy, the remote's state is brought in and put to the witnesses
  // before anything queued is published on it (a write on a rewound ref is what a rewind is for).
  const rule = witnessRule(io, f, trustPath(io, f));
  if (rule && !f.acceptRemote) {
    await ledger.current({ budgetMs: NETWORK_BUDGET_MS });
    await assertWitnessed(ledger, rule, trustPath(io, f));
  }
  const r = ledger.sync({ acceptRemote: f.acceptRemote });
  // SPEC 11: the views follow the local copy.
  for (const w of await ledger.viewsAfterAdoption()) io.stderr(`ledger: warning: ${w}\n`);
  const lines: string[] = [];
  if (f.acceptRemote) lines.push(`re-anchored on the remote at seq ${r.head.seq} (verified from genesis); writers may write again`);
  lines.push(r.adopted ? `took ${r.adopted} record${r.adopted === 1 ? '' : 's'} from the remote (verified from the anchor)` : 'the local copy was already up to date with the remote');
  for (const p of r.published) lines.push(`published queued ${p.kinds.join(', ')} as seq ${p.seqs.join(', ')}`);
  for (const d of r.dropped) lines.push(`dropped queued ${d.kinds.join(', ')}${d.slug ? ` of ${d.slug}` : ''}, not published: ${d.reason}`);
  if (r.waiting) lines.push(`${r.waiting} queued write${r.waiting === 1 ? '' : 's'} still wait: the remote cannot be reached`);
  lines.push(`HEAD seq ${r.head.seq} ${r.head.tail}`);
  for (const d of r.dropped) io.stderr(`ledger: warning: a queued ${d.kinds.join(', ')} was dropped: ${d.reason}\n`);
  emit(io, f, { ok: true, adopted: r.adopted, published: r.published, dropped: r.dropped, waiting: r.waiting, head: r.head, commit: r.commit }, lines);
  return 0;
}
