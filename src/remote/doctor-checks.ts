// `ledger doctor`'s checks of the remote (SPEC 11), read-only: the join, a hold (fork or
// rollback), the remote reachable and holding the ref, the local copy against the anchor and
// the remote's tip, and queued --offline writes. No push is tried: a ref the host holds is one
// it accepted (the first publication pushed it); a host that refuses the ref is found by that
// first push, which names the fallback.
import { readAnchor } from './anchor.js';
import { gitComplaint, NETWORK_TIMEOUT_MS, runGit } from './git.js';
import { readHold } from './hold.js';
import { readOutbox } from './outbox.js';
import { FALLBACK_REF } from './publish.js';
import { joinedRemote } from './sync.js';
import { stateDirOf, type Env } from './state.js';

export interface RemoteCheck { name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix?: string }

export function remoteChecks(ledgerDir: string, env: Env, localSeq: number | null): RemoteCheck[] {
  let ctx;
  try {
    ctx = joinedRemote(ledgerDir, stateDirOf(env));
  } catch (e) {
    return [{ name: 'remote', status: 'fail', detail: (e as Error).message, fix: 'join again with `ledger init --remote REMOTE`' }];
  }
  if (!ctx) return [];
  const { rp, join } = ctx;
  const checks: RemoteCheck[] = [{ name: 'remote', status: 'ok', detail: `joined to ${join.url} (${join.ref}); records are checked against ${join.trust}` }];
  const hold = readHold(rp);
  if (hold) checks.push({ name: 'remote hold', status: 'fail', detail: `a ${hold.kind} was found at ${hold.at}: every writer refuses (${hold.message})`, fix: `review ${hold.evidence}; then \`ledger sync --accept-remote\`` });
  const anchor = readAnchor(rp);
  const ls = runGit(['ls-remote', '--refs', join.url, join.ref], { timeoutMs: Math.min(NETWORK_TIMEOUT_MS, 20_000) });
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
      else checks.push({ name: 'remote sync', status: 'warn', detail: `the remote moved since this machine last verified it${anchor ? ` (seq ${anchor.seq})` : ''}: the local copy is behind`, fix: 'run `ledger sync` (every writer also does first)' });
    }
  }
  const queued = readOutbox(rp).length;
  if (queued) checks.push({ name: 'outbox', status: 'warn', detail: `${queued} --offline write${queued === 1 ? '' : 's'} wait, not published`, fix: 'run `ledger sync` once the remote is reachable' });
  const repo = runGit(['rev-parse', '--git-dir'], { gitDir: rp.repo });
  checks.push(repo.status === 0
    ? { name: 'remote fetch', status: 'ok', detail: `fetched into ${rp.repo} (a private repository: the project's git config is never used)` }
    : { name: 'remote fetch', status: 'warn', detail: `the private repository ${rp.repo} is missing`, fix: 'the next `ledger sync` makes it' });
  return checks;
}
