// One error type for the whole package. Bad input *throws* a coded LedgerError; a failed
// verification is a *finding* (audit/, the gate), never an exception.
//
// The code's prefix decides the exit code of the CLI (SPEC 10 and the README's table):
//   USAGE_* and INPUT_*  -> 2  (a bad flag, argument, file or payload; nothing was changed)
//   OP_*                 -> 3  (operational: lock timeout, I/O, permissions, a corrupt ledger)
//   anything else        -> 1  (internal: a bug)

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
  | 'OP_LOCK_TIMEOUT'
  | 'OP_IO'
  | 'OP_PERMISSION'
  | 'OP_INSECURE_KEY'
  | 'OP_CORRUPT'
  | 'OP_NO_LEDGER'
  | 'INTERNAL';

export class LedgerError extends Error {
  readonly code: ErrorCode;
  /** Structured facts for `--json` output and for tests (expected/actual, paths, ids). */
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'LedgerError';
    this.code = code;
    this.data = data;
  }

  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

export function exitCodeFor(code: string): number {
  if (code === 'USAGE' || code.startsWith('INPUT_')) return 2;
  if (code.startsWith('OP_')) return 3;
  return 1;
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
