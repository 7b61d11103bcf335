// C2SP tlog-cosignature (c2sp.org/tlog-cosignature), the Ed25519 cosignature/v1 type: a note
// signature of type 0x04 whose bytes are timestamp (u64, big-endian) || Ed25519 signature over
//
//   "cosignature/v1\n" || "time " || decimal timestamp || "\n" || the checkpoint's note text
//
// Pure: no I/O; the time is passed in.
import { fromBase64url } from '../canonical.js';
import { LedgerError } from '../errors.js';
import { createSigner, verifyFast } from '../sign.js';
import { SIG_COSIGNATURE_V1, isKeyName, keyIdOf, type NoteSigner, type NoteVerifier, type Vkey } from './note.js';
import { quote } from './hash.js';

/** The bytes a cosignature/v1 signs (tlog-cosignature "Ed25519 signed message"). */
export function cosignedMessage(timestamp: number, checkpointText: string): Uint8Array {
  return Buffer.from(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`, 'utf8');
}

/** A witness's cosigner: the timestamp is read from `now` at each signature (seconds). */
export interface Cosigner extends NoteSigner {
  /** Signs with an explicit timestamp (POSIX seconds). */
  signAt(text: string, timestamp: number): Uint8Array;
}

/**
 * An Ed25519 cosigner named `name`. `now` gives the time in milliseconds (injected: the witness
 * passes Date.now, tests a fixed clock).
 */
export function createCosigner(name: string, seed: Uint8Array, now: () => number): Cosigner {
  if (!isKeyName(name)) throw new LedgerError('INPUT_KEY', `bad witness name ${quote(name)}: empty, or has a space or a plus sign`);
  const s = createSigner(seed);
  const publicKey = fromBase64url(s.publicKey, 32)!;
  const signAt = (text: string, timestamp: number): Uint8Array => {
    // tlog-witness: the timestamp MUST NOT be zero; tlog-cosignature: at most 2^63 - 1.
    if (!Number.isSafeInteger(timestamp) || timestamp <= 0) throw new RangeError(`"timestamp" expected a positive integer, got ${timestamp}`);
    const out = new Uint8Array(8 + 64);
    new DataView(out.buffer).setBigUint64(0, BigInt(timestamp));
    out.set(s.sign(cosignedMessage(timestamp, text)), 8);
    return out;
  };
  return {
    name, type: SIG_COSIGNATURE_V1, publicKey, keyId: keyIdOf(name, SIG_COSIGNATURE_V1, publicKey),
    signAt,
    sign: (text) => signAt(text, Math.floor(now() / 1000)),
  };
}

/** The timestamp a cosignature/v1 signature carries, or null when its bytes are not one. */
export function cosignatureTime(sig: Uint8Array): number | null {
  if (sig.length !== 8 + 64) return null;
  const t = new DataView(sig.buffer, sig.byteOffset, 8).getBigUint64(0);
  // Policy: a timestamp past 2^53 - 1 seconds (285 million years) is refused, never rounded.
  if (t === 0n || t > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(t);
}

/** Verifies cosignature/v1 signatures of a witness key (a vkey of type 0x04). */
export function cosignatureVerifier(v: Vkey): NoteVerifier {
  if (v.type !== SIG_COSIGNATURE_V1) throw new LedgerError('INPUT_KEY', `key ${v.name} is not a cosignature/v1 key (type 0x04)`);
  return {
    name: v.name, keyId: v.keyId,
    verify: (text, sig) => {
      const t = cosignatureTime(sig);
      return t !== null && verifyFast(sig.subarray(8), cosignedMessage(t, text), v.publicKey);
    },
  };
}
