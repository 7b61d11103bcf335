// The secret key file format (SPEC 7): {"v":1,"alg":"ed25519","name","secret_key"}. Pure: no
// I/O, and no noble import, so the CLI's append path stays light (key-file.ts reads and writes files).
import { findDuplicateKey, fromBase64url, toBase64url } from '../canonical.js';
import { LedgerError } from '../errors.js';

export interface SecretKeyFile { v: 1; alg: 'ed25519'; name: string; secret_key: string }

export const KEY_NAME_RE = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * Checks that a parsed JSON value is an object with exactly `fields`; throws `code` otherwise.
 * `quote`: false for a secret key file, whose unknown field names are not repeated (one might
 * be the seed, pasted as a name).
 */
export function exactFields(obj: unknown, fields: string[], what: string, code: 'INPUT_KEY' | 'INPUT_TRUST', quote = true): Record<string, unknown> {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new LedgerError(code, `${what}: expected a JSON object`);
  }
  const o = obj as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!fields.includes(k)) throw new LedgerError(code, `${what}: ${quote ? `unknown field "${k}"` : 'an unknown field'} (expected only ${fields.join(', ')})`);
  }
  for (const k of fields) {
    if (!Object.hasOwn(o, k)) throw new LedgerError(code, `${what}: missing field "${k}"`);
  }
  return o;
}

/**
 * The key file's JSON. Policy (issue 13 finding 14): no error about a key file ever quotes its
 * text: JSON.parse's message carries a snippet of the input (ten characters of a seed, where the
 * file was cut), and a duplicate key's name could be the seed itself. Only the fact is reported.
 */
function parseKeyJson(text: string, path: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LedgerError('INPUT_KEY', `${path} is not valid JSON (its text is not shown: it holds a secret key)`, { path });
  }
  if (findDuplicateKey(text) !== null) throw new LedgerError('INPUT_KEY', `${path} has a duplicate key (its text is not shown: it holds a secret key)`, { path });
  return value;
}

/** Parses a secret key file's text and returns its 32-byte seed. No error quotes the text. */
export function parseSecretKeyFile(text: string, path = 'key file'): { name: string; seed: Uint8Array } {
  const o = exactFields(parseKeyJson(text, path), ['v', 'alg', 'name', 'secret_key'], path, 'INPUT_KEY', false);
  if (o.v !== 1) throw new LedgerError('INPUT_KEY', `${path}: "v" must be 1`);
  if (o.alg !== 'ed25519') throw new LedgerError('INPUT_KEY', `${path}: "alg" must be "ed25519"`);
  if (typeof o.name !== 'string' || !KEY_NAME_RE.test(o.name)) {
    throw new LedgerError('INPUT_KEY', `${path}: "name" must be 1-64 chars of [A-Za-z0-9._@-]`);
  }
  const seed = fromBase64url(o.secret_key, 32);
  if (!seed) throw new LedgerError('INPUT_KEY', `${path}: "secret_key" must be base64url (no padding) of 32 bytes`);
  return { name: o.name, seed };
}

export function formatSecretKeyFile(name: string, seed: Uint8Array): string {
  const file: SecretKeyFile = { v: 1, alg: 'ed25519', name, secret_key: toBase64url(seed) };
  return JSON.stringify(file) + '\n';
}

