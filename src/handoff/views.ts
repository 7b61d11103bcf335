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
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { ioError } from '../errors.js';
import type { Head } from '../record.js';
import { replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { notALedger } from '../store/append.js';
import { readHead } from '../store/head.js';
import { acquireLock } from '../store/lock.js';
import { ledgerPaths, type LedgerPaths } from '../store/paths.js';
import { VIEW_MARKER, renderMarkdown } from './render-md.js';
import { renderYaml } from './render-yml.js';
import { readWorkLogFast } from './fold-memo.js';
import type { WorkLog } from './workitems.js';

export const VIEW_FILES = ['HANDOFF.md', 'HANDOFF.yml'] as const;
export type ViewName = (typeof VIEW_FILES)[number];

export function renderViews(log: WorkLog): Record<ViewName, string> {
  return { 'HANDOFF.md': renderMarkdown(log), 'HANDOFF.yml': renderYaml(log) };
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

export interface WrittenViews { dir: string; through: { seq: number; id: string } | null; files: string[] }

/** Renders the current ledger and replaces both views. */
export function writeViews(ledgerDir: string, viewsDir: string, waitMs: number): WrittenViews {
  const paths = ledgerPaths(ledgerDir);
  const lock = acquireLock(realFileOps, join(paths.dir, 'views.lock'), waitMs);
  try {
    const log = readWorkLog(paths);
    const views = renderViews(log);
    for (const name of VIEW_FILES) {
      try {
        replaceFileDurable(realFileOps, viewsDir, name, Buffer.from(views[name], 'utf8'));
      } catch (e) {
        throw ioError(e, 'write', join(viewsDir, name));
      }
    }
    return { dir: viewsDir, through: log.through, files: VIEW_FILES.map((n) => join(viewsDir, n)) };
  } finally {
    lock.release();
  }
}

export type ViewStatus = 'ok' | 'stale' | 'edited' | 'missing';
export interface ViewCheck { file: string; status: ViewStatus; through_seq: number | null }

const MARKER_RE = new RegExp(`${VIEW_MARKER} (\\d+) (sha256:[0-9a-f]{64})`);

/** Compares each view with the render of the current ledger; never writes. */
export function checkViews(ledgerDir: string, viewsDir: string): { ok: boolean; through: WorkLog['through']; views: ViewCheck[] } {
  const paths = ledgerPaths(ledgerDir);
  const head = publishedHead(paths);
  const log = readWorkLog(paths, head);
  const expected = renderViews(log);
  const older = new Map<number, Record<ViewName, string>>();
  const views = VIEW_FILES.map((name): ViewCheck => {
    const file = join(viewsDir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { file, status: 'missing', through_seq: null };
      throw ioError(e, 'read', file);
    }
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
