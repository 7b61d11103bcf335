// SPEC 13, issue 27 item 3: after a command published a write in a joined ledger, its checkpoint
// goes to the witnesses of the policy (--policy where the verb has it, else tlog-policy beside
// the trust file), each waited for at most WITNESS_TIMEOUT_MS, and the cosignatures are published
// beside it. Policy: this never changes the command's outcome (its write is published already):
// a witness that is away, refuses or holds more is one line on stderr, and `status` and `doctor`
// say so until a later publication reaches it.
import { Ledger } from '../../index.js';
import type { CliIO } from './common.js';
import { WITNESS_TIMEOUT_MS, witnessRule } from './remote-opts.js';

export async function afterPublication(io: CliIO, p: { dir: string; trustFile: string; flags: { policy?: string } }): Promise<void> {
  try {
    const rule = witnessRule(io, p.flags, p.trustFile);
    if (!rule || rule.policy.witnesses.length === 0) return;
    const got = await Ledger.open({ dir: p.dir, env: io.env, waitMs: 10_000 }).witnessPublication(rule.policy, WITNESS_TIMEOUT_MS);
    if (!got) return;
    for (const o of got.outcomes) {
      if (o.outcome === 'cosigned' || o.outcome === 'no-url') continue;
      const what = o.outcome === 'absent' ? `did not answer within ${WITNESS_TIMEOUT_MS / 1000}s (absent)` : o.outcome === 'conflict' ? 'holds more of this ledger' : 'refused';
      io.stderr(`ledger: warning: witness ${o.witness} ${what}: ${o.detail}; the write is published, not witnessed by it\n`);
    }
  } catch (e) {
    io.stderr(`ledger: warning: the write is published, but its witnesses were not asked (${(e as Error).message.split('\n')[0]})\n`);
  }
}
