// Speed, paying for one stated target (the append bench: the store's durable append >= 0.5x the
// raw limit): a per-user state file that every append rewrites (a writer's mark, head-guard.ts;
// the verified-chain memo, chain-memo.ts) is a short log of entries appended in place, not a
// file replaced by rename each time. On ext4, a rename over an existing file forces the new
// file's blocks out at once (auto_da_alloc), and the ledger's own fsyncs that follow then wait
// for them: the two replacements cost ~0.3 ms of an append whose whole raw limit is ~0.6 ms,
// where the two appends cost ~0.02 ms (measured side by side, issue 17).
//
//   entry   "\n" + hex(SHA-256(json)) + " " + json + "\n"
//   read    the newest entry whose digest matches its text; a torn append (a crash, ENOSPC, two
//           appenders at once) fails its digest, and the entry before it is read. A file that
//           is one JSON object (the format before this one, always replaced whole) is read as
//           that one entry.
//   write   appended with O_APPEND (fs/durable.ts appendFileUnsynced); a file that is not there
//           yet, or has grown to LOG_LIMIT bytes, is replaced whole, by rename, with the one entry
//
// Policy: the digest detects torn appends only, not an attacker: the state directory is the
// user's own (state-dir.ts). A reader that finds no entry whose digest matches gets `text: null`
// and decides for itself (a mark is refused, a memo is no memo), as for a file that did not parse.
// Policy: like the files it replaces, a log is never fsynced (state-dir.ts): an entry lost with
// a power cut leaves the one before it, an older mark or memo, which still holds.
import { sha256Hex } from '../canonical.js';
import { appendFileUnsynced, replaceFileUnsynced } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';
import { readStateFile } from './state-dir.js';

/** A log at this size is replaced whole by its newest entry (about 40 appends of a memo). */
export const LOG_LIMIT = 16 * 1024;

const HEX = /^[0-9a-f]{64}$/;

/** The bytes of one entry. */
export function stateEntry(json: string): Buffer {
  return Buffer.from(`\n${sha256Hex(json)} ${json}\n`, 'utf8');
}

/** How an entry is told whole: its digest matches its text (the default). */
export type Whole = (hex: string, json: string) => boolean;

const digestMatches: Whole = (hex, json) => HEX.test(hex) && sha256Hex(json) === hex;

/**
 * Speed (issue 22: a read verb that needs no node:crypto loads none): an entry told whole by its
 * text alone, a JSON object. Policy: only for a memo whose reader checks every field it believes
 * against the ledger (chain-memo.ts: the file's exact identity): an append writes its bytes in
 * order, so a torn one is a prefix of an entry, which is never a whole JSON object, and bytes the
 * disk lost read as NULs, which JSON refuses. The digest stays in the entry (the format is one).
 */
export const parsesWhole: Whole = (_hex, json) => {
  if (json[0] !== '{') return false;
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
};

/** The newest entry of a log's text that is whole (`whole`: by default, its digest matches); null when none is. */
export function newestEntry(text: string, whole: Whole = digestMatches): string | null {
  for (let end = text.length; ; ) {
    const nl = end > 0 ? text.lastIndexOf('\n', end - 1) : -1;
    const seg = text.slice(nl + 1, end);
    if (seg.length > 65 && seg[64] === ' ') {
      const hex = seg.slice(0, 64);
      const json = seg.slice(65);
      if (whole(hex, json)) return json;
    }
    // The format before this one: the whole file one JSON object (its first line).
    if (nl < 0) return seg.startsWith('{') ? seg : null;
    end = nl;
  }
}

/** A state log: null when there is no file; else its newest good entry (null: none is). */
export function readStateLog(path: string): { text: string | null } | null {
  const bytes = readStateFile(path);
  return bytes === null ? null : { text: newestEntry(bytes.toString('utf8')) };
}

/** Appends `json` as the newest entry of `dir/name` (see the header). */
export function appendStateLog(dir: string, name: string, json: string): void {
  const entry = stateEntry(json);
  if (!appendFileUnsynced(realFileOps, `${dir}/${name}`, entry, LOG_LIMIT)) replaceFileUnsynced(realFileOps, dir, name, entry, 0o600);
}
