// src/keys/trust.ts: trust files and secret key files parsed strictly (SPEC 7), and the key pin.
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { toBase64url } from '../src/canonical.js';
import { LedgerError } from '../src/errors.js';
import { publicKeyProblem } from '../src/ed25519-reference.js';
import { parseSecretKeyFile, parseTrust, pinProblem, trustEntry, type Trust } from '../src/keys/trust.js';
import { SMALL_ORDER_POINTS, le32, withTorsion } from './helpers/curve.js';
import { FIXED_PUBLIC_KEY, FIXED_SEED_HEX, OTHER_PUBLIC_KEY } from './helpers/fixed-keys.js';

const entry = (over: Record<string, unknown> = {}) => ({
  name: 'harness', alg: 'ed25519', key: FIXED_PUBLIC_KEY, agents: ['*'], valid_from_seq: 0, revoked_at_seq: null, ...over,
});
const trustText = (keys: unknown[], top: Record<string, unknown> = {}) => JSON.stringify({ v: 1, keys, ...top });

function refusal(fn: () => unknown): LedgerError {
  try {
    fn();
  } catch (e) {
    if (e instanceof LedgerError) return e;
    throw e;
  }
  throw new Error('expected a refusal, but it was accepted');
}

const fixedKeyBytes = Buffer.from(FIXED_PUBLIC_KEY, 'base64url');
const identity = new Uint8Array(32);
identity[0] = 1;
const P = 2n ** 255n - 19n;

describe('parseTrust', () => {
  it('accepts the SPEC 7 example shape with real keys', () => {
    const trust = parseTrust(trustText([entry(), entry({ name: 'agent-b', key: OTHER_PUBLIC_KEY, agents: ['agent-b', 'ci@host'], valid_from_seq: 3, revoked_at_seq: 10 })]));
    expect(trust.keys.map((k) => k.name)).toEqual(['harness', 'agent-b']);
    expect(trust.keys[1]).toEqual({ name: 'agent-b', alg: 'ed25519', key: OTHER_PUBLIC_KEY, agents: ['agent-b', 'ci@host'], valid_from_seq: 3, revoked_at_seq: 10 });
  });

  it('accepts an empty window (a key revoked before it was ever valid), which then pins nothing', () => {
    const trust = parseTrust(trustText([entry({ valid_from_seq: 5, revoked_at_seq: 5 })]));
    for (const seq of [0, 4, 5, 6]) expect(pinProblem(trust, FIXED_PUBLIC_KEY, seq, 'a'), `seq ${seq}`).not.toBeNull();
  });

  const table: [string, string, RegExp][] = [
    ['not JSON', '{"v":1,', /trust file is not valid JSON/],
    ['a JSON array', '[]', /expected a JSON object/],
    ['an unknown top-level field', trustText([entry()], { comment: 'hi' }), /unknown field "comment"/],
    ['an unknown field in a key', trustText([entry({ expires: 5 })]), /keys\[0\]: unknown field "expires"/],
    ['a missing field in a key', trustText([{ ...entry(), revoked_at_seq: undefined }]), /keys\[0\]: missing field "revoked_at_seq"/],
    ['a duplicate top-level key', `{"v":1,"keys":[],"keys":${JSON.stringify([entry()])}}`, /duplicate key "keys"/],
    ['a duplicate key inside an entry', `{"v":1,"keys":[{"name":"h","alg":"ed25519","key":"${OTHER_PUBLIC_KEY}","key":"${FIXED_PUBLIC_KEY}","agents":["*"],"valid_from_seq":0,"revoked_at_seq":null}]}`, /duplicate key "key"/],
    ['v 2', trustText([entry()], { v: 2 }), /"v" must be 1/],
    ['no keys', trustText([]), /"keys" must be a non-empty array/],
    ['a bad name', trustText([entry({ name: 'the harness' })]), /"name" must be 1-64 chars/],
    ['alg EdDSA', trustText([entry({ alg: 'EdDSA' })]), /"alg" must be "ed25519"/],
    ['the all-zero key (small order)', trustText([entry({ key: toBase64url(new Uint8Array(32)) })]), /cannot be pinned: a point of small order/],
    ['01 + 31 zero bytes (the identity, small order)', trustText([entry({ key: toBase64url(identity) })]), /cannot be pinned: a point of small order/],
    ['an order-8 point', trustText([entry({ key: toBase64url(SMALL_ORDER_POINTS[1].toBytes()) })]), /cannot be pinned: a point of small order/],
    ['a non-canonical y (y + p)', trustText([entry({ key: toBase64url(le32(P + 2n)) })]), /cannot be pinned: not a canonical encoding/],
    ['a padded key', trustText([entry({ key: FIXED_PUBLIC_KEY + '=' })]), /"key" must be base64url \(no padding\) of 32 bytes/],
    ['a key in base64 with "+" or "/"', trustText([entry({ key: Buffer.from(fixedKeyBytes).toString('base64').replace(/=+$/, '').replace(/^./, '+') })]), /"key" must be base64url/],
    ['a 31-byte key', trustText([entry({ key: toBase64url(fixedKeyBytes.subarray(0, 31)) })]), /"key" must be base64url \(no padding\) of 32 bytes/],
    ['a key with non-zero trailing bits', trustText([entry({ key: FIXED_PUBLIC_KEY.slice(0, -1) + 'h' })]), /"key" must be base64url/],
    ['a key pinned twice', trustText([entry(), entry({ name: 'again', valid_from_seq: 10 })]), /keys\[1\]: key .* is pinned twice/],
    ['agents empty', trustText([entry({ agents: [] })]), /"agents" must be a non-empty array/],
    ['agents not an array', trustText([entry({ agents: '*' })]), /"agents" must be a non-empty array/],
    ['an agent with a space', trustText([entry({ agents: ['agent a'] })]), /"agents" must be a non-empty array of agent names or "\*"/],
    ['an agent that is a number', trustText([entry({ agents: [7] })]), /"agents" must be/],
    ['valid_from_seq -1', trustText([entry({ valid_from_seq: -1 })]), /"valid_from_seq" must be an integer >= 0/],
    ['valid_from_seq 1.5', trustText([entry({ valid_from_seq: 1.5 })]), /"valid_from_seq" must be an integer >= 0/],
    ['valid_from_seq "0"', trustText([entry({ valid_from_seq: '0' })]), /"valid_from_seq" must be an integer >= 0/],
    ['revoked_at_seq -1', trustText([entry({ revoked_at_seq: -1 })]), /"revoked_at_seq" must be null or an integer >= 0/],
    ['revoked_at_seq false', trustText([entry({ revoked_at_seq: false })]), /"revoked_at_seq" must be null or an integer >= 0/],
    ['revoked before it is valid', trustText([entry({ valid_from_seq: 10, revoked_at_seq: 5 })]), /"revoked_at_seq" \(5\) is before "valid_from_seq" \(10\)/],
  ];

  for (const [label, text, reason] of table) {
    it(`refuses ${label} with INPUT_TRUST and the reason`, () => {
      const err = refusal(() => parseTrust(text));
      // Text that is not JSON, or JSON with a duplicate key, is refused by the strict parser.
      expect(err.code, label).toBe(/not valid JSON|duplicate key/.test(err.message) ? 'INPUT_JSON' : 'INPUT_TRUST');
      expect(err.code === 'INPUT_JSON', label).toBe(/not JSON|duplicate/.test(label));
      expect(err.message, label).toMatch(reason);
      expect(err.message.startsWith('trust file'), err.message).toBe(true);
      expect(err.exitCode).toBe(2);
    });
  }

  it('names the file it read in the reason', () => {
    expect(refusal(() => parseTrust(trustText([entry({ agents: [] })]), 'keys/trust.json')).message).toMatch(/^keys\/trust\.json: keys\[0\]: /);
  });

  // Policy (src/keys/trust.ts): the deep checks are doctor's, not the trust parser's; both verifiers
  // refuse every signature such a key could be used for (test/sign.test.ts).
  const deep: [string, Uint8Array, RegExp][] = [
    ['a valid key plus a torsion point', withTorsion(fixedKeyBytes, 1), /not in the prime-order subgroup/],
    ['a valid key plus the order-2 point', withTorsion(fixedKeyBytes, 4), /not in the prime-order subgroup/],
    ['a y that is not on the curve', le32(2n), /not a canonical encoding of a curve point/],
  ];
  for (const [label, key, reason] of deep) {
    it(`pins ${label} at parse time, and publicKeyProblem (ledger doctor) names it`, () => {
      expect(parseTrust(trustText([entry({ key: toBase64url(key) })])).keys).toHaveLength(1);
      expect(publicKeyProblem(key)).toMatch(reason);
    });
  }

  it('the small-order and torsion keys used above are really what the rows say', () => {
    expect(ed.Point.fromBytes(identity).is0()).toBe(true);
    const mixed = ed.Point.fromBytes(withTorsion(fixedKeyBytes, 1));
    expect(mixed.isSmallOrder()).toBe(false);
    expect(mixed.isTorsionFree()).toBe(false);
    expect(ed.Point.fromBytes(fixedKeyBytes).isTorsionFree()).toBe(true);
  });
});

describe('pinProblem', () => {
  const trust: Trust = {
    v: 1,
    keys: [
      { ...trustEntry('harness', FIXED_PUBLIC_KEY, 2), revoked_at_seq: 10 },
      { name: 'agent-b', alg: 'ed25519', key: OTHER_PUBLIC_KEY, agents: ['agent-b'], valid_from_seq: 0, revoked_at_seq: null },
    ],
  };

  const rows: [string, string, number, string | null, RegExp | null][] = [
    ['inside the window, any agent under "*"', FIXED_PUBLIC_KEY, 2, 'anyone', null],
    ['the last seq before revocation', FIXED_PUBLIC_KEY, 9, 'agent-a', null],
    ['before valid_from_seq', FIXED_PUBLIC_KEY, 1, 'agent-a', /not valid before seq 2/],
    ['at revoked_at_seq', FIXED_PUBLIC_KEY, 10, 'agent-a', /revoked from seq 10/],
    ['after revoked_at_seq', FIXED_PUBLIC_KEY, 11, 'agent-a', /revoked from seq 10/],
    ['HEAD (agent null) inside the window', FIXED_PUBLIC_KEY, 5, null, null],
    ['HEAD (agent null) after revocation', FIXED_PUBLIC_KEY, 10, null, /revoked from seq 10/],
    ['its own agent', OTHER_PUBLIC_KEY, 0, 'agent-b', null],
    ['another agent', OTHER_PUBLIC_KEY, 0, 'agent-a', /may not sign for agent "agent-a" \(allowed: agent-b\)/],
    ['agent names are not patterns', OTHER_PUBLIC_KEY, 0, 'agent-b2', /may not sign for agent "agent-b2"/],
    ['HEAD ignores the agents list', OTHER_PUBLIC_KEY, 1_000_000, null, null],
    ['a key that is not pinned', toBase64url(new Uint8Array(32).fill(9)), 3, 'agent-a', /is not pinned in the trust file/],
  ];
  for (const [label, key, seq, agent, problem] of rows) {
    it(`${label}: ${problem ? 'refused' : 'passes'}`, () => {
      const got = pinProblem(trust, key, seq, agent);
      if (problem === null) expect(got, label).toBeNull();
      else expect(got, label).toMatch(problem);
    });
  }
});

describe('parseSecretKeyFile', () => {
  const seed = toBase64url(Buffer.from(FIXED_SEED_HEX, 'hex'));
  const file = (over: Record<string, unknown> = {}) => JSON.stringify({ v: 1, alg: 'ed25519', name: 'harness', secret_key: seed, ...over });

  it('returns the name and the 32-byte seed', () => {
    const { name, seed: bytes } = parseSecretKeyFile(file());
    expect(name).toBe('harness');
    expect(Buffer.from(bytes).toString('hex')).toBe(FIXED_SEED_HEX);
  });

  const table: [string, string, RegExp][] = [
    ['an unknown field', file({ public_key: FIXED_PUBLIC_KEY }), /: an unknown field \(expected only v, alg, name, secret_key\)/],
    ['a missing secret_key', JSON.stringify({ v: 1, alg: 'ed25519', name: 'h' }), /missing field "secret_key"/],
    ['a duplicate key', file().replace('"v":1', '"v":1,"v":1'), /has a duplicate key \(its text is not shown/],
    ['v 2', file({ v: 2 }), /"v" must be 1/],
    ['alg x25519', file({ alg: 'x25519' }), /"alg" must be "ed25519"/],
    ['a bad name', file({ name: '' }), /"name" must be 1-64 chars/],
    ['a padded seed', file({ secret_key: seed + '=' }), /"secret_key" must be base64url \(no padding\) of 32 bytes/],
    ['a 64-byte expanded key', file({ secret_key: toBase64url(new Uint8Array(64)) }), /"secret_key" must be base64url \(no padding\) of 32 bytes/],
    ['a hex seed', file({ secret_key: FIXED_SEED_HEX }), /"secret_key" must be base64url/],
  ];
  for (const [label, text, reason] of table) {
    it(`refuses ${label} with the reason`, () => {
      const err = refusal(() => parseSecretKeyFile(text, 'keys/harness.key'));
      expect(['INPUT_KEY', 'INPUT_JSON'], label).toContain(err.code);
      expect(err.message, label).toMatch(reason);
      expect(err.message).toMatch(/^keys\/harness\.key/);
    });
  }
});
