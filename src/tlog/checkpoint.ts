// C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint): the note text "<origin>\n<size>\n<base64 root>\n"
// and optional extension lines. Pure: no I/O. SPEC 13: the ledger writes no extension lines, and
// its origin is "handoff-ledger/" + the genesis id's 64 hex digits.
import { LedgerError } from '../errors.js';
import { HASH_SIZE, fromBase64, parseDecimal, quote, toBase64 } from './hash.js';

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** Extension lines (opaque, non-empty); the ledger's own checkpoints have none. */
  extensions: string[];
}

const ORIGIN_PREFIX = 'handoff-ledger/';

/** SPEC 13: a ledger's origin, from its genesis record's id ("sha256:" + 64 hex). */
export function ledgerOrigin(genesisId: string): string {
  const m = /^sha256:([0-9a-f]{64})$/.exec(genesisId);
  if (!m) throw new LedgerError('INPUT_SCHEMA', `not a record id: ${quote(genesisId)}`);
  return ORIGIN_PREFIX + m[1];
}

export function isLedgerOrigin(origin: string): boolean {
  return /^handoff-ledger\/[0-9a-f]{64}$/.test(origin);
}

/** The checkpoint's note text. */
export function formatCheckpoint(c: Checkpoint | Omit<Checkpoint, 'extensions'>): string {
  const ext = 'extensions' in c ? c.extensions : [];
  if (c.origin.length === 0 || c.origin.includes('\n')) throw new LedgerError('INPUT_NOTE', 'a checkpoint origin is one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new LedgerError('INPUT_NOTE', `bad tree size ${c.size}`);
  if (c.root.length !== HASH_SIZE) throw new LedgerError('INPUT_NOTE', 'a checkpoint root is 32 bytes');
  if (ext.some((e) => e.length === 0 || e.includes('\n'))) throw new LedgerError('INPUT_NOTE', 'an extension line is one non-empty line');
  return [c.origin, String(c.size), toBase64(c.root), ...ext].map((l) => l + '\n').join('');
}

/** Parses a checkpoint's note text (the text of an opened or parsed note). Attacker-controlled. */
export function parseCheckpoint(text: string): Checkpoint {
  const bad = (why: string) => new LedgerError('INPUT_NOTE', `malformed checkpoint: ${why}`, { why });
  if (!text.endsWith('\n')) throw bad('the text does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw bad('fewer than three lines');
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (origin.length === 0) throw bad('an empty origin line');
  const size = parseDecimal(sizeText);
  if (size === null) throw bad(`the tree size ${quote(sizeText)} is not a decimal with no leading zeroes`);
  const root = fromBase64(rootText, HASH_SIZE);
  if (root === null) throw bad(`the root ${quote(rootText)} is not a base64 SHA-256 hash`);
  if (extensions.some((e) => e.length === 0)) throw bad('an empty extension line');
  return { origin, size, root, extensions };
}
