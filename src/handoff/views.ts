// The two views, HANDOFF.md and HANDOFF.yml: rendered from the ledger, written atomically, and
// checked. They are derived data: the ledger is the truth, and the views can always be rewritten
// from it (`ledger render`).
//
// Writing: under a views lock of its own (`<ledger dir>/views.lock`, so appenders are never held
// up by a render), the writer reads the published HEAD *under that lock*, renders, and replaces
// both files (temp file, fsync, rename, fsync of the directory). HEAD only moves forward, so a
// render can never overwrite a newer one with an older one, whatever order two commands finish in.
//
// Checking: a view is `ok` when its bytes are the render of the current ledger; `stale` when they
// are the render of the ledger as it was at the seq its marker line names (the ledger moved on, or
// a record was written around the CLI); `edited` otherwise; `missing` when there is no file.
//
// A person's edit is never erased silently (SPEC 10): each view ends with a digest line over
// everything before it, so a writer can tell, without rendering the ledger again, whether the
// file on disk is still what a ledger wrote. When it is not, its text is first kept beside it,
// in a new file `HANDOFF.md.edited-<time>` (never over an existing file), and the writer says so.
//
// A view belongs to one ledger: its header names the genesis id it was rendered from. Two ledgers
// pointed at one folder (`--views same/`, or `.ledger2` beside `.ledger`) would otherwise take
// turns overwriting each other's HANDOFF.md; a writer refuses a view of another genesis
// (INPUT_CONFLICT, exit 2, nothing written) unless the caller adopts it on purpose
// (`--adopt-views`). The writing verbs check before they append (assertViewsOwned), and
// writeViews checks again under the views lock.
import { join, dirname } from 'node:path';
import { sha256Hex } from '../canonical.js';
import { LedgerError, ioError } from '../errors.js';
import type { Head } from '../record.js';
import { assertReplaceable, createFileDurable, replaceFilesDurable } from '../fs/durable.js';
import { readRegularFileUpTo, realFileOps } from '../fs/ops.js';
import { notALedger } from '../store/append.js';
import { readHead } from '../store/head.js';
import { acquireLock } from '../store/lock.js';
import { ledgerPaths, type LedgerPaths } from '../store/paths.js';
import { GENESIS_MARKER, VIEW_MARKER, renderMarkdown } from './render-md.js';
import { renderYaml } from './render-yml.js';
import { readWorkLogFast } from './fold-memo.js';
import type { WorkLog } from './workitems.js';

export const VIEW_FILES = ['HANDOFF.md', 'HANDOFF.yml'] as const;
export type ViewName = (typeof VIEW_FILES)[number];

/** Both views of `log`. */
export function renderViews(log: WorkLog): Record<ViewName, string> {
  return { 'HANDOFF.md': sealView('HANDOFF.md', renderMarkdown(log)), 'HANDOFF.yml': sealView('HANDOFF.yml', renderYaml(log)) };
}

const DIGEST_LINE = 'ledger-view digest sha256:';
const digestLine = (name: ViewName, hex: string) => (name === 'HANDOFF.md' ? `<!-- ${DIGEST_LINE}${hex} -->\n` : `# ${DIGEST_LINE}${hex}\n`);

/** A rendered view with its last line: the SHA-256 of the UTF-8 bytes of everything before it. */
export function sealView(name: ViewName, text: string): string {
  const body = name === 'HANDOFF.md' ? text + '\n' : text; // a blank line: the log's last entry ends
  return body + digestLine(name, sha256Hex(body));
}

/**
 * Whether a view's text is still what a ledger wrote: its last line is the digest line and the
 * digest is of the text before it. Policy: anything else (an edit anywhere, a line added after
 * the digest, a file written by a version without the line) counts as a person's edit.
 */
export function isSealed(name: ViewName, view: Uint8Array | string): boolean {
  // On the bytes: a writer asks this of the file as read, and decoding a large HANDOFF.md (its
  // text is not ASCII) cost more than the digest. Bytes that are not UTF-8 are never sealed:
  // the ledger writes none.
  const bytes = typeof view === 'string' ? Buffer.from(view, 'utf8') : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  const cut = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
  return bytes.subarray(cut).equals(Buffer.from(digestLine(name, sha256Hex(bytes.subarray(0, cut))), 'latin1'));
}

/** How many lines of a view viewGenesis reads. */
const HEADER_LINES = 12;

/**
 * The text of a view's first HEADER_LINES lines, all viewGenesis reads: decoded alone, not with
 * the whole file (a cut at a line feed is a cut between UTF-8 characters).
 */
export function headerText(bytes: Buffer): string {
  let end = -1;
  for (let n = 0; n < HEADER_LINES; n++) {
    end = bytes.indexOf(0x0a, end + 1);
    if (end < 0) return bytes.toString('utf8');
  }
  return bytes.toString('utf8', 0, end);
}

const GENESIS_RE = new RegExp(`^(?:<!-- |# )${GENESIS_MARKER} (sha256:[0-9a-f]{64})(?: -->)?$`);

/**
 * The genesis id a view's header says it was rendered from, or null when it names none (a view
 * written before views carried it, or a file a person wrote). Only the header is read: the
 * title, blank lines and whole-line comments before the first other line, which no record text
 * reaches (record text is in code spans, fenced blocks and YAML scalars further down).
 */
export function viewGenesis(text: string): string | null {
  const lines = text.split('\n', HEADER_LINES);
  for (const line of lines) {
    const m = GENESIS_RE.exec(line);
    if (m) return m[1];
    if (!(line === '' || line.startsWith('# ') || (line.startsWith('<!-- ') && line.endsWith(' -->')))) break;
  }
  return null;
}

function foreignView(file: string, theirs: string, ours: string, ledgerDir: string): LedgerError {
  return new LedgerError(
    'INPUT_CONFLICT',
    `${file} was rendered from another ledger (genesis ${theirs.slice(0, 19)}…), not from ${ledgerDir} (genesis ${ours.slice(0, 19)}…); it was not overwritten`,
    { path: file, view_genesis: theirs, genesis: ours },
    'give this ledger its own views folder (--views DIR), or pass --adopt-views to rewrite them from this ledger',
  );
}

/** Policy: a view is refused only when it names another genesis; one that names none is this ledger's to write. */
function assertOwned(files: { file: string; bytes: Buffer | null }[], genesis: string, ledgerDir: string): void {
  for (const { file, bytes } of files) {
    const theirs = bytes === null ? null : viewGenesis(headerText(bytes));
    if (theirs !== null && theirs !== genesis) throw foreignView(file, theirs, genesis, ledgerDir);
  }
}

/**
 * Refuses (INPUT_CONFLICT) when a view in `viewsDir` was rendered from another ledger than the
 * one of `genesis`: the check a writing verb makes before it appends, so a refusal changes
 * nothing. A view that cannot be read is left to writeViews, which refuses it in its own words.
 */
export function assertViewsOwned(ledgerDir: string, viewsDir: string, genesis: string): void {
  const files = VIEW_FILES.map((name) => {
    const file = join(viewsDir, name);
    try {
      return { file, bytes: readViewFile(file) };
    } catch {
      return { file, bytes: null };
    }
  });
  assertOwned(files, genesis, ledgerDir);
}

/**
 * Policy: a view is read only up to this size (far above any log the ledger renders; a larger
 * file, a sparse one planted to exhaust memory say, is refused rather than read).
 */
export const VIEW_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The bytes of a view on disk, or null when there is none. Only a regular file is read, never
 * through a symbolic link and without blocking (a FIFO planted at the name is refused at once).
 */
export function readViewFile(file: string): Buffer | null {
  let bytes: Buffer | null;
  try {
    bytes = readRegularFileUpTo(file, VIEW_MAX_BYTES);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (e instanceof LedgerError && e.code === 'OP_SYMLINK') throw notAView(file, 'a symbolic link');
    if (e instanceof LedgerError && e.code === 'OP_NOT_REGULAR') throw notAView(file, 'not a regular file');
    throw ioError(e, 'read', file);
  }
  if (bytes === null) throw notAView(file, `larger than ${VIEW_MAX_BYTES} bytes`);
  return bytes;
}

function notAView(file: string, what: string): LedgerError {
  return new LedgerError('OP_IO', `${file} is ${what}; a view is never written through or over one`, { path: file, not_a_view: true }, 'move it away, then `ledger render`');
}

/** `HANDOFF.md.edited-2026-01-31T10-00-00Z`: a name for a kept edit, free of colons. */
export function keptName(name: ViewName, now: Date, n = 1): string {
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '-');
  return `${name}.edited-${stamp}${n > 1 ? `-${n}` : ''}`;
}

/** Keeps `bytes` (a person's edit of `name`) in a new file beside it; returns its path. */
function keepEdit(viewsDir: string, name: ViewName, bytes: Buffer, now: Date): string {
  for (let n = 1; n <= 100; n++) {
    const kept = keptName(name, now, n);
    try {
      createFileDurable(realFileOps, viewsDir, kept, bytes);
      return join(viewsDir, kept);
    } catch (e) {
      if (e instanceof LedgerError && e.code === 'INPUT_EXISTS') continue;
      throw ioError(e, 'write', join(viewsDir, kept));
    }
  }
  throw new LedgerError('OP_IO', `cannot keep the edited ${join(viewsDir, name)}: 100 kept copies from ${now.toISOString()} exist`, { path: join(viewsDir, name) });
}

/** Policy: the views live in the folder that holds the ledger directory, unless --views says. */
export function defaultViewsDir(ledgerDir: string): string {
  return dirname(ledgerDir);
}

/** The published HEAD of the ledger at `paths`, checked; refused when there is none. */
export function publishedHead(paths: LedgerPaths): Head {
  const head = readHead(realFileOps, paths);
  if (!head) throw notALedger(paths);
  return head;
}

/** The work log of the published records through `head`. */
export function readWorkLog(paths: LedgerPaths, head: Head = publishedHead(paths), maxSeq = Infinity): WorkLog {
  return readWorkLogFast(paths, head, maxSeq);
}

export interface KeptEdit { file: string; kept: string }
export interface WrittenViews {
  dir: string;
  through: { seq: number; id: string } | null;
  files: string[];
  /** The views a person had edited, and where their text was kept before the rewrite. */
  kept: KeptEdit[];
}

/** The one line a verb prints (stderr) for each kept edit. */
export function keptNotice(k: KeptEdit): string {
  return `${k.file} had been edited by hand; its text is kept in ${k.kept} and the view was rewritten from the ledger`;
}

/**
 * Refuses, before a verb writes anything, views it could not replace: a view that is a symbolic
 * link (or a directory, FIFO or device) is never followed or replaced (fs/durable.ts, OP_SYMLINK
 * or OP_NOT_REGULAR, exit 3), and a verb that would end with that warning refuses up front.
 */
export function assertViewTargets(viewsDir: string): void {
  for (const name of VIEW_FILES) assertReplaceable(realFileOps, join(viewsDir, name));
}

/** The paths of a ledger given as paths (a Ledger's, with its caches) or as a directory (no caches). */
const pathsOf = (ledger: LedgerPaths | string): LedgerPaths => (typeof ledger === 'string' ? ledgerPaths(ledger) : ledger);

/**
 * Renders the current ledger and replaces both views; a view a person edited is kept beside it
 * first (`now` names the copy). A view that is a symbolic link or not a regular file is refused,
 * and so is one rendered from another ledger unless `adopt` (then it is rewritten from this one).
 * `ledger`: a Ledger's paths (its caches serve the fold), or the ledger directory.
 */
export function writeViews(ledger: LedgerPaths | string, viewsDir: string, waitMs: number, now: Date = new Date(), adopt = false): WrittenViews {
  const paths = pathsOf(ledger);
  const ledgerDir = paths.dir;
  const lock = acquireLock(realFileOps, join(paths.dir, 'views.lock'), waitMs);
  try {
    const log = readWorkLog(paths);
    const views = renderViews(log);
    const kept: KeptEdit[] = [];
    // Both views are read (and a link or FIFO refused) before either is written.
    const before = VIEW_FILES.map((name) => readViewFile(join(viewsDir, name)));
    if (!adopt && log.genesis !== null) assertOwned(VIEW_FILES.map((name, i) => ({ file: join(viewsDir, name), bytes: before[i] })), log.genesis, ledgerDir);
    for (const [i, name] of VIEW_FILES.entries()) {
      const file = join(viewsDir, name);
      const was = before[i];
      if (was !== null && !isSealed(name, was)) kept.push({ file, kept: keepEdit(viewsDir, name, was, now) });
    }
    try {
      // Both at once: one fsync of the folder for the two (fs/durable.ts).
      replaceFilesDurable(realFileOps, viewsDir, VIEW_FILES.map((name) => ({ name, data: Buffer.from(views[name], 'utf8') })));
    } catch (e) {
      throw ioError(e, 'write', VIEW_FILES.map((name) => join(viewsDir, name)).join(' and '));
    }
    return { dir: viewsDir, through: log.through, files: VIEW_FILES.map((n) => join(viewsDir, n)), kept };
  } finally {
    lock.release();
  }
}

/** `foreign`: rendered from another ledger (its header names another genesis). */
export type ViewStatus = 'ok' | 'stale' | 'edited' | 'missing' | 'foreign';
export interface ViewCheck { file: string; status: ViewStatus; through_seq: number | null }

const MARKER_RE = new RegExp(`${VIEW_MARKER} (\\d+) (sha256:[0-9a-f]{64})`);

/** Compares each view with the render of the current ledger; never writes. */
export function checkViews(ledger: LedgerPaths | string, viewsDir: string): { ok: boolean; through: WorkLog['through']; views: ViewCheck[] } {
  const paths = pathsOf(ledger);
  const head = publishedHead(paths);
  const log = readWorkLog(paths, head);
  const expected = renderViews(log);
  const older = new Map<number, Record<ViewName, string>>();
  const views = VIEW_FILES.map((name): ViewCheck => {
    const file = join(viewsDir, name);
    let bytes: Buffer | null;
    try {
      bytes = readViewFile(file);
    } catch (e) {
      // A link, a FIFO, a directory: not a view the ledger wrote. Other errors are errors.
      if (e instanceof LedgerError && e.data.not_a_view === true) return { file, status: 'edited', through_seq: null };
      throw e;
    }
    if (bytes === null) return { file, status: 'missing', through_seq: null };
    const text = bytes.toString('utf8');
    const theirs = viewGenesis(text);
    if (theirs !== null && theirs !== log.genesis) return { file, status: 'foreign', through_seq: null };
    const m = MARKER_RE.exec(text);
    const claimed = m ? Number(m[1]) : null;
    if (text === expected[name]) return { file, status: 'ok', through_seq: claimed };
    // Stale or edited: render the ledger as it was at the seq the view names, and compare.
    if (claimed === null || !Number.isSafeInteger(claimed) || claimed > head.seq) return { file, status: 'edited', through_seq: claimed };
    if (!older.has(claimed)) older.set(claimed, renderViews(readWorkLog(paths, head, claimed)));
    const then = older.get(claimed)!;
    return { file, status: then[name] === text ? 'stale' : 'edited', through_seq: claimed };
  });
  return { ok: views.every((v) => v.status === 'ok'), through: log.through, views };
}
