// Where a machine keeps what it knows about the remote of one ledger: in the per-user state
// directory (docs/guarantees.md "The per-user state directory": $LEDGER_STATE_DIR, else
// $XDG_STATE_HOME/handoff-ledger, else ~/.local/state/handoff-ledger), never in the ledger
// directory or the repository, which a remote or a checkout can change:
//
//   remote/<ledger>/join.json    which remote this ledger is joined to, and the trust file
//   remote/<ledger>/anchor.json  the last remote state this machine verified (anchor.ts)
//   remote/<ledger>/hold.json    a fork or rollback found: every writer refuses (hold.ts)
//   remote/<ledger>/objects.git  the private bare repository the ref is fetched into and
//                                publications are built in (its config is ours alone). It
//                                persists, as a cache of the remote's objects: the fetched ref
//                                (FETCHED_REF), the last commit built (tree.ts BUILT_REF) and
//                                each hold's remote commit (hold.ts) name what it keeps
//   remote/<ledger>/evidence/    both states of each fork or rollback found (hold.ts)
//   remote/<ledger>/outbox.json  drafts queued by --offline (outbox.ts)
//   remote/<ledger>/witnesses.json what the policy's witnesses answered to this machine's last
//                                publication (witnesses.ts): `status` and `doctor` say which were away
//   remote/<ledger>/fetched.json when this machine last learned the remote's state (a verified
//                                fetch or its own publication): what a read says about how
//                                current it is (current.ts)
//
// `<ledger>` digests the realpath of the ledger directory: one machine's copy of one ledger.
// Nothing else is written there: no staging copy, no temp folder (a join makes a new genesis in
// memory), and a join that fails removes the folder it made (sync.ts joinLedger).
import { basename, dirname, join } from 'node:path';
import { LedgerError, ioError } from '../errors.js';
import { mkdirDurable, replaceFileDurable } from '../fs/durable.js';
import { confineRoot } from '../fs/confine.js';
import { realFileOps } from '../fs/ops.js';
import { parseJsonStrict, sha256Hex } from '../canonical.js';
import { checkRemoteUrl } from './git.js';
import { ledgerKeyPath } from '../store/state-dir.js';

export type { Env } from '../store/state-dir.js';
/** The per-user state directory for `env` (the store's rule, store/state-dir.ts). */
export { stateDirFrom as stateDirOf } from '../store/state-dir.js';

export interface RemotePaths {
  dir: string;
  join: string;
  anchor: string;
  hold: string;
  repo: string;
  evidence: string;
  outbox: string;
  fetched: string;
  witnesses: string;
}

export function remotePaths(stateDir: string, ledgerDir: string): RemotePaths {
  confineRoot(stateDir, true);
  // The ledger directory's realpath as the writer's state names it (taken once per process).
  const key = sha256Hex(`remote\0${ledgerKeyPath(ledgerDir)}`).slice(0, 32);
  const dir = join(stateDir, 'remote', key);
  return {
    dir,
    join: join(dir, 'join.json'),
    anchor: join(dir, 'anchor.json'),
    hold: join(dir, 'hold.json'),
    repo: join(dir, 'objects.git'),
    evidence: join(dir, 'evidence'),
    outbox: join(dir, 'outbox.json'),
    fetched: join(dir, 'fetched.json'),
    witnesses: join(dir, 'witnesses.json'),
  };
}

/** Makes the state folder (0700: it says which ledgers and remotes a user works with). */
export function ensureRemoteDir(p: RemotePaths): void {
  try {
    mkdirDurable(realFileOps, p.dir, 0o700);
  } catch (e) {
    throw new LedgerError('OP_REMOTE', `cannot create the per-user state directory ${p.dir} (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { path: p.dir }, 'set LEDGER_STATE_DIR to a directory you can write');
  }
}

/** Reads one of our JSON state files; null when absent. A file we cannot parse is refused (fail closed). */
export function readStateJson(path: string): unknown | null {
  let text: string;
  try {
    text = realFileOps.readFile(path).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError(e, 'read', path);
  }
  try {
    return parseJsonStrict(text, path);
  } catch {
    throw new LedgerError('OP_CORRUPT', `${path} is not the JSON this machine wrote`, { path }, 'restore it, or remove the folder and join again with `ledger init --remote`');
  }
}

/** Replaces one of our JSON state files (a RemotePaths path) durably: after a crash the old one or the new. */
export function writeStateJson(path: string, value: unknown): void {
  replaceFileDurable(realFileOps, dirname(path), basename(path), Buffer.from(`${JSON.stringify(value)}\n`), 0o600);
}

/** join.json: which remote, which ref, and the trust file the remote's records are checked against. */
export interface JoinInfo { v: 1; url: string; ref: string; trust: string }

export const LEDGER_REF = 'refs/handoff/ledger';
/** Where the fetched ref is kept in the private repository. */
export const FETCHED_REF = 'refs/handoff-ledger/fetched';

export function readJoin(p: RemotePaths): JoinInfo | null {
  const v = readStateJson(p.join) as Partial<JoinInfo> | null;
  if (v === null) return null;
  const malformed = () => new LedgerError('OP_CORRUPT', `${p.join} is malformed`, { path: p.join }, 'join again with `ledger init --remote`');
  if (v.v !== 1 || typeof v.url !== 'string' || typeof v.ref !== 'string' || typeof v.trust !== 'string' || !/^refs\/[A-Za-z0-9._/-]+$/.test(v.ref)) throw malformed();
  // Fail closed: a URL git could read as an option or a helper is refused here too (git.ts).
  try {
    checkRemoteUrl(v.url);
  } catch {
    throw malformed();
  }
  return v as JoinInfo;
}
