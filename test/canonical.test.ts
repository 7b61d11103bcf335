// src/canonical.ts: the bytes of records and HEAD, ids, strict base64url and strict JSON.
// The golden ids were cross-checked once with an independent implementation (Python json with
// sorted keys + hashlib, and the signatures with pyca/cryptography); they must never change.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  canonicalAroundSig, canonicalJson, canonicalLine, ed25519SigJson, jcsByStringify, digestOf, findDuplicateKey, fromBase64url, headDigest, idFromLine, isCanonicalText, parseJsonStrict, recordId, sha256Hex, toBase64url, withoutSig,
} from '../src/canonical.js';
import { verifyReference } from '../src/ed25519-reference.js';
import { LedgerError } from '../src/errors.js';
import { signingMessage, verifySig } from '../src/sign.js';
import { FIXED_PUBLIC_KEY } from './helpers/fixed-keys.js';
import { buildLedger } from './helpers/gen-ledger.js';
import { goldenGenesis, goldenHandoff, goldenHead } from './helpers/golden-records.js';
import { runs } from './helpers/runs.js';

// `npm run soak` multiplies the runs; give those tests room beyond the 60 s default.
const SOAK_TIMEOUT = process.env.SOAK === '1' ? 60 * 60_000 : undefined;

const GENESIS_LINE =
  '{"agent":"harness","kind":"genesis","name":"golden","nonce":"AAECAwQFBgcICQoLDA0ODw","prev_tail_hash":null,"seq":0,' +
  '"sig":{"alg":"ed25519","key":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","value":"k7pH79t8wCYkfd1-XQTWA-PMPP43hUNA0Wz827kUbSIS6u2POV1VENG9hEy11osog8ant_lu5lwJlOKlLIlGCg"},' +
  '"ts":"2026-11-29T17:00:00.000Z","v":1}\n';
const GENESIS_ID = 'sha256:2ff2b3b7a367f9f041c3a3c5677c6f5a4151214d90b3b5594a3c68bb38b07949';

const HANDOFF_LINE =
  '{"agent":"agent-a","depends_on":[{"logical_operation_id":"backup_db","outcome":"success"}],' +
  '"evidence":{"schema":{"digest":"sha256:87f3f19e917c318af81ab82207b05e02d058add6bb7cde86989006b6bd2941d0","source":"file:db/schema.sql"},' +
  '"test_log":{"digest":"sha256:e6d47cc01ac7d20e7ba7acd6d1ad113573c1991f02c5af5f0f64a0572e0607f1","source":"cmd:npm test"}},' +
  '"execution_id":"execution_002",' +
  '"invariants":{"no_data_loss":{"detail":"not checked: no prod snapshot","ok":false},"tests_pass":{"detail":"42 passed, 0 failed","ok":true}},' +
  '"kind":"handoff","logical_operation_id":"migrate_schema_17","note":"schema migrated – café ☕","outcome":"success",' +
  '"prev_tail_hash":"sha256:2ff2b3b7a367f9f041c3a3c5677c6f5a4151214d90b3b5594a3c68bb38b07949","seq":1,' +
  '"sig":{"alg":"ed25519","key":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","value":"qOiRkTih1GEiMtrMxeP6CLu24SrHfE21IHhQaEqpShVy4SpbdyUjcgWHBGFFUxb4xtnbTiS5Ag6zFom2ytyPAw"},' +
  '"ts":"2026-11-29T17:05:00.000Z","v":1}\n';
const HANDOFF_ID = 'sha256:cb5352611bb81cdeeeaaa6e70e7d3d1c6a00bea39b415e88436625ed61608c2a';

const HEAD_LINE =
  '{"genesis":"sha256:2ff2b3b7a367f9f041c3a3c5677c6f5a4151214d90b3b5594a3c68bb38b07949","seq":1,' +
  '"sig":{"alg":"ed25519","key":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","value":"hd1I12QRgxJFJksGi6uqt_OD_fB8w5V6ckR3_A17q9xbn57Wl_6rSOujJK5cv_ZaEXYWTI7C5MdvvT75abCxDA"},' +
  '"size":1276,"tail":"sha256:cb5352611bb81cdeeeaaa6e70e7d3d1c6a00bea39b415e88436625ed61608c2a","ts":"2026-11-29T17:05:00.001Z","v":1}\n';
const HEAD_DIGEST = 'sha256:8d810397c3611831ee56ac00b6bdca52cb660df988b77b1ca694357d8a9a1b0e';

describe('golden records built from the fixed key', () => {
  const cases = [
    { name: 'genesis', value: goldenGenesis(), line: GENESIS_LINE, id: GENESIS_ID, bytes: 327, domain: 'record' as const },
    { name: 'handoff with evidence, invariants and depends_on', value: goldenHandoff(), line: HANDOFF_LINE, id: HANDOFF_ID, bytes: 949, domain: 'record' as const },
    { name: 'HEAD', value: goldenHead(), line: HEAD_LINE, id: HEAD_DIGEST, bytes: 398, domain: 'head' as const },
  ];

  for (const c of cases) {
    describe(c.name, () => {
      it('has exactly the pinned canonical line and UTF-8 byte length', () => {
        expect(canonicalLine(c.value)).toBe(c.line);
        expect(Buffer.byteLength(c.line, 'utf8')).toBe(c.bytes);
      });

      it('has the pinned id (SHA-256 of the line without sig and without the newline)', () => {
        const digest = c.domain === 'head' ? headDigest(c.value) : recordId(c.value);
        expect(digest).toBe(c.id);
        const { sig: _sig, ...rest } = JSON.parse(c.line) as Record<string, unknown>;
        expect(digestOf(Buffer.from(canonicalJson(rest), 'utf8'))).toBe(c.id);
      });

      it('re-encodes to the same bytes after JSON.parse (SPEC 4: a line must be its own JCS)', () => {
        expect(canonicalLine(JSON.parse(c.line))).toBe(c.line);
      });

      it('carries a signature by the fixed key over its domain message, valid for both verifiers', () => {
        expect(c.value.sig.key).toBe(FIXED_PUBLIC_KEY);
        expect(verifySig(c.domain, c.id, c.value.sig)).toBe(true);
        expect(
          verifyReference(Buffer.from(c.value.sig.value, 'base64url'), signingMessage(c.domain, c.id), Buffer.from(c.value.sig.key, 'base64url')),
        ).toBe(true);
        expect(verifySig(c.domain === 'head' ? 'record' : 'head', c.id, c.value.sig)).toBe(false);
      });
    });
  }

  it('the HEAD size covers exactly the two record lines', () => {
    expect(goldenHead().size).toBe(Buffer.byteLength(GENESIS_LINE + HANDOFF_LINE, 'utf8'));
  });

  it('the note is encoded as raw UTF-8, not as \\u escapes', () => {
    expect(HANDOFF_LINE).toContain('"note":"schema migrated – café ☕"');
    expect(Buffer.from(HANDOFF_LINE, 'utf8').includes(Buffer.from('e28093', 'hex'))).toBe(true); // EN DASH
  });
});

describe('recordId and headDigest', () => {
  it('ignore sig, and only sig', () => {
    const r = goldenHandoff();
    expect(recordId({ ...r, sig: { alg: 'ed25519', key: 'x', value: 'y' } })).toBe(HANDOFF_ID);
    expect(recordId(withoutSig(r))).toBe(HANDOFF_ID);
    expect(recordId({ ...r, seq: 2 })).not.toBe(HANDOFF_ID);
    expect(withoutSig(r)).not.toHaveProperty('sig');
    expect(r).toHaveProperty('sig'); // withoutSig does not mutate
  });

  it('do not depend on member order', () => {
    const r = goldenGenesis();
    const reversed = Object.fromEntries(Object.entries(r).reverse());
    expect(recordId(reversed)).toBe(GENESIS_ID);
    expect(canonicalLine(reversed)).toBe(GENESIS_LINE);
  });
});

describe('canonicalJson refuses what it cannot encode exactly', () => {
  const hole = [1, , 3];
  const table: [string, unknown, RegExp][] = [
    ['an undefined member', { a: 1, b: undefined }, /\$\.b: undefined is not JSON/],
    ['undefined at the top', undefined, /\$: undefined is not JSON/],
    ['NaN', { n: NaN }, /\$\.n: expected a safe integer, got NaN/],
    ['Infinity', [Infinity], /\$\[0\]: expected a safe integer, got Infinity/],
    ['1.5', { x: { y: 1.5 } }, /\$\.x\.y: expected a safe integer, got 1\.5/],
    ['2**53', { n: 2 ** 53 }, /\$\.n: expected a safe integer, got 9007199254740992/],
    ['-(2**53)', { n: -(2 ** 53) }, /expected a safe integer/],
    ['1e21', { n: 1e21 }, /expected a safe integer/],
    ['a BigInt', { n: 10n }, /\$\.n: bigint is not JSON/],
    ['a Date', { t: new Date(0) }, /\$\.t: expected a plain object, got Date/],
    ['a Map', { m: new Map([['a', 1]]) }, /\$\.m: expected a plain object, got Map/],
    ['a Set', new Set([1]), /\$: expected a plain object, got Set/],
    ['a Uint8Array', { b: new Uint8Array(2) }, /expected a plain object, got Uint8Array/],
    ['a boxed string', { s: new String('x') }, /expected a plain object, got String/],
    ['a class instance', { c: new (class Thing { a = 1 })() }, /expected a plain object, got Thing/],
    ['an object with toJSON', { o: { toJSON: () => 1 } }, /\$\.o: objects with toJSON are not encoded/],
    ['an array hole', { a: hole }, /\$\.a\[1\]: holes are not JSON/],
    ['a function', { f: () => 1 }, /\$\.f: function is not JSON/],
    ['a symbol', { s: Symbol('s') }, /\$\.s: symbol is not JSON/],
    ['a lone high surrogate', { s: 'a\ud800b' }, /\$\.s: string has a lone surrogate/],
    ['a lone low surrogate at the end', ['ok', '\udc00'], /\$\[1\]: string has a lone surrogate/],
    ['a lone surrogate in a key', { ['k\ud800']: 1 }, /\$: key has a lone surrogate/],
  ];

  for (const [label, value, message] of table) {
    it(`refuses ${label} with INPUT_CANONICAL naming the path`, () => {
      let err: unknown;
      try {
        canonicalJson(value);
      } catch (e) {
        err = e;
      }
      expect(err, label).toBeInstanceOf(LedgerError);
      expect((err as LedgerError).code, label).toBe('INPUT_CANONICAL');
      expect((err as LedgerError).message, label).toMatch(message);
    });
  }

  it('accepts the edges it must: safe integer bounds, -0 as 0, paired surrogates, null prototype', () => {
    expect(canonicalJson([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -0])).toBe('[9007199254740991,-9007199254740991,0]');
    expect(canonicalJson({ s: '\ud83d\ude02' })).toBe('{"s":"😂"}');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.b = 1;
    bare.a = [true, null, 'x'];
    expect(canonicalJson(bare)).toBe('{"a":[true,null,"x"],"b":1}');
  });

  it('sorts keys by UTF-16 code units and escapes only what JCS escapes', () => {
    expect(canonicalJson({ b: 1, a: 2, B: 3, é: 4, '€': 5, '😂': 6, 'ｚ': 7 })).toBe('{"B":3,"a":2,"b":1,"é":4,"€":5,"😂":6,"ｚ":7}');
    expect(canonicalJson('\u0000\u001f"\\/\u007f')).toBe('"\\u0000\\u001f\\"\\\\/\u007f"');
  });

  it('is a fixed point: canonicalJson(JSON.parse(canonicalJson(v))) === canonicalJson(v)', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null), fc.boolean(), fc.maxSafeInteger(), fc.string({ unit: 'grapheme' }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = canonicalJson(v);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: runs(300, 30_000) },
    );
  });
});

// Values for the canonical text's two paths: strings from code units, so lone and paired
// surrogates, controls, quotes and backslashes all occur often; keys from a small set (those that
// decide the path: digits first, which JS orders numerically, "__proto__", names around "sig")
// plus the same strings, so objects share and sort keys; and what has no JSON form.
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.constantFrom(0x00, 0x1f, 0x22, 0x5c, 0x7f, 0x2028, 0xfeff),
  fc.integer({ min: 0xd7fe, max: 0xe001 }),
  fc.integer({ min: 0, max: 0xffff }),
);
const awkwardString = fc.array(unit, { maxLength: 8 }).map((u) => String.fromCharCode(...u));
const awkwardKey = fc.oneof(fc.constantFrom('a', 'b', 'B', 'ok', 'detail', 'sig', 'si', 'sih', 'ts', 'v', '10', '9', '1x', '-1', '4294967295', '__proto__', 'toJSON', ''), awkwardString);
class Thing {
  a = 1;
}
const odd = fc.constantFrom<unknown>(
  undefined, NaN, Infinity, 1.5, 2 ** 53, -0, 10n, Symbol('s'), () => 1, new Date(0), new Map(), new Thing(),
  { toJSON: () => 1 }, Object.assign([1], { toJSON: () => 'x' }), [1, , 3], Object.create(null),
);
const awkwardValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.maxSafeInteger(), awkwardString, odd,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(awkwardKey, tie('node'), { maxKeys: 5 }),
    fc.dictionary(awkwardKey, tie('node'), { maxKeys: 3 }).map((o) => Object.assign(Object.create(null), o)),
  ),
})).node;

describe('canonicalAroundSig agrees with canonicalJson on any value', () => {
  const outcome = (f: () => string) => {
    try {
      return { text: f() };
    } catch (e) {
      return { error: `${(e as LedgerError).code} ${(e as Error).message}` };
    }
  };

  it('gives the same unsigned text, or the same refusal, as canonicalJson', () => {
    fc.assert(
      fc.property(fc.dictionary(awkwardKey, awkwardValue, { maxKeys: 6 }), (unsigned) => {
        const ref = outcome(() => canonicalJson(unsigned));
        const got = outcome(() => canonicalAroundSig(unsigned).unsignedText);
        if ('error' in ref) expect(got).toEqual(ref);
        else if (Object.hasOwn(unsigned, 'sig')) expect(got.error).toMatch(/no sig/);
        else expect(got).toEqual(ref);
      }),
      { numRuns: runs(1000, 50_000) },
    );
  });
});

describe('the fast path (issue 26): JSON.stringify of a copy sorted in JCS order', () => {
  const canonicalizeOf = (v: unknown) => {
    try {
      return canonicalize(v) ?? null;
    } catch {
      return null;
    }
  };

  it('gives exactly canonicalize\'s text whenever it applies, and applies only where canonicalJson accepts the value', () => {
    fc.assert(
      fc.property(awkwardValue, (v) => {
        const fast = jcsByStringify(v);
        if (fast === null) return;
        expect(fast).toBe(canonicalizeOf(v));
        expect(canonicalJson(v)).toBe(fast);
      }),
      { numRuns: runs(2000, 100_000) },
    );
  });

  it('gives canonicalize\'s text for records in any member order, and takes the fast path for them', () => {
    const member = fc.oneof(fc.constant(null), fc.boolean(), fc.maxSafeInteger(), fc.string({ unit: 'grapheme', maxLength: 12 }));
    const name = fc.stringMatching(/^[A-Za-z._-][A-Za-z0-9._-]{0,10}$/);
    const record = fc.record({
      v: fc.constant(1), seq: fc.maxSafeNat(), ts: fc.constant('2026-12-06T00:00:00.000Z'), prev_tail_hash: fc.constant(`sha256:${'a'.repeat(64)}`),
      kind: fc.constant('handoff'), agent: name, logical_operation_id: name, execution_id: name, outcome: fc.constantFrom('success', 'failure'),
      evidence: fc.dictionary(name, fc.record({ source: fc.string({ unit: 'grapheme', maxLength: 20 }), digest: fc.constant(`sha256:${'b'.repeat(64)}`) }), { maxKeys: 3 }),
      invariants: fc.dictionary(name, fc.record({ ok: fc.boolean(), detail: fc.string({ unit: 'grapheme', maxLength: 20 }) }), { maxKeys: 3 }),
      depends_on: fc.array(fc.dictionary(name, member, { maxKeys: 3 }), { maxLength: 3 }),
    });
    // Built in a shuffled member order, as payloads arrive.
    const shuffled = fc.tuple(record, fc.array(fc.nat(), { minLength: 12, maxLength: 12 })).map(([r, order]) => {
      const keys = Object.keys(r).map((k, i) => [order[i], k] as const).sort((x, y) => x[0] - y[0]).map(([, k]) => k);
      return Object.fromEntries(keys.map((k) => [k, (r as Record<string, unknown>)[k]]));
    });
    fc.assert(
      fc.property(shuffled, (r) => {
        const fast = jcsByStringify(r);
        expect(fast).not.toBeNull();
        expect(fast).toBe(canonicalize(r));
        const { sig: _none, ...unsigned } = r as Record<string, unknown>;
        expect(canonicalAroundSig(unsigned).unsignedText).toBe(canonicalize(unsigned));
      }),
      { numRuns: runs(300, 30_000) },
    );
  });

  it('leaves to canonicalize what JSON.stringify orders or encodes otherwise', () => {
    for (const v of [{ 10: 1, 9: 2 }, JSON.parse('{"__proto__":1}'), { a: '\ud800' }, { '\udc00': 1 }, { a: 1.5 }, { a: { toJSON: () => 1 } }, [1, , 2], { a: undefined }, new Date(0)]) {
      expect(jcsByStringify(v), String(JSON.stringify(v))).toBeNull();
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jcsByStringify(cyclic)).toBeNull();
  });
});

describe('idFromLine, the id of a record from its stored line', () => {
  // The definition, from `canonicalize` directly: SPEC 4's id of the value the line holds.
  const byDefinition = (r: Record<string, unknown>) => {
    const rest = Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'sig'));
    return 'sha256:' + createHash('sha256').update(canonicalize(rest) as string, 'utf8').digest('hex');
  };
  // Well-formed Unicode (lone surrogates have no canonical form), with the characters JSON escapes
  // and fragments of the sig member itself, so a string can hold what the cut looks for.
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.constantFrom('"', '\\', '\n', '\u2028', ',"sig":', '"sig":{"alg":"ed25519"', 'é', '☕', '\u{1F600}'),
  ).filter((x) => !/[\uD800-\uDFFF]/u.test(x));
  // Keys that sort before and after "sig", and keys whose encoding ends in `"sig"` (`x"sig`).
  const key = fc.oneof(fc.constantFrom('a', 'agent', 'kind', 's', 'sif', 'sig', 'sig0', 'sih', 'si', 'ts', 'v', 'z', '"sig', 'x"sig', '10', '9', '__proto__', ''), text);
  const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null), fc.boolean(), fc.maxSafeInteger(), text,
      fc.array(tie('node'), { maxLength: 3 }),
      fc.dictionary(key, tie('node'), { maxKeys: 4 }),
    ),
  })).node;
  const b64 = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((u) => toBase64url(u));
  const sig = fc.oneof(
    fc.record({ alg: fc.constant('ed25519'), key: b64(32), value: b64(64) }),
    fc.record({ alg: text, key: text, value: text }),
    json,
  );
  const envelope = fc.record({
    v: fc.constant(1), seq: fc.nat(), prev_tail_hash: fc.oneof(fc.constant(null), fc.uint8Array({ minLength: 32, maxLength: 32 }).map((u) => 'sha256:' + Buffer.from(u).toString('hex'))),
    ts: fc.constant('2026-11-29T17:00:00.000Z'), kind: fc.constantFrom('handoff', 'intent', 'x'), agent: fc.constantFrom('agent-a', 'b'),
  });
  // Where a copy of the sig member's text is planted besides the real one: nowhere, in a nested
  // object, or under a key whose encoding ends in "sig".
  const plant = fc.constantFrom('none', 'nested', 'quoted-key', 'x-quoted-key');

  it('equals SHA-256 of JCS(record without sig) for any record-shaped value, from its text or bytes', () => {
    fc.assert(
      fc.property(envelope, fc.dictionary(key, json, { maxKeys: 5 }), fc.option(sig, { nil: undefined }), plant, (env, payload, s, where) => {
        const r: Record<string, unknown> = { ...payload, ...env };
        if (s !== undefined) r.sig = s;
        if (where === 'nested') r.evidence = { copy: { sig: s ?? null } };
        if (where === 'quoted-key') r['"sig'] = s ?? null;
        if (where === 'x-quoted-key') r['x"sig'] = s ?? null;
        const line = canonicalLine(r);
        const want = byDefinition(r);
        const parsed = JSON.parse(line) as object;
        expect(idFromLine(line)).toBe(want);
        expect(idFromLine(line, parsed)).toBe(want);
        expect(idFromLine(line.slice(0, -1), parsed)).toBe(want);
        expect(idFromLine(Buffer.from(line), parsed)).toBe(want);
        expect(idFromLine(Buffer.from(line.slice(0, -1)), parsed)).toBe(want);
      }),
      { numRuns: runs(1000, 50_000) },
    );
  });

  it('gives the id of every kind of record a writer makes, by the fast cut (the member occurs once)', () => {
    const led = buildLedger({ count: 40, kinds: ['handoff', 'checkpoint', 'start', 'finish', 'intent', 'revoke', 'consume'] });
    led.lines.forEach((line, i) => {
      expect(idFromLine(line), `seq ${i}`).toBe(led.ids[i]);
      const member = `"sig":${canonicalJson((JSON.parse(line) as { sig: object }).sig)}`;
      expect(line.split(member).length, `seq ${i}`).toBe(2);
    });
  });

  it('gives the pinned ids of the golden lines, and HEAD\'s pinned digest', () => {
    expect(idFromLine(GENESIS_LINE)).toBe(GENESIS_ID);
    expect(idFromLine(HANDOFF_LINE)).toBe(HANDOFF_ID);
    expect(idFromLine(Buffer.from(HEAD_LINE))).toBe(HEAD_DIGEST);
  });

  describe('when the line is damaged', () => {
    it('refuses a line that is not JSON, or not a JSON object, with INPUT_JSON', () => {
      for (const line of [GENESIS_LINE.slice(0, 100), '', '{"a":1', '[1,2]\n', '"sig"', 'null', '7']) {
        expect(() => idFromLine(line), JSON.stringify(line)).toThrow(expect.objectContaining({ code: 'INPUT_JSON' }));
      }
    });

    it('still gives the id when a payload holds the sig member\'s text (a nested copy, a key that ends in "sig", a string)', () => {
      const r = goldenHandoff() as unknown as Record<string, unknown>;
      const sigText = canonicalJson(r.sig);
      for (const planted of [
        { evidence: { sig: r.sig } },
        { '"sig': r.sig },
        { 'x"sig': r.sig },
        { note: `,"sig":${sigText}` },
        { note: '"sig":{"alg":"ed25519"}', evidence: { sig: { digest: 'sha256:' + 'a'.repeat(64), source: ',"sig":' } } },
      ]) {
        const line = canonicalLine({ ...r, ...planted });
        expect(idFromLine(line), Object.keys(planted).join()).toBe(recordId({ ...r, ...planted }));
      }
    });

    it('gives the same id for a line whose signature was changed: the sig is not part of the id', () => {
      const bent = HANDOFF_LINE.replace('"value":"qOiR', '"value":"AAAA');
      expect(bent).not.toBe(HANDOFF_LINE);
      expect(idFromLine(bent)).toBe(HANDOFF_ID);
    });

    it('hashes the whole line of a value without sig, and one whose sig is not an object', () => {
      expect(idFromLine('{"a":1}\n')).toBe(digestOf('{"a":1}'));
      expect(idFromLine('{"a":1,"sig":5}')).toBe(digestOf('{"a":1}'));
      expect(idFromLine('{"sig":null}')).toBe(digestOf('{}'));
    });

    it('is not defined on a line that is not canonical: that is what the canonical check is for', () => {
      // Each of these holds the golden handoff, re-encoded: whitespace, members out of order, an
      // escape JCS does not write, a number JCS writes otherwise. Every reader checks first.
      const value = JSON.parse(HANDOFF_LINE) as Record<string, unknown>;
      for (const text of [
        JSON.stringify(value, null, 1),
        JSON.stringify(Object.fromEntries(Object.entries(value).reverse())),
        HANDOFF_LINE.slice(0, -1).replace('"agent-a"', '"agent\\u002da"'),
        HANDOFF_LINE.slice(0, -1).replace('"seq":1', '"seq":1.0'),
      ]) {
        expect(JSON.parse(text)).toEqual(value);
        expect(isCanonicalText(JSON.parse(text), text), text.slice(0, 40)).toBe(false);
      }
      expect(isCanonicalText(value, HANDOFF_LINE.slice(0, -1))).toBe(true);
    });
  });
});

// JSON values of the shapes records have, with keys that JS objects reorder (integer-like) and
// strings that need escapes.
const keyArb = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('0', '1', '10', '9', 'sig', '__proto__', 'é', '\u2028'));
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
})).value;

/** Writes the first a-z inside a JSON string as a \u00XX escape (same content, other bytes). */
function escapeFirstLetterInString(text: string): string {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString && c === '\\') i++;
    else if (c === '"') inString = !inString;
    else if (inString && c >= 'a' && c <= 'z') return text.slice(0, i) + '\\u00' + c.charCodeAt(0).toString(16) + text.slice(i + 1);
  }
  return text;
}

/** The definition: is `text` exactly canonicalJson(JSON.parse(text))? */
function canonicalByDefinition(text: string): boolean {
  try {
    return canonicalJson(JSON.parse(text)) === text;
  } catch {
    return false;
  }
}

describe('isCanonicalText agrees with canonicalJson', () => {
  it('on canonical texts of random values (always true)', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        let text: string;
        try {
          text = canonicalJson(v);
        } catch {
          return; // a lone surrogate: no canonical form to test
        }
        expect(isCanonicalText(JSON.parse(text), text)).toBe(true);
      }),
      { numRuns: runs(500, 50_000) },
    );
  }, SOAK_TIMEOUT);

  it('on other encodings of random values (JSON.stringify, spaces, escapes)', () => {
    fc.assert(
      fc.property(jsonArb, fc.constantFrom(0, 1, 2), (v, how) => {
        let text = JSON.stringify(v);
        if (how === 1) text = JSON.stringify(v, null, 1);
        if (how === 2) text = escapeFirstLetterInString(text);
        expect(isCanonicalText(JSON.parse(text), text)).toBe(canonicalByDefinition(text));
      }),
      { numRuns: runs(500, 50_000) },
    );
  }, SOAK_TIMEOUT);

  it('on the hard cases named one by one', () => {
    for (const text of ['{"10":1,"9":2}', '{"9":2,"10":1}', '{"a":1.0}', '{"a":1e2}', '{"a":-0}', '{"a":9007199254740993}', '{"a":"\\ud800"}', '{"\\udc00":1}', '{"a":"\\u00e9"}', '{"a":"é"}', '{"b":1,"a":2}', '{"a":1,"a":1}', '"\\/"', '[1,2]', '{"a":"\\u2028"}', '{"a":"\u2028"}']) {
      expect(isCanonicalText(JSON.parse(text), text), text).toBe(canonicalByDefinition(text));
    }
  });
});

describe('ed25519SigJson (a batch\'s sig members)', () => {
  it('writes exactly canonicalJson({ alg, key, value }) for any key and signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.array(fc.uint8Array({ minLength: 64, maxLength: 64 }), { minLength: 1, maxLength: 4 }), (key, values) => {
        const k = toBase64url(key);
        const text = ed25519SigJson(k);
        for (const v of values) {
          const value = toBase64url(v);
          expect(text(value)).toBe(canonicalJson({ alg: 'ed25519', key: k, value }));
        }
      }),
      { numRuns: runs(500, 20_000) },
    );
  });

  it('hands any other value (wrong length, escapes, other alphabet) to canonicalJson', () => {
    const text = ed25519SigJson('k');
    for (const value of ['', 'A'.repeat(85), 'A'.repeat(87), 'A'.repeat(85) + '"', 'A'.repeat(85) + '+', 'A'.repeat(85) + '\u00e9']) {
      expect(text(value)).toBe(canonicalJson({ alg: 'ed25519', key: 'k', value }));
    }
  });
});

describe('fromBase64url is strict', () => {
  const key = new Uint8Array(32).map((_, i) => i * 7 + 3);
  const good = toBase64url(key); // 43 chars, the last one carries 2 unused bits

  it('round-trips real values of 16, 32 and 64 bytes', () => {
    for (const n of [16, 32, 64]) {
      const bytes = new Uint8Array(n).map((_, i) => 255 - i);
      expect(Buffer.from(fromBase64url(toBase64url(bytes), n)!).equals(Buffer.from(bytes)), `${n}`).toBe(true);
    }
    expect(good).toHaveLength(43);
  });

  const table: [string, unknown, number][] = [
    ['padding', good + '=', 32],
    ['wrong length (one char short)', good.slice(0, -1), 32],
    ['wrong length (one char long)', good + 'A', 32],
    ['a length that is not the one asked for', good, 31],
    ["'+' (base64, not base64url)", '+' + good.slice(1), 32],
    ["'/' (base64, not base64url)", '/' + good.slice(1), 32],
    ['whitespace', good.slice(0, 20) + ' ' + good.slice(21), 32],
    ['a newline at the end', good.slice(0, -1) + '\n', 32],
    ['a non-ASCII letter', 'é' + good.slice(1), 32],
    ['non-zero trailing bits', good.slice(0, -1) + String.fromCharCode(good.charCodeAt(42) + 1), 32],
    ['the empty string', '', 32],
    ['a number', 12345, 32],
    ['null', null, 32],
    ['a Uint8Array', key, 32],
  ];
  for (const [label, text, n] of table) {
    it(`refuses ${label}`, () => {
      expect(fromBase64url(text, n), label).toBeNull();
    });
  }

  it('decodes no two strings to the same bytes (every accepted text re-encodes to itself)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=';
    const text = fc.array(fc.constantFrom(...alphabet), { minLength: 42, maxLength: 44 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, (t) => {
        const bytes = fromBase64url(t, 32);
        if (bytes !== null) expect(toBase64url(bytes)).toBe(t);
      }),
      { numRuns: runs(500, 50_000) },
    );
  });
});

describe('findDuplicateKey and parseJsonStrict', () => {
  const dups: [string, string][] = [
    ['{"a":1,"a":2}', 'a'],
    ['{"a":{"b":[{"c":1,"d":{},"c":2}]}}', 'c'],
    ['[[[{"x":[]}]],{"y":1,"z":{"q":{"r":0,"r":0}}}]', 'r'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{ "k" : 1 ,\n\t"k"\r\n: 2 }', 'k'],
    ['{"":1,"":2}', ''],
    ['{"\\"":1,"\\"":2}', '"'],
    ['{"a":{"x":1},"b":2,"a":3}', 'a'],
  ];
  for (const [text, key] of dups) {
    it(`finds "${key}" repeated in ${JSON.stringify(text)}`, () => {
      expect(findDuplicateKey(text)).toBe(key);
      expect(() => parseJsonStrict(text, 'trust file')).toThrow(`trust file has a duplicate key "${key}"`);
    });
  }

  const clean = [
    '[{"a":1},{"a":2}]',
    '{"a":{"a":{"a":1}}}',
    '{"x":"{\\"a\\":1,\\"a\\":2}"}',
    '{"a":["a","a"],"b":"a"}',
    '{"a\\\\":1,"a":2}',
    '"a"',
    '[]',
  ];
  for (const text of clean) {
    it(`finds nothing in ${JSON.stringify(text)} and parses it as JSON.parse does`, () => {
      expect(findDuplicateKey(text)).toBeNull();
      expect(parseJsonStrict(text, 'x')).toEqual(JSON.parse(text));
    });
  }

  it('throws INPUT_JSON naming what was read for text that is not JSON', () => {
    for (const bad of ['', '{', '{"a":1,}', "{'a':1}", 'NaN', '{"a":1}{"b":2}']) {
      let err: unknown;
      try {
        parseJsonStrict(bad, 'keys/trust.json');
      } catch (e) {
        err = e;
      }
      expect((err as LedgerError).code, bad).toBe('INPUT_JSON');
      expect((err as LedgerError).message, bad).toMatch(/^keys\/trust\.json is not valid JSON: /);
    }
  });

  // A JSON tree whose objects are lists of entries, so keys can repeat; keys come from a small
  // alphabet (so repeats are common) and are written plainly or fully \u-escaped.
  type Tree = null | number | string | boolean | Tree[] | { entries: [string, boolean, Tree][] };
  const keyArb = fc.constantFrom('a', 'b', 'é', '"', '\\', '{', ':', '😂', '');
  const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(null, true, 0, -7, 'a', '{"a":1,"a":2}', ':'),
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.array(fc.tuple(keyArb, fc.boolean(), tie('tree')), { maxLength: 4 }).map((entries) => ({ entries })),
    ),
  })).tree;
  const escapeAll = (k: string) => '"' + k.split('').map((u) => '\\u' + u.charCodeAt(0).toString(16).padStart(4, '0')).join('') + '"';
  const render = (t: Tree, ws: string): string => {
    if (t === null || typeof t !== 'object') return JSON.stringify(t);
    if (Array.isArray(t)) return '[' + ws + t.map((x) => render(x, ws)).join(ws + ',' + ws) + ']';
    return '{' + ws + t.entries.map(([k, esc, v]) => (esc ? escapeAll(k) : JSON.stringify(k)) + ws + ':' + ws + render(v, ws)).join(',' + ws) + ws + '}';
  };
  const hasDup = (t: Tree): boolean => {
    if (t === null || typeof t !== 'object') return false;
    if (Array.isArray(t)) return t.some(hasDup);
    const keys = t.entries.map(([k]) => k);
    return new Set(keys).size !== keys.length || t.entries.some(([, , v]) => hasDup(v));
  };

  it('never accepts a text with a duplicate key, and agrees with JSON.parse otherwise', () => {
    let withDup = 0;
    fc.assert(
      fc.property(treeArb, fc.constantFrom('', ' ', '\n\t', ' \r\n '), (tree, ws) => {
        const text = render(tree, ws);
        if (hasDup(tree)) {
          withDup++;
          expect(findDuplicateKey(text), text).not.toBeNull();
          expect(() => parseJsonStrict(text, 'x'), text).toThrow(/duplicate key/);
        } else {
          expect(findDuplicateKey(text), text).toBeNull();
          expect(parseJsonStrict(text, 'x')).toEqual(JSON.parse(text));
        }
      }),
      { numRuns: runs(500, 50_000) },
    );
    expect(withDup).toBeGreaterThan(20); // the generator really makes duplicates
  });
});

describe('sha256Hex', () => {
  // It hashes a process's first few hundred bytes in JavaScript (@noble/hashes) and the rest with
  // node:crypto (canonical.ts, speed): both must be SHA-256, for strings and bytes alike.
  const reference = (input: string | Uint8Array) => createHash('sha256').update(input).digest('hex');

  it('is SHA-256 in JavaScript for a fresh process\'s first bytes (node:crypto not loaded), then through node:crypto', async () => {
    vi.resetModules();
    const fresh = await import('../src/canonical.js');
    const loaded = await import('../src/node-crypto.js');
    const small = ['', 'abc', 'é€😀', new Uint8Array([0, 1, 2, 255]), 'x'.repeat(55), 'y'.repeat(64)];
    for (const input of small) expect(fresh.sha256Hex(input)).toBe(reference(input));
    expect(loaded.nodeCryptoLoaded()).toBe(false); // the JavaScript hash answered those
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 })), (input) => {
      expect(fresh.sha256Hex(input)).toBe(reference(input));
    }));
    expect(loaded.nodeCryptoLoaded()).toBe(true); // past the budget: node:crypto
  });
});
