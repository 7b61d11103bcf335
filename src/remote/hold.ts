// A fork or a rollback of the remote is not for a program to settle (SPEC 11): both states are
// saved as evidence, the local copy is kept as it was, and a hold is set that makes every writer
// (and `sync`) refuse with the same exit until a person decides (README "Across machines":
// review, then `ledger sync --accept-remote`, or move the local copy aside and join again).
import { join } from 'node:path';
import { LedgerError, type ErrorCode } from '../errors.js';
import { mkdirDurable, replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { runGit } from './git.js';
import { readStateJson, writeStateJson, type RemotePaths } from './state.js';
import { readBlobs } from './tree.js';

export interface Hold { v: 1; kind: 'fork' | 'rollback'; code: ErrorCode; message: string; evidence: string; commit: string | null; at: string }

export function readHold(p: RemotePaths): Hold | null {
  return readStateJson(p.hold) as Hold | null;
}

// Policy: the hold outlives the condition: a ref put back where it was does not lift it, since
// someone moved it once; only a person's `sync --accept-remote` does.
export function holdRefusal(h: Hold): LedgerError {
  return new LedgerError(h.code === 'REMOTE_FRESHNESS' ? 'REMOTE_FRESHNESS' : 'REMOTE_LINKAGE', `refusing to write: a ${h.kind} of the remote was found at ${h.at} (${h.message}); the local copy is kept as it was`, { kind: h.kind, evidence: h.evidence, hold: true },
    `a person decides: review ${h.evidence}, then \`ledger sync --accept-remote\` to re-anchor on the remote as it is, or restore the remote's ref`);
}

/** Whether `e` is a fork or rollback that must hold every writer. */
export function holdKind(e: unknown): 'fork' | 'rollback' | null {
  if (!(e instanceof LedgerError)) return null;
  const kind = e.data.kind;
  return (e.code === 'REMOTE_LINKAGE' && kind === 'fork') || (e.code === 'REMOTE_FRESHNESS' && kind === 'rollback') ? (kind as 'fork' | 'rollback') : null;
}

/**
 * Saves both states (the local HEAD and anchor, the remote's HEAD, and its commit under a private
 * ref so git keeps its objects) into evidence/<time>-<kind>/, and sets the hold.
 */
export function setHold(p: RemotePaths, e: LedgerError, kind: 'fork' | 'rollback', localHead: Buffer | null, commit: string | null, now: Date): Hold {
  const stamp = `${now.toISOString().replace(/[:.]/g, '-')}-${kind}`;
  const dir = join(p.evidence, stamp);
  mkdirDurable(realFileOps, dir, 0o700);
  const anchor = (() => {
    try {
      return realFileOps.readFile(p.anchor);
    } catch {
      return null;
    }
  })();
  if (anchor) replaceFileDurable(realFileOps, dir, 'anchor.json', anchor, 0o600);
  if (localHead) replaceFileDurable(realFileOps, dir, 'local-HEAD', localHead, 0o600);
  if (commit) {
    const [remoteHead] = readBlobs(p.repo, commit, ['HEAD']);
    if (remoteHead) replaceFileDurable(realFileOps, dir, 'remote-HEAD', remoteHead, 0o600);
    runGit(['update-ref', `refs/handoff-ledger/evidence/${stamp}`, commit], { gitDir: p.repo });
  }
  replaceFileDurable(realFileOps, dir, 'what.json', Buffer.from(`${JSON.stringify({ kind, message: e.message, data: e.data, remote_commit: commit, objects: p.repo, evidence_ref: commit ? `refs/handoff-ledger/evidence/${stamp}` : null })}\n`), 0o600);
  const hold: Hold = { v: 1, kind, code: e.code, message: e.message, evidence: dir, commit, at: now.toISOString() };
  writeStateJson(p.hold, hold);
  return hold;
}

export function clearHold(p: RemotePaths): void {
  try {
    realFileOps.unlink(p.hold);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
