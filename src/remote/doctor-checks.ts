// `ledger doctor`'s checks of the remote (SPEC 11), read-only: the join, a hold (fork or
// rollback), the remote reachable and holding the ref, the local copy against the anchor and
// the remote's tip, and queued --offline writes. No push is tried: a ref the host holds is one
// it accepted (the first publication pushed it); a host that refuses the ref is found by that
// first push, which names the fallback.
import { readAnchor } from './anchor.js';
import { checkRemoteUrl, gitComplaint, NETWORK_TIMEOUT_MS, runGit } from './git.js';
import { readHold } from './hold.js';
import { readWitnessReport } from './witnesses.js';
import { readOutbox } from './outbox.js';
import { FALLBACK_REF } from './publish.js';
import { joinedRemote } from './sync.js';
import { stateDirOf, type Env, type JoinInfo, type RemotePaths } from './state.js';
import { dirname } from 'node:path';
import { LedgerError } from '../errors.js';
import { readTrust } from '../keys/trust-file.js';
import { remoteHoldingLedger } from './probe.js';
import { realFileOps } from '../fs/ops.js';
import { keyRecords } from '../store/grants.js';
import { readHead } from '../store/head.js';
import { ledgerPaths } from '../store/paths.js';
import { fetchLedgerRef, verifyRemote } from './fetch.js';
import type { Anchor } from './anchor.js';

/**
 * Issue 25 item 5: a ledger not joined to a remote, in a project whose git remote holds one, is
 * a second ledger in one project (a teammate's clone that ran `init`): not healthy.
 */
function secondLedger(ledgerDir: string): RemoteCheck[] {
  const held = remoteHoldingLedger(dirname(ledgerDir));
  if (!held) return [];
  return [{ name: 'one ledger', status: 'fail', detail: `the git remote ${held.name} (${held.url}) holds a ledger, and ${ledgerDir} is not joined to it: two ledgers in one project`, fix: `if ${ledgerDir} was made by accident, move it aside and join the project's: \`ledger init --remote ${held.name}\`` }];
}

/**
 * The remote moved since this machine verified it: what is new is fetched (into the private
 * repository) and verified, not taken. Records signed by a key this machine does not accept are
 * most often a machine not yet authorized (issue 25 item 5), named so, with the command.
 */
function whatIsNew(ledgerDir: string, rp: RemotePaths, join: JoinInfo, anchor: Anchor | null): RemoteCheck {
  const behind: RemoteCheck = { name: 'remote sync', status: 'warn', detail: `the remote moved since this machine last verified it${anchor ? ` (seq ${anchor.seq})` : ''}: the local copy is behind`, fix: 'run `ledger sync` (every writer also does first)' };
  try {
    const tip = fetchLedgerRef(rp.repo, join.url, join.ref, anchor?.commit ?? null);
    if (tip === null || anchor === null) return behind;
    const paths = ledgerPaths(ledgerDir);
    const local = readHead(realFileOps, paths);
    const prior = local ? keyRecords(realFileOps, paths, local) : [];
    verifyRemote(rp.repo, tip, { seq: anchor.seq, id: anchor.tail, ts: anchor.ts, size: anchor.size }, [{ seq: anchor.seq, id: anchor.tail, what: 'the anchor' }], readTrust(join.trust), Date.now(), { genesis: anchor.genesis, what: 'the anchor' }, prior);
    return behind;
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'REMOTE_KEY_PIN' && e.data.onboarding === true) {
      return { name: 'remote records', status: 'warn', detail: `a machine not yet authorized: ${e.message}`, fix: e.hint ?? 'an admin authorizes it with `ledger trust add`' };
    }
    if (e instanceof LedgerError) return { name: 'remote records', status: 'fail', detail: e.message, fix: e.hint ?? 'review the remote ref before anyone writes' };
    return behind;
  }
}

export interface RemoteCheck { name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string }

export function remoteChecks(ledgerDir: string, env: Env, localSeq: number | null): RemoteCheck[] {
  let ctx;
  try {
    ctx = joinedRemote(ledgerDir, stateDirOf(env));
  } catch (e) {
    return [{ name: 'remote', status: 'fail', detail: (e as Error).message, fix: 'join again with `ledger init --remote REMOTE`' }];
  }
  if (!ctx) return secondLedger(ledgerDir);
  const { rp, join } = ctx;
  const checks: RemoteCheck[] = [{ name: 'remote', status: 'ok', detail: `joined to ${join.url} (${join.ref}); records are checked against ${join.trust}` }];
  const hold = readHold(rp);
  if (hold) checks.push({ name: 'remote hold', status: 'fail', detail: `a ${hold.kind} was found at ${hold.at}: every writer refuses (${hold.message})`, fix: `review ${hold.evidence}; then \`ledger sync --accept-remote\`` });
  const anchor = readAnchor(rp);
  const ls = runGit(['ls-remote', '--refs', '--', checkRemoteUrl(join.url), join.ref], { timeoutMs: Math.min(NETWORK_TIMEOUT_MS, 20_000) });
  if (ls.status !== 0) {
    checks.push({ name: 'remote reachable', status: 'fail', detail: `${join.url} cannot be reached: ${gitComplaint(ls)}`, fix: 'check the network, the URL and your credentials (ssh never prompts here); writers need --offline meanwhile' });
  } else {
    const line = ls.stdout.toString('utf8').split('\n').find((l) => l.endsWith(`\t${join.ref}`));
    if (!line) {
      checks.push({ name: 'remote ref', status: 'fail', detail: `${join.url} has no ${join.ref}${anchor ? ` (this machine verified it at seq ${anchor.seq}: it was deleted)` : ''}`, fix: `restore the ref from a clone that has it; a host that refuses custom refs takes ${FALLBACK_REF}` });
    } else {
      const tip = line.split('\t')[0];
      checks.push({ name: 'remote ref', status: 'ok', detail: `${join.ref} is at ${tip.slice(0, 12)} (the host accepted it)` });
      if (anchor && tip === anchor.commit && localSeq === anchor.seq) checks.push({ name: 'remote sync', status: 'ok', detail: `the local copy is the remote's, seq ${anchor.seq}` });
      else checks.push(whatIsNew(ledgerDir, rp, join, anchor));
    }
  }
  // SPEC 13: what the policy's witnesses answered to this machine's last publication.
  const w = readWitnessReport(rp);
  if (w) {
    const away = w.outcomes.filter((o) => o.outcome !== 'cosigned' && o.outcome !== 'no-url');
    checks.push(away.length === 0
      ? { name: 'witnesses', status: 'ok', detail: `every witness cosigned the publication of seq ${w.seq} (${w.at})` }
      : { name: 'witnesses', status: 'warn', detail: `at the publication of seq ${w.seq} (${w.at}): ${away.map((o) => `witness ${o.witness} ${o.outcome} (${o.detail})`).join('; ')}`, fix: 'check that witness (its address in the policy, whether it runs); the next publication asks it again' });
  }
  const queued = readOutbox(rp).length;
  if (queued) checks.push({ name: 'outbox', status: 'warn', detail: `${queued} --offline write${queued === 1 ? '' : 's'} wait, not published`, fix: 'run `ledger sync` once the remote is reachable' });
  const repo = runGit(['rev-parse', '--git-dir'], { gitDir: rp.repo });
  checks.push(repo.status === 0
    ? { name: 'remote fetch', status: 'ok', detail: `fetched into ${rp.repo} (a private repository: the project's git config is never used)` }
    : { name: 'remote fetch', status: 'warn', detail: `the private repository ${rp.repo} is missing`, fix: 'the next `ledger sync` makes it' });
  return checks;
}
