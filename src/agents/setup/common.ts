// What `ledger setup claude|codex` shares: the commands it writes, and the three ways it edits a
// user's file so that it keeps what the user had, is idempotent, can be checked, and can be taken
// out again exactly:
//   - a JSON file (.mcp.json, .claude/settings.json, .codex/hooks.json): parsed, our entries put
//     in place (replaced where they are, else appended), and only those edits spliced into the
//     text (jsonc-parser's modify: every byte the user wrote outside setup's own keys stays as
//     it was: numbers such as 1e400 or a 20-digit integer, spacing, order); --remove takes out
//     only our entries and any container left empty by that;
//   - a marked block in a Markdown file (CLAUDE.md, AGENTS.md), between begin/end comments;
//   - a marked block in a TOML file (.codex/config.toml; ./codex.ts): checked with a TOML parser.
// A setup is a plan first (each file: its text now and the text it should have), so --check
// writes nothing and reports every file that is missing or stale, and a refusal (a file that is
// not JSON) changes no file. Files are written by the durable recipe (src/fs/durable.ts).
import { lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { applyEdits, modify, type FormattingOptions } from 'jsonc-parser';
import { parserReason } from '../../text/sanitize.js';
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
 * The one launcher every written command uses (SPEC 12: the files can be committed, and their
 * commands work on every clone): a POSIX sh script that finds the project's installed package
 * (`node_modules/.bin/ledger`) in the client's project folder ($CLAUDE_PROJECT_DIR, which Claude
 * Code gives its hooks and servers) or else the working directory, and the folders above it,
 * and otherwise runs the `ledger` found on PATH (a global install). Policy: no absolute path of
 * one machine is ever written, so `--check` passes on every clone whatever is installed there;
 * no process but sh is started to find it (a hook must start fast).
 */
export const LAUNCH_SCRIPT = 'd=$CLAUDE_PROJECT_DIR; [ -n "$d" ] || d=$PWD; while [ -n "$d" ] && [ ! -x "$d/node_modules/.bin/ledger" ]; do d=${d%/*}; done; exec ${d:+"$d/node_modules/.bin/"}ledger "$@"';

/** The command the written files use: sh, the launcher, and `ledger` as its $0. */
export function ledgerCommand(): LedgerCommand {
  return { command: 'sh', args: ['-c', LAUNCH_SCRIPT, 'ledger'] };
}

/** Whether the launcher finds a ledger for a project at `root` on this machine (setup says so when not). */
export function launcherFinds(root: string, env: Record<string, string | undefined>): boolean {
  for (let d = root; d !== ''; d = d.slice(0, d.lastIndexOf(sep) < 0 ? 0 : d.lastIndexOf(sep))) {
    try {
      if (statSync(join(d, 'node_modules', '.bin', 'ledger')).isFile()) return true;
    } catch {
      /* not here */
    }
    if (d === sep) break;
  }
  return (env.PATH ?? '').split(':').some((p) => {
    try {
      return p !== '' && statSync(join(p, 'ledger')).isFile();
    } catch {
      return false;
    }
  });
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

/**
 * A file setup may edit, as text (null: absent). Policy (issue 23.9): setup edits only regular
 * files inside the project, never through a link: every folder between the project root and the
 * file (`.claude`, `.codex`) must be a real folder, and the file a regular file; else it is
 * refused (exit 2) before anything is written.
 */
export function readText(path: string, root?: string): string | null {
  if (root !== undefined) {
    const rel = relative(root, dirname(path));
    let d = root;
    for (const part of rel === '' ? [] : rel.split(sep)) {
      d = join(d, part);
      let st;
      try {
        st = lstatSync(d);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') break;
        throw e;
      }
      if (!st.isDirectory()) throw new LedgerError('INPUT_REFUSED', `${d} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}; setup edits only files inside the project, never through a link; setup changed nothing`, { path: d }, 'replace it with a real folder (or remove it) and run setup again');
    }
  }
  try {
    const st = lstatSync(path);
    if (!st.isFile()) throw new LedgerError('INPUT_REFUSED', `${path} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; setup edits only regular files, never through a link; setup changed nothing`, { path });
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
    throw new LedgerError('INPUT_JSON', `${path} is not valid JSON (${parserReason(e)}); setup changed nothing`, { path }, 'fix the file (or move it aside) and run setup again');
  }
  if (!isObject(v)) throw new LedgerError('INPUT_JSON', `${path} holds JSON that is not an object; setup changed nothing`, { path });
  return v;
}

/**
 * The new text of a JSON file after `edit`. null when the object is left empty by a removal (the
 * file goes). A new file is written with two spaces; an existing one gets only the changes
 * `edit` made, spliced into its text where they belong (jsonc-parser's modify, in the file's own
 * indentation and line ends): every other byte stays as the user wrote it (issue 23.9).
 */
export function editJson(path: string, before: string | null, edit: (obj: Json) => void, removing: boolean): string | null {
  const was = parseJsonObject(path, before);
  const obj = parseJsonObject(path, before);
  edit(obj);
  if (removing && Object.keys(obj).length === 0) return null;
  if (before === null || before.trim() === '') return JSON.stringify(obj, null, 2) + '\n';
  const indent = indentOf(before);
  const fmt: FormattingOptions = {
    insertSpaces: typeof indent === 'number' || !indent.includes('\t'),
    tabSize: typeof indent === 'number' ? indent : indent.includes('\t') ? 1 : indent.length,
    eol: before.includes('\r\n') ? '\r\n' : '\n',
  };
  let text = before;
  for (const [at, value, insert] of jsonChanges(was, obj, [])) {
    text = applyEdits(text, modify(text, at, value, { formattingOptions: fmt, ...(insert ? { isArrayInsertion: true } : {}) }));
  }
  // The edits must read back as the object setup meant (else this is setup's bug: refuse).
  if (!sameJson(parseJsonObject(path, text), obj)) throw new LedgerError('INTERNAL', `${path}: setup's edit would not read back as written; setup changed nothing`, { path });
  return text;
}

const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a as Json);
  const kb = Object.keys(b as Json);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as Json, k) && sameJson((a as Json)[k], (b as Json)[k]));
};

/**
 * The smallest set of edits from `a` to `b` (both parsed from the file, so a value the user
 * wrote compares equal to itself however JSON.parse read it): [path, value (undefined: remove),
 * array insertion]. Objects and arrays are descended into; an array loses or gains elements at
 * the places that differ, the rest untouched.
 */
function jsonChanges(a: unknown, b: unknown, at: (string | number)[]): [(string | number)[], unknown, boolean][] {
  if (sameJson(a, b)) return [];
  const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const out: [(string | number)[], unknown, boolean][] = [];
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) out.push([[...at, k], undefined, false]);
    for (const k of Object.keys(b)) {
      if (!Object.hasOwn(a, k)) out.push([[...at, k], b[k], false]);
      else out.push(...jsonChanges(a[k], b[k], [...at, k]));
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    // Walk both: an element of `a` not where `b` has it is removed (from the end first, so the
    // indexes of the others hold), then the elements of `b` that are new are inserted in order.
    const removed: number[] = [];
    const kept: number[] = [];
    let j = 0;
    for (let i = 0; i < a.length; i++) {
      if (j < b.length && sameJson(a[i], b[j])) {
        kept.push(i);
        j++;
      } else if (b.slice(j).some((x) => sameJson(a[i], x))) {
        // b inserts before this one: keep it, the new ones are placed below
        while (j < b.length && !sameJson(a[i], b[j])) j++;
        kept.push(i);
        j++;
      } else removed.push(i);
    }
    const out: [(string | number)[], unknown, boolean][] = removed.reverse().map((i) => [[...at, i], undefined, false]);
    // After the removals `a` is a subsequence of `b`: insert each element of `b` that is missing.
    const left = a.filter((_, i) => !removed.includes(i));
    let k = 0;
    b.forEach((x, idx) => {
      if (k < left.length && sameJson(left[k], x)) k++;
      else out.push([[...at, idx], x, true]);
    });
    return out;
  }
  return [[at, b, false]];
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
 * appended after. Policy: the block stays where it is in the file once written. A line inside
 * the old block that setup did not write (neither in `block` nor among `known`, the lines
 * earlier versions wrote) is never dropped: the file is refused, naming it (issue 23.9).
 */
export function withBlock(text: string | null, m: Markers, block: string | null, known: readonly string[] = [], path = 'the file'): string | null {
  const t = text ?? '';
  const at = findBlock(t, m);
  if (at) {
    const ours = new Set([...(block ?? '').split('\n'), ...known, m.begin, m.end, '']);
    const foreign = t.slice(at[0], at[1]).split('\n').find((l) => !ours.has(l) && !l.startsWith(m.begin.slice(0, m.begin.indexOf(' '))));
    if (foreign !== undefined) {
      throw new LedgerError('INPUT_REFUSED', `${path}: the block setup wrote holds a line setup did not write (${JSON.stringify(foreign.slice(0, 80))}); setup changed nothing`, { path, line: foreign.slice(0, 200) },
        'move that line out of the block (above its begin line or below its end line) and run setup again');
    }
  }
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
