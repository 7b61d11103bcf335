// What every verb shares: the I/O it writes to, env defaults (SPEC 10), flag readers that turn
// cac's loose values into checked strings, durations, and one way to print a result. Light on
// purpose: this file is loaded on every command, so it imports nothing heavy.
import type { CAC } from 'cac';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { locateLedger, type LedgerLocation } from '../../project/locate.js';
import { charCount } from '../../record.js';
import { neutralise, neutraliseLine } from '../../text/sanitize.js';

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Reads all of standard input (for `append --batch`). */
  readStdin: () => Promise<string>;
  /** Whether stderr is a terminal (progress lines, colour). */
  isTTY: boolean;
}

export type Opts = Record<string, unknown>;

/** An env variable, with an empty value counting as unset (SPEC 10, issue 2). */
export function envValue(io: CliIO, name: string): string | undefined {
  const v = io.env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** A single-valued flag: undefined when absent; refused when given twice or empty. */
export function one(opts: Opts, name: string, flag = kebab(name)): string | undefined {
  const v = opts[name];
  if (v === undefined) return undefined;
  const arr = Array.isArray(v) ? v : [v];
  if (arr.length > 1) throw new LedgerError('USAGE', `--${flag} was given ${arr.length} times; it takes one value`);
  const s = arr[0];
  if (typeof s === 'boolean' || s === '') throw new LedgerError('USAGE', `--${flag} needs a value`);
  return String(s);
}

/**
 * A flag's text within its record field's limit, counted as the schema counts it: characters
 * (code points, record.ts charCount), so the CLI refuses exactly what the store would.
 */
export function maxChars(value: string, flag: string, max: number): string {
  const n = charCount(value);
  if (n > max) throw new LedgerError('USAGE', `--${flag} is ${n} characters; at most ${max}`);
  return value;
}

export function required(opts: Opts, name: string, what: string, flag = kebab(name)): string {
  const v = one(opts, name, flag);
  if (v === undefined) throw new LedgerError('USAGE', `--${flag} is required (${what})`);
  return v;
}

/** A repeatable flag: every value, in order. */
export function many(opts: Opts, name: string, flag = kebab(name)): string[] {
  const v = opts[name];
  if (v === undefined) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr.map((s) => {
    if (typeof s === 'boolean' || s === '') throw new LedgerError('USAGE', `--${flag} needs a value`);
    return String(s);
  });
}

export function flag(opts: Opts, name: string): boolean {
  const v = opts[name];
  if (Array.isArray(v)) return v.length > 0 && v[v.length - 1] !== false;
  return v === true;
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

const DURATION_RE = /^(\d{1,9})(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "45m", "24h", "7d" (and "500ms") to milliseconds; USAGE for anything else. */
export function parseDuration(text: string, flagName: string): number {
  const m = DURATION_RE.exec(text);
  if (!m) throw new LedgerError('USAGE', `--${flagName} expects a duration like 90s, 45m, 24h or 7d, got "${text}"`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

export function durationFlag(opts: Opts, name: string, fallbackMs: number | undefined): number | undefined {
  const v = one(opts, name);
  return v === undefined ? fallbackMs : parseDuration(v, kebab(name));
}

/**
 * Where this command's ledger is (SPEC 3): --dir, else $LEDGER_DIR, else found as git finds its
 * repository (src/project/locate.ts). Found once per command: the search may ask git.
 */
export function ledgerLocation(io: CliIO, opts: Opts): LedgerLocation {
  let loc = located.get(io);
  if (!loc) {
    loc = locateLedger({ cwd: io.cwd, dir: one(opts, 'dir'), envDir: envValue(io, 'LEDGER_DIR') });
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
export function ledgerDir(io: CliIO, opts: Opts): string {
  return ledgerLocation(io, opts).dir;
}
/**
 * The secret key file: --key, else $LEDGER_KEY, else `keys/harness.key` in the project root.
 * Policy: a path given (flag or variable) is taken as typed, relative to the working directory,
 * as every command-line tool reads a path; only the defaults belong to the project root.
 */
export function keyPath(io: CliIO, opts: Opts, root?: string): string {
  const given = one(opts, 'key') ?? envValue(io, 'LEDGER_KEY');
  return given !== undefined ? resolve(io.cwd, given) : join(root ?? ledgerLocation(io, opts).root, 'keys', 'harness.key');
}
/** The trust file: --trust, else $LEDGER_TRUST, else `keys/trust.json` in the project root (as keyPath). */
export function trustPath(io: CliIO, opts: Opts, root?: string): string {
  const given = one(opts, 'trust') ?? envValue(io, 'LEDGER_TRUST');
  return given !== undefined ? resolve(io.cwd, given) : join(root ?? ledgerLocation(io, opts).root, 'keys', 'trust.json');
}
/** The writing agent: --agent, else $LEDGER_AGENT; `fallback` (e.g. the key's name) if given. */
export function agentName(io: CliIO, opts: Opts, fallback?: string): string {
  const a = one(opts, 'agent') ?? envValue(io, 'LEDGER_AGENT') ?? fallback;
  if (a === undefined) throw new LedgerError('USAGE', '--agent is required (who is writing this record)', {}, 'pass --agent NAME or set LEDGER_AGENT');
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(a)) throw new LedgerError('USAGE', `--agent must be 1-64 chars of [A-Za-z0-9._@-], got "${a}"`);
  return a;
}
/**
 * What a writer's HEAD check needs (SPEC 5): the trust file HEAD's key may be pinned in, and the
 * environment that names the per-user state directory (store/state-dir.ts). Readers pass the
 * environment alone (the verified-chain memo lives there too).
 */
export function guardOptions(io: CliIO, opts: Opts): { trust: string; env: CliIO['env'] } {
  return { trust: trustPath(io, opts), env: io.env };
}
/** --wait for the writer lock, default 10 s. */
export function waitMs(opts: Opts): number {
  return durationFlag(opts, 'wait', 10_000)!;
}

/**
 * Prints a result: one JSON object with --json, else the text. An array is lines: each element
 * is one output line, so a line feed inside one (record text) is shown as `\u000A`, never as a
 * second line; a string is a block whose line feeds are kept. Either way every other control,
 * bidi or invisible code point is neutralised (../../text/sanitize.ts). The JSON is exact:
 * `neutralise` only writes such code points as JSON escapes, which parse to the same values.
 */
export function emit(io: CliIO, opts: Opts, json: unknown, text: string | string[]): void {
  // SPEC 11: a write queued by --offline says so in every output, --json included.
  if (queuedWrites.has(io) && json !== null && typeof json === 'object' && !Array.isArray(json)) json = { ...json, queued: true, published: false };
  if (flag(opts, 'json')) io.stdout(neutralise(JSON.stringify(json)) + '\n');
  else if (Array.isArray(text)) {
    if (text.length) io.stdout(text.map(neutraliseLine).join('\n') + '\n');
  } else {
    const t = neutralise(text);
    if (t) io.stdout(t.endsWith('\n') ? t : t + '\n');
  }
}

/** The runs whose write was queued by --offline instead of published (remote-opts.ts marks them). */
export const queuedWrites = new WeakSet<CliIO>();

// Option declarations shared by verbs, so help reads the same everywhere.
type Command = ReturnType<CAC['command']>;
const S = { type: [String] };
// A writer takes --trust too (SPEC 5: it builds only on a HEAD whose key is pinned or its own);
// declared once however the two are combined.
const hasOption = (c: Command, name: string) => c.options.some((o) => o.names.includes(name));
export const withTrust = (c: Command): Command =>
  hasOption(c, 'trust') ? c : c.option('--trust <file>', 'Trust file of pinned keys (default: $LEDGER_TRUST, else keys/trust.json in the project root)', S);
export const withWriter = (c: Command): Command =>
  withTrust(
    c
      .option('--key <file>', 'Secret key file (default: $LEDGER_KEY, else keys/harness.key in the project root)', S)
      .option('--agent <name>', 'Who is writing (default: $LEDGER_AGENT)', S)
      .option('--wait <dur>', 'How long to wait for the writer lock (default: 10s)', S)
      .option('--offline', 'In a ledger joined to a remote: when it cannot be reached, queue the write (not published until `ledger sync`)'),
  );
export const STRING = S;

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
