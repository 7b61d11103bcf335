// Third-party vectors (fixtures/vectors/SOURCES.md): Wycheproof Ed25519, RFC 8032 section 7.1 and
// the RFC 8785 (JCS) reference pairs. Every assertion names the case it checks.
import { readFileSync, readdirSync } from 'node:fs';
import * as ed from '@noble/ed25519';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/canonical.js';
import { verifyReference, signReference, publicKeyReference } from '../src/ed25519-reference.js';
import { createSigner, verifyFast } from '../src/sign.js';

const VECTORS = new URL('../fixtures/vectors/', import.meta.url);
const readVector = (path: string) => readFileSync(new URL(path, VECTORS), 'utf8');
const hex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

interface WycheproofCase { tcId: number; comment: string; flags: string[]; msg: string; sig: string; result: 'valid' | 'invalid' }
interface WycheproofFile {
  numberOfTests: number;
  testGroups: { publicKey: { pk: string }; tests: WycheproofCase[] }[];
}

const wycheproof = JSON.parse(readVector('wycheproof/ed25519_test.json')) as WycheproofFile;
const wycheproofCases = wycheproof.testGroups.flatMap((g) => g.tests.map((t) => ({ pk: g.publicKey.pk, ...t })));

describe('Wycheproof ed25519_test.json', () => {
  it('holds 151 cases, 88 valid and 63 invalid', () => {
    expect(wycheproof.numberOfTests).toBe(151);
    expect(wycheproofCases).toHaveLength(151);
    expect(wycheproofCases.filter((c) => c.result === 'valid')).toHaveLength(88);
    expect(wycheproofCases.filter((c) => c.result === 'invalid')).toHaveLength(63);
  });

  for (const [name, verify] of [
    ['verifyReference (noble, zip215: false)', verifyReference],
    ['verifyFast (node:crypto + strict checks)', verifyFast],
  ] as const) {
    it(`${name} agrees with all 151 cases`, () => {
      let checked = 0;
      for (const c of wycheproofCases) {
        const got = verify(hex(c.sig), hex(c.msg), hex(c.pk));
        expect(got, `tcId ${c.tcId} (${c.comment}; flags ${c.flags.join(',')}) expected ${c.result}`).toBe(c.result === 'valid');
        checked++;
      }
      expect(checked).toBe(151);
    });
  }

  it('tcId 151 (R with y = 1 and the x sign bit set) is refused by both', () => {
    const c = wycheproofCases.find((x) => x.tcId === 151)!;
    expect(c.result, 'tcId 151').toBe('invalid');
    expect(verifyReference(hex(c.sig), hex(c.msg), hex(c.pk)), 'tcId 151 reference').toBe(false);
    expect(verifyFast(hex(c.sig), hex(c.msg), hex(c.pk)), 'tcId 151 fast').toBe(false);
    // Why the policy matters: noble's default (ZIP-215) accepts it, so this case discriminates.
    expect(ed.verify(hex(c.sig), hex(c.msg), hex(c.pk)), 'tcId 151 noble default').toBe(true);
  });
});

describe('RFC 8032 section 7.1 (Ed25519)', () => {
  const cases = JSON.parse(readVector('rfc8032/ed25519.json')) as {
    name: string; secretKey: string; publicKey: string; message: string; signature: string;
  }[];

  it('holds the five tests of section 7.1', () => {
    expect(cases.map((c) => c.name)).toEqual(['1', '2', '3', '1024', 'SHA(abc)']);
  });

  for (const c of cases) {
    describe(`TEST ${c.name}`, () => {
      const seed = hex(c.secretKey);
      const msg = hex(c.message);

      it('derives the public key with noble and with node:crypto', () => {
        expect(toHex(publicKeyReference(seed)), `TEST ${c.name} noble`).toBe(c.publicKey);
        expect(Buffer.from(createSigner(seed).publicKey, 'base64url').toString('hex'), `TEST ${c.name} node`).toBe(c.publicKey);
      });

      it('signs the vector bytes with signReference and with createSigner', () => {
        expect(toHex(signReference(msg, seed)), `TEST ${c.name} noble`).toBe(c.signature);
        expect(toHex(createSigner(seed).sign(msg)), `TEST ${c.name} node`).toBe(c.signature);
      });

      it('verifies with both verifiers, and neither accepts it under a flipped message bit', () => {
        const sig = hex(c.signature);
        const pk = hex(c.publicKey);
        expect(verifyReference(sig, msg, pk), `TEST ${c.name} reference`).toBe(true);
        expect(verifyFast(sig, msg, pk), `TEST ${c.name} fast`).toBe(true);
        const other = msg.length === 0 ? Uint8Array.of(0) : Uint8Array.from(msg, (b, i) => (i === 0 ? b ^ 1 : b));
        expect(verifyReference(sig, other, pk), `TEST ${c.name} reference, mutated`).toBe(false);
        expect(verifyFast(sig, other, pk), `TEST ${c.name} fast, mutated`).toBe(false);
      });
    });
  }
});

describe('JCS (RFC 8785) reference pairs', () => {
  const names = readdirSync(new URL('jcs/input/', VECTORS)).filter((f) => f.endsWith('.json')).sort();

  it('holds the six pairs', () => {
    expect(names).toEqual(['arrays.json', 'french.json', 'structures.json', 'unicode.json', 'values.json', 'weird.json']);
  });

  // SPEC 2 allows only safe integers in records, and values.json holds fractions and 1E30: that
  // pair goes through `canonicalize` itself (the encoder canonicalJson delegates to), and
  // canonicalJson must refuse it rather than encode it.
  const FRACTIONS = 'values.json';

  for (const name of names) {
    const input = () => JSON.parse(readVector(`jcs/input/${name}`)) as unknown;
    const expected = () => readFileSync(new URL(`jcs/output/${name}`, VECTORS));
    if (name === FRACTIONS) {
      it(`${name}: canonicalize reproduces the output byte for byte; canonicalJson refuses the fractions`, () => {
        expect(Buffer.from(canonicalize(input())!, 'utf8').equals(expected()), name).toBe(true);
        expect(() => canonicalJson(input()), name).toThrow(/\$\.numbers\[0\]: expected a safe integer/);
      });
    } else {
      it(`${name}: canonicalJson reproduces the output byte for byte`, () => {
        const got = Buffer.from(canonicalJson(input()), 'utf8');
        expect(got.toString('hex'), name).toBe(expected().toString('hex'));
      });
    }
  }
});
