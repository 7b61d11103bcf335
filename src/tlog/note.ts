// C2SP signed-note (c2sp.org/signed-note): a text ending in a newline, a blank line, and one or
// more lines "— <key name> base64(key ID || signature)". Pure: no I/O. Attacker-controlled input
// throughout: a note arrives from a remote, a witness or a proof file.
//
// Parsing throws INPUT_NOTE (exit 2) on a malformed note; whether a signature verifies is a
// finding (openNote's result), never an exception.
import { fromBase64url, LONE_SURROGATE } from '../canonical.js';
import { LedgerError } from '../errors.js';
import { createSigner, verifyFast } from '../sign.js';
import { fromBase64, quote, toBase64 } from './hash.js';

/** Signature type bytes (signed-note "Signature types"). */
export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;

/** One signature line: the key name, the key ID and the signature bytes after the ID. */
export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature after its four key-ID bytes (cosignature/v1: timestamp || Ed25519 signature). */
  sig: Uint8Array;
  /** The line's base64, as written: two lines are the same signature when these are equal. */
  base64: string;
}

export interface Note {
  /** The note text, with its final newline, without the blank line. */
  text: string;
  sigs: NoteSignature[];
}

// Policy: at most 100 signature lines (signed-note requires at least 16; Go's sumdb/note refuses
// more than 100 as malformed), and a note of at most 64 KiB, so a hostile note costs little.
export const MAX_SIGNATURES = 100;
export const MAX_NOTE_BYTES = 65536;

const DASH = '\u2014 ';
// No Unicode space (the u flag's \s) and no plus sign: signed-note "Format".
const BAD_NAME_RE = /[\s+]/u;
// No ASCII control character other than newline.
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\x00-\x09\x0b-\x1f\x7f]/;

export function isKeyName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && !BAD_NAME_RE.test(name) && !LONE_SURROGATE.test(name);
}

const malformed = (why: string) => new LedgerError('INPUT_NOTE', `malformed signed note: ${why}`, { why });

/** Decodes and checks a note's bytes (UTF-8, no control characters, the size limit). */
export function noteText(input: Uint8Array | string): string {
  let text: string;
  if (typeof input === 'string') {
    if (LONE_SURROGATE.test(input)) throw malformed('not valid Unicode');
    text = input;
  } else {
    if (input.length > MAX_NOTE_BYTES) throw malformed(`more than ${MAX_NOTE_BYTES} bytes`);
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      throw malformed('not valid UTF-8');
    }
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_NOTE_BYTES) throw malformed(`more than ${MAX_NOTE_BYTES} bytes`);
  if (CONTROL_RE.test(text)) throw malformed('a control character other than newline');
  return text;
}

/** Parses one signature line's content (after the dash), throwing INPUT_NOTE when malformed. */
export function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(DASH)) throw malformed(`a signature line must start with "— ", got ${quote(line)}`);
  const rest = line.slice(DASH.length);
  const sp = rest.indexOf(' ');
  if (sp < 0) throw malformed(`a signature line needs a key name and a signature, got ${quote(line)}`);
  const name = rest.slice(0, sp);
  const b64 = rest.slice(sp + 1);
  if (!isKeyName(name)) throw malformed(`bad key name ${quote(name)}`);
  const raw = fromBase64(b64);
  if (raw === null || raw.length < 5) throw malformed(`bad signature for ${quote(name)}: not base64 of a key ID and a signature`);
  const keyId = ((raw[0] << 24) >>> 0) + (raw[1] << 16) + (raw[2] << 8) + raw[3];
  return { name, keyId, sig: raw.subarray(4), base64: b64 };
}

/**
 * Splits a signed note into its text and signature lines (signed-note "Format"). The text is
 * separated from the signatures by the note's last blank line.
 */
export function parseNote(input: Uint8Array | string): Note {
  const all = noteText(input);
  if (!all.endsWith('\n')) throw malformed('it does not end with a newline');
  const split = all.lastIndexOf('\n\n');
  if (split < 0) throw malformed('no blank line before the signatures');
  const text = all.slice(0, split + 1);
  const lines = all.slice(split + 2, -1).split('\n');
  if (lines.length === 1 && lines[0] === '') throw malformed('no signature lines');
  if (lines.length > MAX_SIGNATURES) throw malformed(`more than ${MAX_SIGNATURES} signatures`);
  return { text, sigs: lines.map(parseSignatureLine) };
}

/** Writes a note: its text, the blank line, its signature lines. */
export function formatNote(note: Note): string {
  if (!note.text.endsWith('\n')) throw malformed('the text does not end with a newline');
  noteText(note.text);
  if (note.sigs.length === 0) throw malformed('no signature lines');
  return note.text + '\n' + note.sigs.map(formatSignatureLine).join('');
}

export function formatSignatureLine(s: { name: string; keyId: number; sig: Uint8Array }): string {
  if (!isKeyName(s.name)) throw malformed(`bad key name ${quote(s.name)}`);
  const raw = new Uint8Array(4 + s.sig.length);
  new DataView(raw.buffer).setUint32(0, s.keyId >>> 0);
  raw.set(s.sig, 4);
  return `${DASH}${s.name} ${toBase64(raw)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Keys.

/** signed-note: key ID = SHA-256(key name || 0x0A || signature type || public key)[:4], big-endian. */
export function keyIdOf(name: string, type: number, publicKey: Uint8Array): number {
  const buf = Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, type]), publicKey]);
  const h = process.getBuiltinModule('node:crypto').hash('sha256', buf, 'buffer') as unknown as Buffer;
  return h.readUInt32BE(0);
}

/** A public key as signed-note's verifier-key text names it. */
export interface Vkey {
  name: string;
  keyId: number;
  type: number;
  publicKey: Uint8Array;
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** `<name>+hex(key ID)+base64(type || public key)` (signed-note "Verifier keys"). */
export function formatVkey(v: { name: string; type: number; publicKey: Uint8Array }): string {
  if (!isKeyName(v.name)) throw new LedgerError('INPUT_KEY', `bad key name ${quote(v.name)}: empty, or has a space or a plus sign`);
  const id = keyIdOf(v.name, v.type, v.publicKey);
  return `${v.name}+${hex8(id)}+${toBase64(Uint8Array.from([v.type, ...v.publicKey]))}`;
}

/**
 * Parses a verifier key. Policy: only Ed25519 (0x01, a log's key) and cosignature/v1 (0x04, a
 * witness's key) are known, each a 32-byte key; the key ID must be the one signed-note
 * recommends (Go's sumdb/note checks the same), so a vkey whose ID was edited is refused.
 */
export function parseVkey(text: string, types: readonly number[] = [SIG_ED25519, SIG_COSIGNATURE_V1]): Vkey {
  const bad = (why: string) => new LedgerError('INPUT_KEY', `bad verifier key ${quote(text)}: ${why}`, { why });
  if (typeof text !== 'string') throw bad('not text');
  // The name and the ID end at the first two plus signs; the base64 key may hold more.
  const i = text.indexOf('+');
  const j = i < 0 ? -1 : text.indexOf('+', i + 1);
  if (j < 0) throw bad('expected <name>+<key id>+<key>');
  const [name, idHex, keyB64] = [text.slice(0, i), text.slice(i + 1, j), text.slice(j + 1)];
  if (!isKeyName(name)) throw bad('bad key name');
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw bad('the key ID is not 8 lowercase hex digits');
  const raw = fromBase64(keyB64);
  if (raw === null || raw.length < 1) throw bad('the key is not base64');
  const type = raw[0];
  if (!types.includes(type)) throw bad(`signature type 0x${type.toString(16).padStart(2, '0')} is not one this use accepts`);
  const publicKey = raw.slice(1);
  if (publicKey.length !== 32) throw bad(`an Ed25519 key is 32 bytes, got ${publicKey.length}`);
  const keyId = keyIdOf(name, type, publicKey);
  if (hex8(keyId) !== idHex) throw bad(`the key ID is not the key's (expected ${hex8(keyId)})`);
  return { name, keyId, type, publicKey };
}

// ---------------------------------------------------------------------------------------------
// Signing and opening.

/** A key that signs note texts. */
export interface NoteSigner {
  name: string;
  keyId: number;
  type: number;
  publicKey: Uint8Array;
  /** The signature bytes after the key ID, over `text`. */
  sign(text: string): Uint8Array;
}

/** A plain Ed25519 note signer (type 0x01): a log signing its checkpoints. */
export function ed25519NoteSigner(name: string, seed: Uint8Array): NoteSigner {
  if (!isKeyName(name)) throw new LedgerError('INPUT_KEY', `bad key name ${quote(name)}: empty, or has a space or a plus sign`);
  const s = createSigner(seed);
  const publicKey = fromBase64url(s.publicKey, 32)!;
  return {
    name, type: SIG_ED25519, publicKey, keyId: keyIdOf(name, SIG_ED25519, publicKey),
    sign: (text) => s.sign(Buffer.from(text, 'utf8')),
  };
}

/** Signs `text` with each signer, keeping `keep` signatures from other keys after them. */
export function signNote(text: string, signers: readonly NoteSigner[], keep: readonly NoteSignature[] = []): string {
  if (!text.endsWith('\n')) throw malformed('the text does not end with a newline');
  noteText(text);
  const ours = signers.map((s) => ({ name: s.name, keyId: s.keyId, sig: s.sign(text) }));
  const others = keep.filter((k) => !signers.some((s) => s.name === k.name && s.keyId === k.keyId));
  return formatNote({ text, sigs: [...ours, ...others] as NoteSignature[] });
}

/** A key that checks signature lines of one name and key ID. */
export interface NoteVerifier {
  name: string;
  keyId: number;
  /** Does `sig` (after its key ID) sign `text`? Never throws. */
  verify(text: string, sig: Uint8Array): boolean;
}

export function ed25519NoteVerifier(v: Vkey): NoteVerifier {
  if (v.type !== SIG_ED25519) throw new LedgerError('INPUT_KEY', `key ${v.name} is not a plain Ed25519 note key (type 0x01)`);
  return {
    name: v.name, keyId: v.keyId,
    verify: (text, sig) => sig.length === 64 && verifyFast(sig, Buffer.from(text, 'utf8'), v.publicKey),
  };
}

/** What opening a note found: the signatures that verified, those of unknown keys, those that failed. */
export interface OpenedNote {
  text: string;
  verified: { sig: NoteSignature; verifier: NoteVerifier }[];
  unknown: NoteSignature[];
  /** Signatures by a known name and key ID that do not verify: signed-note says reject the note. */
  invalid: NoteSignature[];
}

/**
 * Checks every signature line against the verifiers by name and key ID (signed-note
 * "Signatures"): unknown ones are set aside, never trusted; a known one that fails is `invalid`.
 * The same line twice counts once. Policy: two verifiers with the same name and key ID are
 * ambiguous, and their signatures count as invalid (Go's sumdb/note refuses the note).
 */
export function openNote(note: Note, verifiers: readonly NoteVerifier[]): OpenedNote {
  const out: OpenedNote = { text: note.text, verified: [], unknown: [], invalid: [] };
  const seen = new Set<string>();
  for (const s of note.sigs) {
    const id = `${s.name}\n${s.base64}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const matches = verifiers.filter((v) => v.name === s.name && v.keyId === s.keyId);
    if (matches.length === 0) out.unknown.push(s);
    else if (matches.length > 1 || !matches[0].verify(note.text, s.sig)) out.invalid.push(s);
    else out.verified.push({ sig: s, verifier: matches[0] });
  }
  return out;
}
