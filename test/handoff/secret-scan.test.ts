// The second line against a test command that prints the key (src/handoff/secret-scan.ts): any
// form it lists is found wherever it sits in the output and however the output is cut into the
// chunks it is read in; output without the key is not refused.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatSecretKeyFile } from '../../src/keys/secret-key.js';
import { SecretScanner, containsSecret, valueContainsSecret, type KeySecret } from '../../src/handoff/secret-scan.js';

const RUNS = process.env.SOAK === '1' ? 2000 : 100;
const secretOf = (seed: Uint8Array): KeySecret => ({ seed, file: Buffer.from(formatSecretKeyFile('harness', seed)), path: null });
const seedArb = fc.uint8Array({ minLength: 32, maxLength: 32 });
// Noise that cannot spell a key form by chance: lower-case words and spaces.
const noise = fc.stringMatching(/^[g-z ]{0,200}$/);

function forms(seed: Uint8Array): string[] {
  const b = Buffer.from(seed);
  const file = formatSecretKeyFile('harness', seed);
  const b64url = b.toString('base64url');
  return [
    b64url, b.toString('base64'), b.toString('hex'), b.toString('hex').toUpperCase(), file,
    Buffer.from(file).toString('base64').replace(/.{76}/g, '$&\n'), Buffer.from(file).toString('hex').replace(/.{60}/g, '$&\n'),
    b64url.replace(/.{5}/g, '$&\n'), b64url.slice(20, 35), b.toString('hex').slice(30, 53),
  ];
}

/** Feeds `data` to a scanner cut at `cuts` (fractions of its length). */
function scanInChunks(secret: KeySecret, data: Buffer, cuts: number[]): boolean {
  const s = new SecretScanner(secret);
  const at = [...new Set(cuts.map((c) => Math.floor(c * data.length)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, data.length]) {
    s.feed(data.subarray(from, to));
    from = to;
  }
  return s.found;
}

describe('the key in test output', () => {
  it('is found in every form, anywhere, across any chunk boundaries', () => {
    fc.assert(fc.property(seedArb, fc.nat({ max: 9 }), noise, noise, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), (seed, i, before, after, cuts) => {
      const data = Buffer.from(`${before}${forms(seed)[i]}${after}`);
      expect(scanInChunks(secretOf(seed), data, cuts)).toBe(true);
    }), { numRuns: RUNS });
  });

  it('is found as raw bytes (11 of them suffice)', () => {
    fc.assert(fc.property(seedArb, fc.nat({ max: 21 }), (seed, start) => {
      expect(containsSecret(secretOf(seed), Buffer.concat([Buffer.from('x'), Buffer.from(seed.subarray(start, start + 11)), Buffer.from('y')]))).toBe(true);
    }), { numRuns: RUNS });
  });

  it('is not seen in output that does not hold it: another key file, its public key, noise', () => {
    fc.assert(fc.property(seedArb, seedArb, noise, (mine, other, text) => {
      fc.pre(Buffer.compare(Buffer.from(mine), Buffer.from(other)) !== 0);
      const out = `${text}\n${formatSecretKeyFile('harness', other)}${Buffer.from(other).toString('hex')}\n`;
      expect(containsSecret(secretOf(mine), out)).toBe(false);
    }), { numRuns: RUNS });
  });

  it('is found inside any text field of a draft', () => {
    const seed = new Uint8Array(32).fill(9);
    const key = Buffer.from(seed).toString('base64url');
    expect(valueContainsSecret(secretOf(seed), { done: 'd', verified: ['a', `the key is ${key}`] })).toBe(true);
    expect(valueContainsSecret(secretOf(seed), { invariants: { tests: { ok: true, detail: 'fine' } } })).toBe(false);
  });

  it('property: a draft scanned as one text finds a form in any string, key or value, however deep, and refuses no draft without one', () => {
    // The reference: each string on its own.
    const each = (secret: KeySecret, v: unknown): boolean => typeof v === 'string' ? containsSecret(secret, v)
      : Array.isArray(v) ? v.some((x) => each(secret, x))
        : v !== null && typeof v === 'object' ? Object.entries(v).some(([k, x]) => containsSecret(secret, k) || each(secret, x)) : false;
    const draft = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, noise, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(noise, tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(fc.property(seedArb, draft, fc.nat(), fc.nat(), (seed, value, pick, which) => {
      const secret = secretOf(seed);
      expect(valueContainsSecret(secret, value)).toBe(each(secret, value));
      // Plant one form in one string of it (or as a key), wherever that string is.
      const form = forms(seed)[which % forms(seed).length];
      let n = 0;
      const count = (v: unknown): number => typeof v === 'string' ? 1 : Array.isArray(v) ? v.reduce((a: number, x) => a + count(x), 0) : v !== null && typeof v === 'object' ? Object.entries(v).reduce((a, [, x]) => a + 1 + count(x), 0) : 0;
      const total = count(value);
      if (total === 0) return;
      const at = pick % total;
      const plant = (v: unknown): unknown => {
        if (typeof v === 'string') return n++ === at ? `${v}${form}` : v;
        if (Array.isArray(v)) return v.map(plant);
        if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [n++ === at ? `${k}${form}` : k, plant(x)]));
        return v;
      };
      expect(valueContainsSecret(secret, plant(value))).toBe(true);
    }), { numRuns: RUNS });
  });
});
