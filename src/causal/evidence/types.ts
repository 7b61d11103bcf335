// What the evidence modules share: where a digest reads from, and a currency check's answer.
import type { EvidenceReadOps } from './read-ops.js';
import type { KeptManifests } from './manifest.js';

export interface EvidenceContext {
  /** The folder that holds the ledger directory: relative sources resolve against it, and no
   *  evidence outside it is ever read (SPEC 9). */
  root: string;
  /** The ledger directory itself: never evidence, and skipped inside `dir:` digests, as are the
   *  views HANDOFF.md and HANDOFF.yml in the root. */
  ledgerDir: string;
  /** Where the command was run; relative paths on the command line are resolved against it. */
  cwd?: string;
  /** Where the manifests of dir/ digests are kept (manifest.ts); with it, a changed tree names the first path that differs. */
  manifests?: KeptManifests;
  /** The reads a digest makes (default: the real ones); a test seam, see read-ops.ts. */
  ops?: EvidenceReadOps;
}

export interface EvidenceCheck {
  name: string;
  source: string;
  recorded: string;
  /** The digest now, when it could be computed. */
  actual: string | null;
  current: boolean;
  /** One line: why it is or is not current. */
  reason: string;
}

export interface CurrencyOptions {
  /** Count bare sha256: evidence as current (it names content, not a place). Default false. */
  allowOpaque?: boolean;
}
