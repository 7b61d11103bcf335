// The whole test output of a checkpoint travels with the ledger (SPEC 11: "whatever a record
// refers to that a reader on another machine needs"): each blob a published record names by its
// `tests.digest` is put in the publication's tree at `blobs/<64 hex>` (exactly its bytes), and a
// machine that takes the record from the remote takes the blob into its own blob store
// (handoff/blobs.ts), after checking that its bytes hash to its name. A blob the tree lacks (an
// older writer, or one too large to publish) is not an error: `resume` then says the whole output
// is not on this machine and shows the excerpt the record carries.
import { lstatSync } from 'node:fs';
import { LedgerError } from '../errors.js';
import { sha256Hex } from '../canonical.js';
import { blobPath, putBlob } from '../handoff/blobs.js';
import { realFileOps } from '../fs/ops.js';
import { readBlobs } from './tree.js';

/** Policy: a blob larger than this is not published (the record's excerpt still travels). */
export const MAX_PUBLISHED_BLOB = 32 * 1024 * 1024;

/** The path of a blob in a publication's tree. */
export const blobTreePath = (hex: string): string => `blobs/${hex}`;

/** The blobs (64 hex each) the record lines name as their whole test output. */
export function blobsNamedBy(lines: readonly Buffer[]): string[] {
  const out = new Set<string>();
  for (const line of lines) {
    // Cheap first: most records carry no test output.
    if (!line.includes('"tests":')) continue;
    try {
      const r = JSON.parse(line.toString('utf8')) as { tests?: { digest?: unknown } };
      const d = r.tests?.digest;
      if (typeof d === 'string' && /^sha256:[0-9a-f]{64}$/.test(d)) out.add(d.slice(7));
    } catch {
      /* a line this machine verified or signed always parses */
    }
  }
  return [...out];
}

/** This machine's copies of those blobs that can be published (present, re-verified, within the bound). */
export function localBlobs(ledgerDir: string, hexes: readonly string[]): { hex: string; bytes: Buffer }[] {
  const out: { hex: string; bytes: Buffer }[] = [];
  for (const hex of hexes) {
    try {
      const path = blobPath(ledgerDir, `sha256:${hex}`);
      const st = lstatSync(path);
      if (!st.isFile() || st.size > MAX_PUBLISHED_BLOB) continue;
      const bytes = realFileOps.readFile(path);
      if (sha256Hex(bytes) === hex) out.push({ hex, bytes });
    } catch {
      /* not here: the record's excerpt still travels */
    }
  }
  return out;
}

/**
 * Takes the blobs `hexes` from a fetched, verified commit into the local blob store. Fails
 * closed: a blob whose bytes do not hash to its name is refused (REMOTE_SCHEMA), and nothing
 * of it is kept; a blob the tree lacks is skipped. Runs before the local copy takes the records
 * that name them (the records-before-pointer rule, as a local checkpoint writes its blob first).
 */
export function adoptBlobs(repo: string, commit: string, ledgerDir: string, hexes: readonly string[]): number {
  const missing = hexes.filter((hex) => !realFileOps.exists(blobPath(ledgerDir, `sha256:${hex}`)));
  if (missing.length === 0) return 0;
  const got = readBlobs(repo, commit, missing.map(blobTreePath), MAX_PUBLISHED_BLOB);
  let n = 0;
  got.forEach((bytes, i) => {
    if (!bytes) return;
    if (bytes.length > MAX_PUBLISHED_BLOB || sha256Hex(bytes) !== missing[i]) {
      throw new LedgerError('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} holds blobs/${missing[i].slice(0, 12)}… whose bytes are not the blob it names`, { commit }, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
    }
    putBlob(ledgerDir, bytes);
    n++;
  });
  return n;
}
