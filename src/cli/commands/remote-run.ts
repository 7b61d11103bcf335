// `ledger init --remote` (joining) and `ledger sync` (SPEC 11). Registered in remote.ts and
// write.ts; the work is src/remote/sync.ts.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fsyncDir, removeQuietly, replaceFileDurable } from '../../fs/durable.js';
import { realFileOps } from '../../fs/ops.js';
import { LedgerError } from '../../errors.js';
import { readTrust } from '../../keys/trust-file.js';
import { Ledger } from '../../ledger.js';
import { joinLedger, resolveRemoteUrl } from '../../remote/sync.js';
import type { Signer } from '../../sign.js';
import { emit, flag, keyPath, ledgerDir, one, trustPath, waitMs, type CliIO, type Opts } from './common.js';
import { remoteOpts } from './remote-opts.js';

export interface JoinInput {
  dir: string;
  remote: string;
  signer: Signer;
  agent: string;
  name: string | undefined;
  waitMs: number;
  trustPath: string;
  keyPath: string;
  created: boolean;
  pinned: boolean;
  gitignore: { file: string | null; added: string[]; tracked: string[] } | null;
}

/** What `init --remote` found before it wrote anything: the trust file's bytes, the key's folder. */
export interface BeforeJoin { keyPath: string; keyDirExisted: boolean; trustPath: string; trust: { data: Buffer; mode: number } | null }

export function beforeJoin(keyPath: string, trustPath: string): BeforeJoin {
  const trust = existsSync(trustPath) ? { data: readFileSync(trustPath), mode: statSync(trustPath).mode & 0o777 } : null;
  return { keyPath, keyDirExisted: existsSync(dirname(keyPath)), trustPath, trust };
}

/**
 * Refusals of a join that published nothing of this machine's: the remote's answer checked
 * (REMOTE_*: a fork, rollback, bad record or pin), the remote unreachable or refusing the ref,
 * contention that never settled, a bad --remote, a ledger already joined. Not a push that may
 * have landed (`maybe_published`), nor an I/O failure after one.
 */
function publishedNothing(e: unknown): boolean {
  if (!(e instanceof LedgerError) || e.data.maybe_published === true) return false;
  return e.code.startsWith('REMOTE_') || ['OP_REMOTE', 'OP_REMOTE_UNREACHABLE', 'OP_REMOTE_REFUSED', 'OP_REMOTE_CONTENDED', 'OP_LOCK_TIMEOUT', 'INPUT_EXISTS', 'USAGE'].includes(e.code);
}

/**
 * Policy: a refused `init --remote` leaves nothing half-done: when the refusal says nothing of
 * this machine's was published, the .gitignore lines, the key this init created (its folder too,
 * when init made it) and the pin it added are put back as they were, so the same command can be
 * run again once the cause is fixed. After a push that may have landed, or another failure, they
 * stay (the key may sign a published genesis); the error says what to run next. A crash in
 * between leaves them too: the next `init --remote` uses them as any existing key and pin.
 */
export function undoRefusedJoin(e: unknown, before: BeforeJoin, wrote: { created: boolean; kept: { undo: () => void } | null }): void {
  if (!publishedNothing(e)) return;
  wrote.kept?.undo();
  if (before.trust) {
    replaceFileDurable(realFileOps, dirname(before.trustPath), basename(before.trustPath), before.trust.data, before.trust.mode);
  } else if (existsSync(before.trustPath)) {
    removeQuietly(realFileOps, before.trustPath);
    fsyncDir(realFileOps, dirname(before.trustPath));
  }
  if (wrote.created) {
    removeQuietly(realFileOps, before.keyPath);
    fsyncDir(realFileOps, dirname(before.keyPath));
    if (!before.keyDirExisted) {
      try {
        realFileOps.rmdir(dirname(before.keyPath));
      } catch {
        /* not empty: something else is in it, and it stays */
      }
    }
  }
}

export function runJoin(io: CliIO, opts: Opts, j: JoinInput): number {
  const ref = one(opts, 'remoteRef', 'remote-ref');
  if (ref !== undefined && !/^refs\/[A-Za-z0-9._/-]+$/.test(ref)) throw new LedgerError('USAGE', `--remote-ref expected a ref under refs/, got "${ref}"`);
  const url = resolveRemoteUrl(j.remote, io.cwd);
  const trust = readTrust(j.trustPath);
  const r = joinLedger({ dir: j.dir, url, ref, trustPath: j.trustPath, trust, signer: j.signer, agent: j.agent, name: j.name, env: io.env, waitMs: j.waitMs });
  const lines = [
    r.created ? `initialised ledger ${j.dir} and published its genesis to ${url} (${r.ref})` : `joined the ledger on ${url} (${r.ref}) at seq ${r.head.seq}: ${r.adopted} record${r.adopted === 1 ? '' : 's'} verified and copied to ${j.dir}`,
    `genesis ${r.head.genesis}`,
  ];
  if (j.created) lines.push(`created key ${j.keyPath} (mode 0600) and pinned it in ${j.trustPath}: the other machines need this pin too (commit the trust file)`);
  if (j.gitignore?.file) lines.push(`git ignores ${j.gitignore.added.join(' and ')} now (added to ${j.gitignore.file}): commit the trust file, never the key`);
  if (!j.pinned) io.stderr(`ledger: warning: key ${j.signer.publicKey} is not pinned in ${j.trustPath}; other machines will refuse its records until the trust file pins it\n`);
  emit(io, opts, { ok: true, dir: j.dir, genesis: r.head.genesis, seq: r.head.seq, remote: { url, ref: r.ref, commit: r.commit }, created: r.created, adopted: r.adopted, key: j.signer.publicKey, key_created: j.created, trust: j.trustPath, pinned: j.pinned }, lines);
  return 0;
}

export function runSync(io: CliIO, opts: Opts): number {
  const dir = ledgerDir(io, opts);
  const keyGiven = one(opts, 'key') !== undefined || io.env.LEDGER_KEY !== undefined;
  const kp = keyPath(io, opts);
  const given = one(opts, 'trust') !== undefined || io.env.LEDGER_TRUST !== undefined;
  const ledger = Ledger.open({ dir, key: keyGiven || existsSync(kp) ? kp : undefined, waitMs: waitMs(opts), ...remoteOpts(io, opts), ...(given ? { trust: trustPath(io, opts) } : {}) });
  const r = ledger.sync({ acceptRemote: flag(opts, 'acceptRemote') });
  const lines: string[] = [];
  if (flag(opts, 'acceptRemote')) lines.push(`re-anchored on the remote at seq ${r.head.seq} (verified from genesis); writers may write again`);
  lines.push(r.adopted ? `took ${r.adopted} record${r.adopted === 1 ? '' : 's'} from the remote (verified from the anchor)` : 'the local copy was already up to date with the remote');
  for (const p of r.published) lines.push(`published queued ${p.kinds.join(', ')} as seq ${p.seqs.join(', ')}`);
  for (const d of r.dropped) lines.push(`dropped queued ${d.kinds.join(', ')}${d.slug ? ` of ${d.slug}` : ''}, not published: ${d.reason}`);
  if (r.waiting) lines.push(`${r.waiting} queued write${r.waiting === 1 ? '' : 's'} still wait: the remote cannot be reached`);
  lines.push(`HEAD seq ${r.head.seq} ${r.head.tail}`);
  for (const d of r.dropped) io.stderr(`ledger: warning: a queued ${d.kinds.join(', ')} was dropped: ${d.reason}\n`);
  emit(io, opts, { ok: true, adopted: r.adopted, published: r.published, dropped: r.dropped, waiting: r.waiting, head: r.head, commit: r.commit }, lines);
  return 0;
}
