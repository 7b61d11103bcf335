// The publication point (SPEC 11): a push the remote accepts only while the ref still has the
// value the writer built on, `git push --porcelain --force-with-lease=REF:<expected>` (an empty
// expected value: the ref must not exist yet). Each refusal is classified, because each needs
// another answer:
//   moved        the lease failed or the ref moved (contention): rebuild on the new tail, retry
//   refused      the host refused the ref itself (a hook, a protected namespace): stop, say why
//   unreachable  no answer: exit 3, nothing changed here
//   unknown      the push may have reached the remote (it timed out or broke off mid-way): exit
//                3; the next fetch finds out whether the records were published
import { LedgerError } from '../errors.js';
import { checkRemoteUrl, gitComplaint, NETWORK_TIMEOUT_MS, runGit } from './git.js';

export type PushOutcome =
  | { kind: 'published' }
  | { kind: 'moved'; detail: string }
  | { kind: 'refused'; detail: string }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'unknown'; detail: string };

/** Reads `git push --porcelain` for our one ref: "<flag>\t<from>:<to>\t<summary> (<reason>)". */
export function classifyPush(status: number, stdout: string, stderr: string, ref: string, timedOut: boolean): PushOutcome {
  const line = stdout.split('\n').find((l) => l.includes(`:${ref}\t`));
  if (timedOut) return { kind: line ? 'unknown' : 'unknown', detail: 'git push timed out' };
  if (!line) {
    return { kind: 'unreachable', detail: (stderr.split('\n').find((l) => l.startsWith('fatal:')) ?? stderr.trim().split('\n')[0] ?? `git push exited ${status}`).replace(/^fatal: /, '') };
  }
  const [flag, , summary = ''] = line.split('\t');
  if (flag === ' ' || flag === '*' || flag === '+' || flag === '=') return status === 0 || flag === '=' ? { kind: 'published' } : { kind: 'unknown', detail: summary };
  if (flag === '!') {
    // "[rejected] (stale info)": the lease; "(fetch first)", "(non-fast-forward)": the ref moved.
    if (/^\[rejected\]/.test(summary)) return { kind: 'moved', detail: summary };
    // "[remote rejected] (reason)": a hook or the host's rules refused this ref; retrying cannot help.
    if (/^\[remote rejected\]/.test(summary)) {
      // Policy: a lease that lost a race inside the remote ("failed to update ref", "cannot lock
      // ref", "incorrect old value") is contention too, not the host refusing the ref.
      if (/cannot lock ref|failed to update ref|incorrect old value|failed to lock|reference already exists/.test(summary)) return { kind: 'moved', detail: summary };
      return { kind: 'refused', detail: summary };
    }
    if (/^\[remote failure\]/.test(summary)) return { kind: 'unknown', detail: summary };
    return { kind: 'refused', detail: summary };
  }
  return { kind: 'unknown', detail: summary || `git push exited ${status}` };
}

/** Pushes `commit` to `ref` on `url` iff the ref is `expected` there now (null: absent). */
export function pushWithLease(repo: string, url: string, ref: string, commit: string, expected: string | null): PushOutcome {
  const r = runGit(['push', '--porcelain', `--force-with-lease=${ref}:${expected ?? ''}`, '--', checkRemoteUrl(url), `${commit}:${ref}`], { gitDir: repo, timeoutMs: NETWORK_TIMEOUT_MS });
  return classifyPush(r.status, r.stdout.toString('utf8'), r.stderr, ref, r.timedOut);
}

/** The documented fallback for a host that refuses custom refs (README "Across machines"). */
// Policy: a branch the ledger alone writes; a host that refuses custom refs accepts branches.
export const FALLBACK_REF = 'refs/heads/handoff-ledger';

export function refusedByHost(url: string, ref: string, detail: string): LedgerError {
  return new LedgerError('OP_REMOTE_REFUSED', `the remote ${url} refused ${ref}: ${detail}; nothing was published`, { url, ref, detail },
    ref === FALLBACK_REF ? 'ask the host to allow pushes to this branch' : `a host that refuses custom refs takes a branch: join with \`ledger init --remote REMOTE --remote-ref ${FALLBACK_REF}\` (README "Across machines")`);
}

export function pushUnknown(url: string, detail: string): LedgerError {
  return new LedgerError('OP_REMOTE_UNREACHABLE', `the push to ${url} did not finish (${detail}); it may or may not have been published`, { url, maybe_published: true }, 'run `ledger sync`: it fetches the remote and shows whether the record is there');
}

export { gitComplaint };
