// Fixed key material for golden tests and fixtures. PUBLIC TEST MATERIAL: these seeds are in the
// repository and sign nothing real. Reuse them where a test needs stable bytes.
import { createSigner, type Signer } from '../../src/sign.js';

const seedFromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'));

/** The harness key of the golden records: bytes 0x00..0x1f. */
export const FIXED_SEED_HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
export const FIXED_SEED: Uint8Array = seedFromHex(FIXED_SEED_HEX);
/** Its public key, base64url, pinned here so a change in key derivation shows up as a failure. */
export const FIXED_PUBLIC_KEY = 'A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg';

/** A second, unrelated key (bytes 0xff..0xe0), for "another key signed it" cases. */
export const OTHER_SEED_HEX = 'fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0';
export const OTHER_SEED: Uint8Array = seedFromHex(OTHER_SEED_HEX);
export const OTHER_PUBLIC_KEY = 'uvxxvq06xeS2PpyCFu5xo0quxlci7tvKcotOmzzM45Y';

export const fixedSigner = (): Signer => createSigner(FIXED_SEED);
export const otherSigner = (): Signer => createSigner(OTHER_SEED);
