// src/sign.ts (node:crypto, the fast path) against src/ed25519-reference.ts (noble, the strict
// reference): same signatures, same verdicts on valid and on mutated inputs (SPEC 4, SPEC 5).
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toBase64url } from '../src/canonical.js';
import { publicKeyReference, signReference, verifyReference } from '../src/ed25519-reference.js';
import {
  SMALL_ORDER_Y, createSigner, isCanonicalS, isStrictPointEncoding, makeSig, signingMessage, verifyFast, verifySig,
} from '../src/sign.js';
import { L, ORDER_8, SMALL_ORDER_POINTS, le32, leToBigint, withTorsion } from './helpers/curve.js';
import { FIXED_PUBLIC_KEY, FIXED_SEED, fixedSigner, otherSigner } from './helpers/fixed-keys.js';
import { runs } from './helpers/runs.js';

const P = 2n ** 255n - 19n;
const seedArb = fc.uint8Array({ minLength: 32, maxLength: 32 });
const msgArb = fc.uint8Array({ maxLength: 200 });
const digestArb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => 'sha256:' + Buffer.from(b).toString('hex'));
const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  out[(bit >> 3) % out.length] ^= 1 << (bit & 7);
  return out;
}

/** Both verifiers' verdicts; the test asserts they are equal before it asserts the value. */
function verdicts(sig: Uint8Array, msg: Uint8Array, key: Uint8Array) {
  return { fast: verifyFast(sig, msg, key), reference: verifyReference(sig, msg, key) };
}
function expectBoth(sig: Uint8Array, msg: Uint8Array, key: Uint8Array, expected: boolean, label: string) {
  const v = verdicts(sig, msg, key);
  expect(v, `${label}: sig ${hexOf(sig)} key ${hexOf(key)}`).toEqual({ fast: expected, reference: expected });
}

describe('signing: node:crypto and noble produce the same bytes', () => {
  it('for random seeds and messages (signature and public key)', () => {
    fc.assert(
      fc.property(seedArb, msgArb, (seed, msg) => {
        const signer = createSigner(seed);
        expect(signer.publicKey).toBe(toBase64url(publicKeyReference(seed)));
        expect(hexOf(signer.sign(msg))).toBe(hexOf(signReference(msg, seed)));
      }),
      { numRuns: runs(200, 20_000) },
    );
  });

  it('for the fixed key of the golden tests', () => {
    expect(fixedSigner().publicKey).toBe(FIXED_PUBLIC_KEY);
    expect(toBase64url(publicKeyReference(FIXED_SEED))).toBe(FIXED_PUBLIC_KEY);
  });

  it('createSigner refuses a seed that is not 32 bytes with a TypeError naming the length', () => {
    expect(() => createSigner(new Uint8Array(31))).toThrow(TypeError);
    expect(() => createSigner(new Uint8Array(31))).toThrow(/length=31/);
    expect(() => createSigner('x'.repeat(32) as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('verifyFast agrees with verifyReference', () => {
  it('on random valid signatures: both accept', () => {
    fc.assert(
      fc.property(seedArb, msgArb, (seed, msg) => {
        expectBoth(signReference(msg, seed), msg, publicKeyReference(seed), true, 'valid');
      }),
      { numRuns: runs(100, 10_000) },
    );
  });

  it('when one bit of the signature, the message or the key is flipped: both refuse', () => {
    fc.assert(
      fc.property(seedArb, msgArb, fc.nat(), fc.constantFrom('sig', 'msg', 'key'), (seed, msg, bit, where) => {
        const sig = signReference(msg, seed);
        const key = publicKeyReference(seed);
        if (where === 'sig') expectBoth(flipBit(sig, bit % 512), msg, key, false, 'sig bit');
        if (where === 'key') expectBoth(sig, msg, flipBit(key, bit % 256), false, 'key bit');
        if (where === 'msg') {
          const other = msg.length === 0 ? Uint8Array.of(bit & 0xff) : flipBit(msg, bit % (msg.length * 8));
          expectBoth(sig, other, key, false, 'msg bit');
        }
      }),
      { numRuns: runs(150, 15_000) },
    );
  });

  it('with a signer of that key made first (its private key object then verifies): the same verdicts', () => {
    fc.assert(
      fc.property(seedArb, msgArb, fc.nat(), (seed, msg, bit) => {
        const key = publicKeyReference(seed);
        expect(createSigner(seed).publicKey).toBe(toBase64url(key)); // registers its key object
        const sig = signReference(msg, seed);
        expectBoth(sig, msg, key, true, 'valid, own key');
        expectBoth(flipBit(sig, bit % 512), msg, key, false, 'sig bit, own key');
        const sPlusL = le32((leToBigint(sig.subarray(32)) + L) % 2n ** 256n);
        expectBoth(Uint8Array.from([...sig.subarray(0, 32), ...sPlusL]), msg, key, false, 'S + L, own key');
        for (const p of SMALL_ORDER_POINTS.slice(0, 2)) expectBoth(Uint8Array.from([...p.toBytes(), ...sig.subarray(32)]), msg, key, false, 'small-order R, own key');
      }),
      { numRuns: runs(100, 10_000) },
    );
  });

  it('when S is replaced by S + L (same point, non-canonical scalar): both refuse', () => {
    fc.assert(
      fc.property(seedArb, msgArb, (seed, msg) => {
        const sig = signReference(msg, seed);
        const s = leToBigint(sig.subarray(32));
        const bad = Uint8Array.from(sig);
        bad.set(le32(s + L), 32);
        expect(isCanonicalS(bad)).toBe(false);
        expectBoth(bad, msg, publicKeyReference(seed), false, 'S + L');
      }),
      { numRuns: runs(50, 5_000) },
    );
  });

  // Every encoding whose y (sign bit cleared) is a small-order y, in both sign-bit variants.
  const smallOrderEncodings = SMALL_ORDER_Y.flatMap((y) => {
    const a = new Uint8Array(Buffer.from(y, 'hex'));
    const b = Uint8Array.from(a);
    b[31] |= 0x80;
    return [a, b];
  });
  // Non-canonical encodings: y + p for y = 0..18 (the only y with y + p < 2^255), both signs.
  const nonCanonicalEncodings = Array.from({ length: 19 }, (_, y) => le32(BigInt(y) + P)).flatMap((a) => {
    const b = Uint8Array.from(a);
    b[31] |= 0x80;
    return [a, b];
  });

  it('when R or the key is replaced by a small-order or a non-canonical encoding: both refuse', () => {
    expect(smallOrderEncodings).toHaveLength(10);
    expect(nonCanonicalEncodings).toHaveLength(38);
    const bad = [...smallOrderEncodings, ...nonCanonicalEncodings];
    fc.assert(
      fc.property(seedArb, msgArb, fc.constantFrom(...bad), fc.boolean(), (seed, msg, enc, inR) => {
        const sig = signReference(msg, seed);
        const key = publicKeyReference(seed);
        expect(isStrictPointEncoding(enc), hexOf(enc)).toBe(false);
        if (inR) {
          const s = Uint8Array.from(sig);
          s.set(enc, 0);
          expectBoth(s, msg, key, false, 'bad R');
        } else {
          expectBoth(sig, msg, enc, false, 'bad key');
        }
      }),
      { numRuns: runs(100, 10_000) },
    );
  });

  // The signer owns the key, so it can make both equations hold where it likes; these cases are
  // the ones on which a cofactored verifier (noble) and a cofactorless one (OpenSSL) part ways.
  const extended = (seed: Uint8Array) => ed.utils.getExtendedPublicKey(seed);
  const challenge = (R: Uint8Array, A: Uint8Array, msg: Uint8Array) =>
    leToBigint(sha512(Uint8Array.from([...R, ...A, ...msg]))) % L;

  it('on a signature whose R = [r]B + T carries a torsion part T (made by the key holder): both refuse', () => {
    fc.assert(
      fc.property(seedArb, msgArb, fc.bigInt(1n, L - 1n), fc.integer({ min: 1, max: 7 }), (seed, msg, r, t) => {
        const { scalar: a, pointBytes: A } = extended(seed);
        const R = ed.Point.BASE.multiply(r).add(SMALL_ORDER_POINTS[t]).toBytes();
        const S = (r + challenge(R, A, msg) * a) % L;
        const sig = Uint8Array.from([...R, ...le32(S)]);
        // noble's own cofactored check accepts it: the case is real.
        expect(ed.verify(sig, msg, A, { zip215: false })).toBe(true);
        expectBoth(sig, msg, A, false, `R with torsion ${t}`);
      }),
      { numRuns: runs(30, 3_000) },
    );
  });

  it('on a key A + T with a torsion part: both accept exactly when [k]T vanishes', () => {
    fc.assert(
      fc.property(seedArb, msgArb, fc.bigInt(1n, L - 1n), fc.integer({ min: 1, max: 7 }), (seed, msg, r, t) => {
        const { scalar: a, pointBytes } = extended(seed);
        const A = withTorsion(pointBytes, t);
        const R = ed.Point.BASE.multiply(r).toBytes();
        const k = challenge(R, A, msg);
        const sig = Uint8Array.from([...R, ...le32((r + k * a) % L)]);
        const vanishes = SMALL_ORDER_POINTS[t].multiplyUnsafe(k).is0();
        expectBoth(sig, msg, A, vanishes, `key with torsion ${t}, k mod 8 = ${k % 8n}`);
      }),
      { numRuns: runs(60, 6_000) },
    );
  });

  it('on random bytes: both refuse', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), msgArb, seedArb, (sig, msg, seed) => {
        expectBoth(sig, msg, publicKeyReference(seed), false, 'random sig');
      }),
      { numRuns: runs(100, 10_000) },
    );
  });

  it('on wrong lengths: both return false without throwing', () => {
    const seed = FIXED_SEED;
    const msg = Uint8Array.of(1, 2, 3);
    const sig = signReference(msg, seed);
    const key = publicKeyReference(seed);
    expectBoth(sig.subarray(0, 63), msg, key, false, 'sig 63');
    expectBoth(Uint8Array.from([...sig, 0]), msg, key, false, 'sig 65');
    expectBoth(sig, msg, key.subarray(0, 31), false, 'key 31');
    expectBoth(new Uint8Array(0), msg, key, false, 'empty sig');
  });
});

describe('the small-order points', () => {
  it('SMALL_ORDER_Y holds exactly the y-coordinates of the 8 points of order dividing 8, derived with noble', () => {
    // [i]T for an order-8 T: 8 distinct points, every one killed by 8, and [4]T != 0 for T itself.
    expect(ORDER_8.multiplyUnsafe(4n).is0()).toBe(false);
    expect(ORDER_8.multiplyUnsafe(8n).is0()).toBe(true);
    const encodings = SMALL_ORDER_POINTS.map((Q) => hexOf(Q.toBytes()));
    expect(new Set(encodings).size).toBe(8);
    for (const Q of SMALL_ORDER_POINTS) expect(Q.isSmallOrder()).toBe(true);
    const ys = new Set(
      SMALL_ORDER_POINTS.map((Q) => {
        const b = Q.toBytes();
        b[31] &= 0x7f;
        return hexOf(b);
      }),
    );
    expect([...ys].sort()).toEqual([...SMALL_ORDER_Y].sort());
    expect(SMALL_ORDER_Y).toHaveLength(5);
  });

  it('isStrictPointEncoding refuses every small-order encoding and accepts real public keys', () => {
    for (const Q of SMALL_ORDER_POINTS) expect(isStrictPointEncoding(Q.toBytes()), Q.toHex()).toBe(false);
    fc.assert(
      fc.property(seedArb, (seed) => isStrictPointEncoding(publicKeyReference(seed))),
      { numRuns: runs(50, 5_000) },
    );
  });
});

describe('signingMessage', () => {
  const digest = 'sha256:' + '0123456789abcdef'.repeat(4);

  it('is the ASCII bytes of "handoff-ledger/record/v1 " + digest', () => {
    const m = signingMessage('record', digest);
    expect(m).toHaveLength(25 + 71);
    expect(Buffer.from(m).toString('hex')).toBe(
      Buffer.from('handoff-ledger/record/v1 ', 'ascii').toString('hex') + Buffer.from(digest, 'ascii').toString('hex'),
    );
    expect(Buffer.from(m.subarray(0, 25)).toString('hex')).toBe('68616e646f66662d6c65646765722f7265636f72642f763120');
  });

  it('is the ASCII bytes of "handoff-ledger/head/v1 " + digest', () => {
    const m = signingMessage('head', digest);
    expect(m).toHaveLength(23 + 71);
    expect(Buffer.from(m).toString('latin1')).toBe(`handoff-ledger/head/v1 ${digest}`);
    expect(Buffer.from(m.subarray(0, 23)).toString('hex')).toBe('68616e646f66662d6c65646765722f686561642f763120');
  });

  it('pins one full signature over a record message with the fixed key', () => {
    const sig = makeSig('record', digest, fixedSigner());
    expect(sig.key).toBe(FIXED_PUBLIC_KEY);
    expect(sig.value).toBe(toBase64url(signReference(signingMessage('record', digest), FIXED_SEED)));
    expect(verifySig('record', digest, sig)).toBe(true);
  });
});

describe('verifySig and the two domains', () => {
  it('a HEAD signature never verifies as a record signature, nor the other way round', () => {
    const signer = fixedSigner();
    fc.assert(
      fc.property(digestArb, (digest) => {
        const head = makeSig('head', digest, signer);
        const record = makeSig('record', digest, signer);
        expect(verifySig('head', digest, head)).toBe(true);
        expect(verifySig('record', digest, head)).toBe(false);
        expect(verifySig('record', digest, record)).toBe(true);
        expect(verifySig('head', digest, record)).toBe(false);
      }),
      { numRuns: runs(100, 10_000) },
    );
  });

  it('refuses, without throwing, a sig under another key, another digest, or with a malformed member', () => {
    const digest = 'sha256:' + 'ab'.repeat(32);
    const good = makeSig('record', digest, fixedSigner());
    const other = makeSig('record', digest, otherSigner());
    const bad: [string, unknown][] = [
      ['key swapped for another pinned-looking key', { ...good, key: other.key }],
      ['another digest', { ...good, value: makeSig('record', 'sha256:' + 'cd'.repeat(32), fixedSigner()).value }],
      ['alg', { ...good, alg: 'EdDSA' }],
      ['value padded', { ...good, value: good.value + '==' }],
      ['value with +', { ...good, value: good.value.replace(/-|_/, '+') }],
      ['value 63 bytes', { ...good, value: toBase64url(Buffer.from(good.value, 'base64url').subarray(0, 63)) }],
      ['key not base64url', { ...good, key: good.key.slice(0, -1) + '=' }],
      ['key all zero (small order)', { ...good, key: toBase64url(new Uint8Array(32)) }],
      ['null', null],
      ['a string', 'sig'],
      ['missing value', { alg: good.alg, key: good.key }],
    ];
    expect(verifySig('record', digest, good)).toBe(true);
    for (const [label, sig] of bad) expect(verifySig('record', digest, sig), label).toBe(false);
  });
});
