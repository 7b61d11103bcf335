// The checkpoint a publication carries beside HEAD (SPEC 13: `checkpoint` in the tree of section
// 11): the C2SP checkpoint of the tree through HEAD, signed by HEAD's key, and the witnesses'
// cosignatures on it (signature lines of the same note). Attacker-controlled, like every byte of
// the ref: checked here before anything of it is kept; its root is checked against the records
// when the local copy takes them (store/adopt.ts), before anything is written.
import { LedgerError } from '../errors.js';
import type { Head } from '../record.js';
import { logNoteVerifier, type PublishedCheckpoint } from '../store/checkpoint.js';
import { ledgerOrigin, parseCheckpoint } from '../tlog/checkpoint.js';
import { MAX_NOTE_BYTES, openNote, parseNote } from '../tlog/note.js';

function refused(commit: string, why: string): LedgerError {
  return new LedgerError('REMOTE_LINKAGE', `the remote ledger commit ${commit.slice(0, 12)} carries a checkpoint that ${why}`, { commit, checkpoint: true }, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
}

/**
 * The checkpoint beside a fetched HEAD, checked: null when there is none, or when it covers fewer
 * records than HEAD. Policy: a smaller one is what a writer of an earlier version leaves when it
 * builds on a publication that had one (its tree keeps the parent's entry): it is not this HEAD's,
 * it is not kept, and under a witness policy nothing stands behind HEAD (freshness, exit 14).
 * A malformed one, one past HEAD, of another ledger, or not signed by HEAD's key is refused
 * (REMOTE_LINKAGE, exit 11): only a writer's key makes one, and none makes those.
 */
export function publishedCheckpoint(bytes: Buffer | null, head: Head, commit: string): PublishedCheckpoint | null {
  if (bytes === null) return null;
  if (bytes.length > MAX_NOTE_BYTES) throw refused(commit, `is larger than ${MAX_NOTE_BYTES} bytes`);
  let note;
  let cp;
  try {
    note = parseNote(bytes);
    cp = parseCheckpoint(note.text);
  } catch (e) {
    throw refused(commit, `is malformed (${(e as Error).message})`);
  }
  const origin = ledgerOrigin(head.genesis);
  if (cp.origin !== origin) throw refused(commit, `names another ledger (${cp.origin.slice(0, 40)})`);
  if (cp.size > head.seq + 1) throw refused(commit, `covers ${cp.size} records, more than its HEAD's ${head.seq + 1}`);
  if (cp.size < head.seq + 1) return null;
  const v = logNoteVerifier(origin, head.sig.key);
  const opened = v ? openNote(note, [v]) : null;
  if (!opened || opened.verified.length === 0 || opened.invalid.length > 0) throw refused(commit, 'is not signed by its HEAD\'s key');
  return { bytes: Buffer.from(bytes), size: cp.size, root: cp.root };
}
