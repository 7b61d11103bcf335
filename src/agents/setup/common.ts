// What `ledger setup claude|codex` shares: the commands it writes, and the three ways it edits a
// user's file so that it keeps what the user had, is idempotent, can be checked, and can be taken
// out again exactly:
//   - a JSON file (.mcp.json, .claude/settings.json, .codex/hooks.json): parsed, our entries put
//     in place (replaced where they are, else appended), written back with the file's own
//     indentation; --remove takes out only our entries and any container left empty by that;
//   - a marked block in a Markdown file (CLAUDE.md, AGENTS.md), between begin/end comments;
//   - a marked block in a TOML file (.codex/config.toml; ./codex.ts): checked with a TOML parser.
// A setup is a plan first (each file: its text now and the text it should have), so --check
// writes nothing and reports every file that is missing or stale, and a refusal (a file that is
// not JSON) changes no file. Files are written by the durable recipe (src/fs/durable.ts).
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { LedgerError } from '../../errors.js';
import { fsyncDir, mkdirDurable, replaceFileDurable } from '../../fs/durable.js';
import { realFileOps } from '../../fs/ops.js';

/** The name setup gives its MCP server (SPEC 12: `[mcp_servers.handoff-ledger]`). */
export const SERVER_NAME = 'handoff-ledger';
/** Policy: a hook gets at most this long (seconds); it never needs more than a fraction of one. */
export const HOOK_TIMEOUT_S = 10;

/** How setup runs `ledger`: an executable and the arguments before the verb. */
export interface LedgerCommand { command: string; args: string[] }

/**
 * The command the written files use (SPEC 12: they work from the project as it is): the
 * project's own installed package when it has one (`node_modules/.bin/ledger`), else the binary
 * that ran setup, by absolute paths (node and its script). Policy: absolute, so it works whatever
 * folder the agent starts in; `--check` reports it stale once that path is gone.
 */
export function ledgerCommand(root: string, runningScript: string): LedgerCommand {
  const installed = join(root, 'node_modules', '.bin', 'ledger');
  if (existsSync(installed)) return { command: installed, args: [] };
  let script = runningScript;
  try {
    script = realpathSync(runningScript);
  } catch {
    /* kept as given */
  }
  return { command: process.execPath, args: [script] };
}

/** A POSIX shell word: as is when it is plainly safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_/.:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function shellCommand(c: LedgerCommand, verbArgs: string[]): string {
  return [c.command, ...c.args, ...verbArgs].map(shellWord).join(' ');
}

/** One file of a plan: its text now (null: absent) and the text it should have (null: none). */
export interface FileChange { path: string; before: string | null; after: string | null }

export function readText(path: string): string | null {
  try {
    if (!lstatSync(path).isFile()) throw new LedgerError('INPUT_REFUSED', `${path} is not a regular file; setup edits only regular files`, { path });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return readFileSync(path, 'utf8');
}

// ---------------------------------------------------------------------------------------------
// JSON files

type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The file's indentation (the first indented line's), else two spaces. */
function indentOf(text: string): string | number {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1] : 2;
}

/** Parses a JSON object file (absent: {}); refuses anything else, naming the file. */
export function parseJsonObject(path: string, text: string | null): Json {
  if (text === null || text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new LedgerError('INPUT_JSON', `${path} is not valid JSON (${(e as Error).message.split('\n')[0]}); setup changed nothing`, { path }, 'fix the file (or move it aside) and run setup again');
  }
  if (!isObject(v)) throw new LedgerError('INPUT_JSON', `${path} holds JSON that is not an object; setup changed nothing`, { path });
  return v;
}

/**
 * The new text of a JSON file after `edit`, in the file's own indentation. null when the object
 * is left empty by a removal (the file goes), or when it is unchanged as a value (kept byte for
 * byte: a file setup has nothing to do in is never reformatted).
 */
export function editJson(path: string, before: string | null, edit: (obj: Json) => void, removing: boolean): string | null {
  const obj = parseJsonObject(path, before);
  const was = JSON.stringify(obj);
  edit(obj);
  if (removing && Object.keys(obj).length === 0) return null;
  if (before !== null && JSON.stringify(obj) === was) return before;
  const indent = before === null ? 2 : indentOf(before);
  return JSON.stringify(obj, null, indent) + '\n';
}

/** `obj[key]` as an object, created when absent; refuses a value of another type. */
export function objectAt(path: string, obj: Json, key: string): Json {
  const v = obj[key];
  if (v === undefined) return (obj[key] = {});
  if (!isObject(v)) throw new LedgerError('INPUT_JSON', `${path}: "${key}" is not an object; setup changed nothing`, { path });
  return v;
}

/** Deletes `obj[key]` when it is an empty object or array. */
export function dropEmpty(obj: Json, key: string): void {
  const v = obj[key];
  if ((isObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0)) delete obj[key];
}

/** A hooks file's handler, as Claude Code and Codex both spell it. */
export interface HookHandler { type: 'command'; command: string; timeout: number }
export interface MatcherGroup { matcher?: string; hooks: HookHandler[] }

/**
 * Puts our matcher group under `hooks[event]` (replacing the group that holds our handler, where
 * it is), or takes it out. `ours` tells our handler from the user's by its command.
 */
export function editHookGroup(path: string, hooks: Json, event: string, group: MatcherGroup | null, ours: (command: unknown) => boolean): void {
  const v = hooks[event];
  if (v !== undefined && !Array.isArray(v)) throw new LedgerError('INPUT_JSON', `${path}: hooks.${event} is not an array; setup changed nothing`, { path });
  const groups = (v ?? []) as unknown[];
  const mine = (g: unknown) => isObject(g) && Array.isArray(g.hooks) && g.hooks.some((h) => isObject(h) && ours(h.command));
  const at = groups.findIndex(mine);
  // Policy: a group that holds our handler beside the user's loses only our handler.
  const rest = (g: unknown) => (isObject(g) && Array.isArray(g.hooks) ? { ...g, hooks: g.hooks.filter((h) => !(isObject(h) && ours(h.command))) } : g);
  const out: unknown[] = [];
  groups.forEach((g, i) => {
    if (!mine(g)) return out.push(g);
    const left = rest(g) as Json;
    const keepUser = Array.isArray(left.hooks) && left.hooks.length > 0;
    if (i === at && group) {
      if (keepUser) out.push(left);
      out.push(group);
    } else if (keepUser) out.push(left);
  });
  if (at < 0 && group) out.push(group);
  hooks[event] = out;
  dropEmpty(hooks, event);
}

// ---------------------------------------------------------------------------------------------
// Marked blocks in text files

export interface Markers { begin: string; end: string }

/** Where the block is: [start, end) of its lines (end past the end marker's newline), or null. */
function findBlock(text: string, m: Markers): [number, number] | null {
  const start = text.indexOf(m.begin);
  if (start < 0) return null;
  const endAt = text.indexOf(m.end, start);
  if (endAt < 0) throw new LedgerError('INPUT_REFUSED', `the block setup wrote has its begin line but no end line (${m.end}); setup changed nothing`, {}, 'put the end line back, or delete the begin line, and run setup again');
  let end = endAt + m.end.length;
  if (text[end] === '\n') end++;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  return [lineStart, end];
}

/**
 * The text with `block` (its lines, ending with the end marker) in place of the old one, or
 * appended after one blank line; or with it taken out (block null), with the blank line it was
 * appended after. Policy: the block stays where it is in the file once written.
 */
export function withBlock(text: string | null, m: Markers, block: string | null): string | null {
  const t = text ?? '';
  const at = findBlock(t, m);
  if (block === null) {
    if (!at) return text;
    let [s, e] = at;
    // the separator setup added: one empty line before the block
    if (s >= 2 && t[s - 1] === '\n' && t[s - 2] === '\n') s--;
    else if (s === 1 && t[0] === '\n') s = 0;
    const out = t.slice(0, s) + t.slice(e);
    return out === '' && text !== null ? null : out;
  }
  const body = block.endsWith('\n') ? block : block + '\n';
  if (at) return t.slice(0, at[0]) + body + t.slice(at[1]);
  if (t === '') return body;
  return t + (t.endsWith('\n') ? '\n' : '\n\n') + body;
}

// ---------------------------------------------------------------------------------------------
// Plans

export function changed(plan: readonly FileChange[]): FileChange[] {
  return plan.filter((c) => c.before !== c.after);
}

/** Writes every changed file of a plan (after all were computed: a refusal wrote nothing). */
export function applyPlan(plan: readonly FileChange[], root: string): void {
  for (const c of changed(plan)) {
    const dir = dirname(c.path);
    if (c.after === null) {
      if (c.before === null) continue;
      realFileOps.unlink(c.path);
      fsyncDir(realFileOps, dir);
      removeEmptyDirs(dir, root);
      continue;
    }
    mkdirDurable(realFileOps, dir, 0o755);
    // Policy: a file keeps its mode (a user's 0600 settings stay 0600).
    const mode = c.before === null ? 0o644 : statSync(c.path).mode & 0o777;
    replaceFileDurable(realFileOps, dir, basename(c.path), Buffer.from(c.after, 'utf8'), mode);
  }
}

/** Folders setup made (.claude, .codex) go once empty; never the root or above it. */
function removeEmptyDirs(dir: string, root: string): void {
  if (dir === root || relative(root, dir).startsWith('..')) return;
  try {
    if (readdirSync(dir).length === 0) {
      realFileOps.rmdir(dir);
      fsyncDir(realFileOps, dirname(dir));
    }
  } catch {
    /* kept: not empty, or not ours to remove */
  }
}

/** How a plan's file stands for --check: ok, missing (setup would create it) or stale. */
export function fileState(c: FileChange): 'ok' | 'missing' | 'stale' {
  if (c.before === c.after) return 'ok';
  return c.before === null ? 'missing' : 'stale';
}
