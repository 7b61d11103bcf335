// What every verb shares: the I/O it writes to, the flags every verb (or every writer) takes, env
// defaults (SPEC 10: where the ledger, the key and the trust file are, who writes), and one way to
// print a result. Light on purpose: this file is loaded on every command, so it imports nothing
// heavy.
import type { CAC } from 'cac';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { locateLedger, type LedgerLocation } from '../../project/locate.js';
import { parseDuration } from '../../requests/fields.js';
import { neutralise, neutraliseLine } from '../../text/sanitize.js';
import { bool, kebab, one, type Flags } from '../flags.js';

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /**
   * Reads all of standard input (for `append --batch`, `hook`), as strict UTF-8. `maxBytes`: a
   * larger input is refused (INPUT_TOO_LARGE, exit 2) once that many bytes were read, never
   * read whole (readStdinUpTo). `deadlineMs`: stdin that has not ended by then is refused, and
   * no read of it outlives the deadline (the hook's).
   */
  readStdin: (maxBytes?: number, deadlineMs?: number) => Promise<string>;
  /** Whether stderr is a terminal (progress lines, colour). */
  isTTY: boolean;
  /** stdout's width in columns when it is a terminal, else undefined (issue 26: `status` and `resume` fit it). */
  columns?: number;
}

/**
 * The width `status` and `resume` fit their text to: the terminal's, when stdout is one at least
 * 40 columns wide; else none (a pipe or a file gets the lines whole, as scripts expect).
 */
export function terminalWidth(io: CliIO): number | undefined {
  const c = io.columns;
  return typeof c === 'number' && Number.isInteger(c) && c >= 40 ? c : undefined;
}

/** cac's loose option values; a verb reads them only through its flag set (../flags.ts readFlags). */
export type Opts = Record<string, unknown>;

/** The refusal of an input over its bound (issue 23: a 700 MB batch was refused as "not valid UTF-8"). */
export function tooLarge(what: string, maxBytes: number): LedgerError {
  const mib = maxBytes >= 1 << 20 ? `${maxBytes / (1 << 20)} MiB` : `${maxBytes} bytes`;
  return new LedgerError('INPUT_TOO_LARGE', `${what} is over ${mib}; nothing was read past that, and nothing was changed`, { max_bytes: maxBytes }, `split it into parts of at most ${mib}`);
}

/** Standard input, at most `maxBytes` of it (see CliIO.readStdin), or the refusal of more. */
export async function readStdinUpTo(io: CliIO, maxBytes: number, what: string, deadlineMs?: number): Promise<string> {
  let text: string;
  try {
    text = await io.readStdin(maxBytes, deadlineMs);
  } catch (e) {
    if (e instanceof LedgerError && e.code === 'INPUT_TOO_LARGE') throw tooLarge(what, maxBytes);
    throw e;
  }
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw tooLarge(what, maxBytes);
  return text;
}

/** An env variable, with an empty value counting as unset (SPEC 10, issue 2). */
export function envValue(io: CliIO, name: string): string | undefined {
  const v = io.env[name];
  return v === undefined || v === '' ? undefined : v;
}

// The flags every verb takes (declared on the command line itself: cli.ts), and those of every
// verb that checks or writes, declared once so their help reads the same everywhere.
export const GLOBAL = {
  dir: one('<dir>', 'Ledger directory (default: $LEDGER_DIR, else the nearest .ledger here or above)'),
  json: bool('Print one JSON object on stdout'),
};
export type Global = Flags<typeof GLOBAL>;
// A writer takes --trust too (SPEC 5: it builds only on a HEAD whose key is pinned or its own).
export const TRUST = () => ({ trust: one('<file>', 'Trust file of pinned keys (default: $LEDGER_TRUST, else keys/trust.json in the project root)') });
/**
 * SPEC 13, a consumer's witness policy. Policy: a C2SP tlog-policy FILE (not a trust-file section:
 * the format existing witness tooling reads), given by --policy, else `tlog-policy` beside the
 * trust file when there is one, committed with it; a --policy that is missing is an error, never
 * "no policy". Under one, the verbs that take a remote state (init --remote, sync, gate, and the
 * writers before they build on it) accept it only when the quorum stands behind its checkpoint.
 */
export const WITNESS_POLICY = () => ({
  policy: one('<file>', 'A C2SP tlog-policy (default: tlog-policy beside the trust file, if there is one): take a remote state only when its quorum of witnesses stands behind it (a rewound ref: exit 14)'),
  witnessAge: one('<dur>', 'With a policy: how old a cosignature may be when its witness cannot be asked (default 24h)'),
});
export const WRITER = () => ({
  key: one('<file>', 'Secret key file (default: $LEDGER_KEY, else keys/harness.key in the project root)'),
  agent: one('<name>', 'Who is writing (default: $LEDGER_AGENT)'),
  wait: one('<dur>', 'How long to wait for the writer lock (default: 10s)'),
  offline: bool('In a ledger joined to a remote: when it cannot be reached, queue the write (not published until `ledger sync`)'),
  ...TRUST(),
});
export type Writer = Flags<ReturnType<typeof WRITER>> & Global;

/**
 * Where this command's ledger is (SPEC 3): --dir, else $LEDGER_DIR, else found as git finds its
 * repository (src/project/locate.ts). Found once per command: the search may ask git.
 */
export function ledgerLocation(io: CliIO, f: Pick<Global, 'dir'>): LedgerLocation {
  let loc = located.get(io);
  if (!loc) {
    loc = locateLedger({ cwd: io.cwd, dir: f.dir, envDir: envValue(io, 'LEDGER_DIR') });
    if (loc.source === 'flag' || loc.source === 'env') refuseMisnamed(io, loc);
    located.set(io, loc);
  }
  return loc;
}
const located = new WeakMap<CliIO, LedgerLocation>();

/**
 * A named directory that holds no ledger while the working directory is inside a project that
 * has one: say which, rather than let the verb's "no ledger" advise `ledger init` (SPEC 3).
 * (`init` does not come here: it takes its directory from initTarget.)
 */
function refuseMisnamed(io: CliIO, loc: LedgerLocation): void {
  if (existsSync(join(loc.dir, 'HEAD')) || existsSync(join(loc.dir, 'records.jsonl'))) return;
  let near: LedgerLocation;
  try {
    near = locateLedger({ cwd: io.cwd });
  } catch {
    return;
  }
  if (near.source === 'none' || near.dir === loc.dir) return;
  const named = loc.source === 'flag' ? '--dir' : 'LEDGER_DIR';
  throw new LedgerError('INPUT_NOT_FOUND', `no ledger at ${loc.dir} (no HEAD), which ${named} names`, { dir: loc.dir, nearest: near.dir }, `this folder's ledger is ${near.dir}: leave out --dir and LEDGER_DIR to use it, or name it`);
}

/** The ledger directory (see ledgerLocation). */
export function ledgerDir(io: CliIO, f: Pick<Global, 'dir'>): string {
  return ledgerLocation(io, f).dir;
}
/**
 * The secret key file: --key, else $LEDGER_KEY, else `keys/harness.key` in the project root.
 * Policy: a path given (flag or variable) is taken as typed, relative to the working directory,
 * as every command-line tool reads a path; only the defaults belong to the project root.
 */
export function keyPath(io: CliIO, f: Pick<Global, 'dir'> & { key?: string }, root?: string): string {
  const given = f.key ?? envValue(io, 'LEDGER_KEY');
  return given !== undefined ? resolve(io.cwd, given) : join(root ?? ledgerLocation(io, f).root, 'keys', 'harness.key');
}
/** The trust file: --trust, else $LEDGER_TRUST, else `keys/trust.json` in the project root (as keyPath). */
export function trustPath(io: CliIO, f: Pick<Global, 'dir'> & { trust?: string }, root?: string): string {
  const given = f.trust ?? envValue(io, 'LEDGER_TRUST');
  return given !== undefined ? resolve(io.cwd, given) : join(root ?? ledgerLocation(io, f).root, 'keys', 'trust.json');
}
/** Who writes or asks: --agent, else $LEDGER_AGENT, else `fallback` (e.g. the key's name); unset when none (the request's check says what that means). */
export function agentOf(io: CliIO, f: { agent?: string }, fallback?: string): string | undefined {
  return f.agent ?? envValue(io, 'LEDGER_AGENT') ?? fallback;
}
/** --wait for the writer lock, default 10 s. */
export function waitMs(f: { wait?: string }): number {
  return f.wait === undefined ? 10_000 : parseDuration(f.wait, 'wait');
}

/**
 * Prints a result: one JSON object with --json, else the text. An array is lines: each element
 * is one output line, so a line feed inside one (record text) is shown as `\u000A`, never as a
 * second line; a string is a block whose line feeds are kept. Either way every other control,
 * bidi or invisible code point is neutralised (../../text/sanitize.ts). The JSON is exact:
 * `neutralise` only writes such code points as JSON escapes, which parse to the same values.
 */
export function emit(io: CliIO, to: { json?: boolean }, json: unknown, textOf: string | string[] | (() => string | string[])): void {
  // SPEC 11: a write queued by --offline says so in every output, --json included.
  if (queuedWrites.has(io) && json !== null && typeof json === 'object' && !Array.isArray(json)) json = { ...json, queued: true, published: false };
  if (to.json === true) {
    io.stdout(neutralise(JSON.stringify(json)) + '\n');
    return;
  }
  // Speed (issue 22: the read verbs <= 1.6x `node -e ''`): a verb passes its text as a function
  // when making it costs (`status`'s table was about 4% of `ledger status --json`), so --json never makes it.
  const text = typeof textOf === 'function' ? textOf() : textOf;
  if (Array.isArray(text)) {
    if (text.length) io.stdout(text.map(neutraliseLine).join('\n') + '\n');
  } else {
    const t = neutralise(text);
    if (t) io.stdout(t.endsWith('\n') ? t : t + '\n');
  }
}

/** The runs whose write was queued by --offline instead of published (remote-opts.ts marks them). */
export const queuedWrites = new WeakSet<CliIO>();

/** The runs that published a write: after the command, their witnesses are asked (witness-after.ts). */
export const publishedWrites = new WeakMap<CliIO, { dir: string; trustFile: string; flags: { policy?: string } }>();

/**
 * The values of `--name V` / `--name=V` exactly as typed, in order (before a `--`).
 * cac's parser (mri) turns number-like values into numbers before `type: [String]` turns them
 * back: `--next ''` arrives as "0", `--done 1e3` as "1000", `--state 007` as "7", `--note=` as
 * "true". Free text must reach the ledger as typed, and an empty value must be seen as empty.
 * A missing value (end of argv, or the next token is a flag, as mri reads it) is "".
 */
export function rawFlagValues(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i];
    if (a === '--') break;
    if (a === `--${name}`) {
      const next = rawArgs[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) out.push('');
      else {
        out.push(next);
        i++;
      }
    } else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
  }
  return out;
}

/**
 * Puts the typed strings back in place of cac's coerced ones for every value option of the
 * matched command (and the global ones). Policy: only a one-to-one match with what cac parsed
 * is trusted; otherwise cac's reading stands and the flag readers judge it.
 */
export function restoreRawValues(cli: CAC, rawArgs: readonly string[]): void {
  const options = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])];
  for (const o of options) {
    if (o.isBoolean) continue;
    const key = o.names[0];
    const parsed = cli.options[key];
    if (parsed === undefined) continue;
    const raw = rawFlagValues(rawArgs, kebab(key));
    if (raw.length === (Array.isArray(parsed) ? parsed.length : 1)) cli.options[key] = raw;
  }
}
