// One error type for the whole package. Bad input *throws* a coded LedgerError; a failed
// verification is a *finding* (audit/, the gate), never an exception.
//
// A LedgerError's message states the fact ("HEAD is not canonical JSON"); what to do about it is
// its `hint` ("run `ledger audit` to see what happened"), kept apart so that a library caller gets
// the fact alone and the CLI prints the advice without matching message text.
//
// EXIT below is the one table of exit codes: the CLI, the auditor's layers, the gate, `render
// --check`, the help text and the table in docs/guarantees.md derive from it.

/** Every exit code the CLI uses, with its meaning (SPEC 8-10, docs/guarantees.md "Exit codes"). */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  operational: 3,
  schema: 10,
  linkage: 11,
  signature: 12,
  keyPin: 13,
  freshness: 14,
  hold: 20,
  viewsDiffer: 30,
  setupDiffers: 31,
} as const;

export type ExitName = keyof typeof EXIT;

/** What each exit code means, in the order a reader scans them (help text, docs/guarantees.md). */
export const EXIT_MEANINGS: readonly { code: number; meaning: string }[] = [
  { code: EXIT.ok, meaning: 'ok (audit: pass; gate: proceed)' },
  { code: EXIT.internal, meaning: 'internal error: a bug, please report it' },
  { code: EXIT.usage, meaning: 'usage or bad input (a flag, argument, payload or file); nothing was changed' },
  { code: EXIT.operational, meaning: 'operational: lock timeout, I/O error, permissions, an insecure key file, a corrupt ledger' },
  { code: EXIT.schema, meaning: 'audit: schema' },
  { code: EXIT.linkage, meaning: 'audit: linkage' },
  { code: EXIT.signature, meaning: 'audit: signature' },
  { code: EXIT.keyPin, meaning: 'audit: key-pin' },
  { code: EXIT.freshness, meaning: 'audit: freshness' },
  { code: EXIT.hold, meaning: 'gate: hold' },
  { code: EXIT.viewsDiffer, meaning: 'render --check: a view is missing, stale or was edited' },
  { code: EXIT.setupDiffers, meaning: 'setup --check: a file setup writes is missing or stale' },
];

/** The hint of every error that means the ledger's files are not what a writer left. */
export const RUN_AUDIT = 'run `ledger audit` to see what happened';

export type ErrorCode =
  | 'USAGE'
  | 'INPUT_JSON'
  | 'INPUT_CANONICAL'
  | 'INPUT_SCHEMA'
  | 'INPUT_KEY'
  | 'INPUT_TRUST'
  | 'INPUT_EVIDENCE'
  | 'INPUT_EXISTS'
  | 'INPUT_NOT_FOUND'
  | 'INPUT_CONFLICT'
  | 'INPUT_REFUSED'
  | 'INPUT_AMBIGUOUS'
  | 'INPUT_TOO_LARGE'
  | 'INPUT_NOTE'
  | 'INPUT_PROOF'
  | 'INPUT_POLICY'
  | 'OP_LOCK_TIMEOUT'
  | 'OP_IO'
  | 'OP_PERMISSION'
  | 'OP_INSECURE_KEY'
  | 'OP_INSECURE_PATH'
  | 'OP_CORRUPT'
  | 'OP_NO_LEDGER'
  | 'OP_UNTRUSTED_HEAD'
  | 'OP_ROLLBACK'
  | 'OP_FORK'
  | 'OP_NOT_REGULAR'
  | 'OP_SYMLINK'
  | 'OP_STATE'
  | 'OP_REMOTE'
  | 'OP_REMOTE_UNREACHABLE'
  | 'OP_REMOTE_REFUSED'
  | 'OP_REMOTE_CONTENDED'
  | 'REMOTE_SCHEMA'
  | 'REMOTE_LINKAGE'
  | 'REMOTE_SIGNATURE'
  | 'REMOTE_KEY_PIN'
  | 'REMOTE_FRESHNESS'
  | 'KEY_NOT_ACCEPTED'
  | 'INTERNAL';

export class LedgerError extends Error {
  readonly code: ErrorCode;
  /** Structured facts for `--json` output and for tests (expected/actual, paths, ids). */
  readonly data: Record<string, unknown>;
  /** What to do next, when the thrower knows ("run `ledger audit` to see what happened"). */
  readonly hint: string | null;

  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, hint: string | null = null) {
    super(message);
    this.name = 'LedgerError';
    this.code = code;
    this.data = data;
    this.hint = hint;
  }

  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

const REMOTE_EXIT: Readonly<Record<string, number>> = {
  REMOTE_SCHEMA: EXIT.schema,
  REMOTE_LINKAGE: EXIT.linkage,
  REMOTE_SIGNATURE: EXIT.signature,
  REMOTE_KEY_PIN: EXIT.keyPin,
  REMOTE_FRESHNESS: EXIT.freshness,
};

/** The code's prefix decides the exit: USAGE and INPUT_* are usage (2), OP_* operational (3). */
export function exitCodeFor(code: string): number {
  if (code === 'USAGE' || code.startsWith('INPUT_')) return EXIT.usage;
  // SPEC 7: a writer refuses to sign what its own trust would reject, as the audit would (13).
  if (code === 'KEY_NOT_ACCEPTED') return EXIT.keyPin;
  if (code.startsWith('OP_')) return EXIT.operational;
  // SPEC 11: what a fetched remote fails is reported as the audit layer it fails (a fork is
  // linkage, 11; a rollback freshness, 14).
  if (code.startsWith('REMOTE_')) return REMOTE_EXIT[code] ?? EXIT.internal;
  return EXIT.internal;
}

/** Maps a Node fs error to an operational LedgerError that names the path and what failed. */
export function ioError(err: unknown, action: string, path: string): LedgerError {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof LedgerError) return e;
  const code = e?.code ?? 'EUNKNOWN';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new LedgerError('OP_PERMISSION', `cannot ${action} ${path}: permission denied (${code}); check the directory's owner and mode`, { path, errno: code });
  }
  return new LedgerError('OP_IO', `cannot ${action} ${path}: ${code}${e?.message ? ` (${e.message.replace(/^[A-Z]+: /, '').split(',')[0]})` : ''}`, { path, errno: code });
}
