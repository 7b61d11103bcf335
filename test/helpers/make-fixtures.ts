// The audit fixtures, fixtures/ledgers/<layer>-<case>/, built from fixed labels (keys, nonces,
// times) so the bytes are reproducible: `npx tsc -p . && node dist/test/helpers/make-fixtures.js`
// rewrites them, and test/audit/fixtures.test.ts checks that the committed files are exactly what
// this script builds before it runs each one through the CLI.
//
// Each case holds records.jsonl, HEAD, trust.json, optionally floor.json, and expected.json:
// {exit, layer, seq, code, args?, warning?, floor_after?}. The test copies a case out so the
// ledger, the trust file and the floor sit in separate places, as a consumer keeps them.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalLine } from '../../src/canonical.js';
import type { Trust } from '../../src/keys/trust.js';
import {
  buildLedger, editLine, floorOf, headForLines, parseLine, resignHead, serializeLedger, signerFor, withSig,
  type BuiltLedger, type Json, type LedgerSpec,
} from './gen-ledger.js';

export interface FixtureExpectation {
  exit: number;
  layer: string | null;
  seq: number | null;
  code: string | null;
  /** Extra CLI arguments (the test adds --dir, --trust, --floor and --json). */
  args?: string[];
  /** A text that must appear in one of the warnings. */
  warning?: string;
  /** The floor file's JSON after the run (for --advance). */
  floor_after?: Json;
}

export interface FixtureCase {
  name: string;
  /** What the case shows, for a person reading the folder. */
  about: string;
  records: Buffer;
  head: Buffer;
  trust: Trust;
  floor?: Json;
  expected: FixtureExpectation;
}

/** Fixture time: long past, so no real clock makes these records "in the future". */
const START = '2026-01-01T00:00:00.000Z';
const base = (extra: Partial<LedgerSpec> = {}): LedgerSpec => ({ count: 10, start: START, nonce: 'fixtures', name: 'fixtures', ...extra });
const harness = signerFor('harness');

function files(led: BuiltLedger, lines = led.lines, headLine = led.headLine) {
  return { records: Buffer.from(lines.join('')), head: Buffer.from(headLine), trust: led.trust };
}
/** Lines changed, HEAD re-signed over them so it matches (the fault stays in the lines). */
function relinked(led: BuiltLedger, lines: string[]) {
  return files(led, lines, headForLines(lines, harness).line);
}
const fail = (layer: string, seq: number | null, code: string, args?: string[]): FixtureExpectation => ({
  exit: { schema: 10, linkage: 11, signature: 12, 'key-pin': 13, freshness: 14 }[layer]!,
  layer,
  seq,
  code,
  ...(args ? { args } : {}),
});
const pass = (extra: Partial<FixtureExpectation> = {}): FixtureExpectation => ({ exit: 0, layer: null, seq: null, code: null, ...extra });

export function fixtureCases(): FixtureCase[] {
  const led = buildLedger(base());
  const L = led.lines;
  const cases: FixtureCase[] = [];
  const add = (name: string, about: string, f: { records: Buffer; head: Buffer; trust: Trust }, expected: FixtureExpectation, floor?: Json) =>
    cases.push({ name, about, ...f, expected, ...(floor ? { floor } : {}) });

  // ---- passes
  add('pass-basic', 'ten records, one key', files(led), pass());
  {
    const rot = buildLedger(base({ keys: [{ name: 'harness' }, { name: 'harness-2026-06', fromSeq: 6 }] }));
    add('pass-key-rotation', 'key "harness" signs seq 0-5 and is revoked at 6; "harness-2026-06" signs from 6 on, HEAD included', files(rot), pass());
  }
  {
    const next = { v: 1, genesis: led.ids[0], seq: 9, id: led.ids[9], offset: led.offsets[9] };
    add('pass-floor-advanced', 'a floor at seq 5; --advance moves it to HEAD (seq 9)', files(led), pass({ args: ['--advance'], floor_after: next }), floorOf(led, 5));
  }
  {
    const f = files(led);
    add('pass-garbage-past-head', 'a torn append left bytes past HEAD\'s size: unpublished, a warning', { ...f, records: Buffer.concat([f.records, Buffer.from('{"v":1,"seq":10,"trunc')]) }, pass({ warning: 'ledger recover' }));
  }
  add('pass-floor-at-head', 'the floor is already at HEAD: nothing new to check', files(led), pass(), floorOf(led, 9));

  // ---- schema (10)
  {
    const lines = [...L];
    lines[3] = lines[3].replace('{"agent":', '{ "agent":');
    add('schema-not-canonical', 'seq 3 has a space after "{": same content, not JCS', relinked(led, lines), fail('schema', 3, 'SCHEMA_NOT_CANONICAL'));
  }
  {
    const lines = [...L];
    lines[4] = editLine(lines[4], (r) => ({ ...r, extra: 1 }), harness);
    add('schema-extra-field', 'seq 4 carries an unknown field (validly signed)', relinked(led, lines), fail('schema', 4, 'SCHEMA_FIELD'));
  }
  {
    const lines = [...L];
    lines[2] = editLine(lines[2], (r) => ({ ...r, v: 2 }), harness);
    add('schema-unknown-version', 'seq 2 has "v": 2', relinked(led, lines), fail('schema', 2, 'SCHEMA_FIELD'));
  }
  {
    const h = parseLine(led.headLine);
    add('schema-head-not-canonical', 'HEAD is pretty-printed JSON', { ...files(led), head: Buffer.from(JSON.stringify(h, null, 1).replace(/\n/g, '') + '\n') }, fail('schema', null, 'SCHEMA_NOT_CANONICAL'));
  }
  {
    const lines = [...L];
    lines[5] = lines[5].slice(0, 40) + '\n';
    add('schema-not-json', 'seq 5 is cut short (not JSON)', relinked(led, lines), fail('schema', 5, 'SCHEMA_NOT_JSON'));
  }

  // ---- linkage (11)
  {
    const lines = [...L];
    lines[4] = editLine(lines[4], (r) => ({ ...r, prev_tail_hash: led.ids[2] }), harness);
    add('linkage-prev-hash', 'seq 4 links to seq 2 (validly signed)', relinked(led, lines), fail('linkage', 4, 'LINKAGE_PREV'));
  }
  {
    const lines = [...L.slice(0, 3), ...L.slice(4)];
    add('linkage-deleted-line', 'seq 3 was removed and HEAD re-signed over the rest', relinked(led, lines), fail('linkage', 3, 'LINKAGE_SEQ'));
  }
  {
    const h = resignHead({ ...parseLine(led.headLine), tail: led.ids[8] }, harness);
    add('linkage-head-tail', "HEAD's tail is the id of seq 8, not 9", { ...files(led), head: Buffer.from(h.line) }, fail('linkage', null, 'LINKAGE_HEAD_TAIL'));
  }
  {
    const f = files(led);
    add('linkage-short-file', "records.jsonl was truncated below HEAD's size", { ...f, records: f.records.subarray(0, led.offsets[8]) }, fail('linkage', null, 'LINKAGE_SHORT'));
  }
  {
    // The published ledger was rebuilt from seq 3 on (another agent): the consumer's floor at
    // seq 5 names a record that is no longer there.
    const forked = buildLedger(base({ agent: (seq) => (seq < 3 ? 'agent-1' : 'agent-x') }));
    add('linkage-fork-under-floor', 'the floor at seq 5 names a record the ledger no longer has', files(forked), fail('linkage', 5, 'LINKAGE_FORK'), floorOf(led, 5));
  }

  // ---- signature (12)
  {
    const lines = [...L];
    lines[4] = withSig(lines[4], { value: (parseLine(L[5]).sig as Json).value as string });
    add('signature-record', "seq 4 carries seq 5's signature", relinked(led, lines), fail('signature', 4, 'SIG_RECORD'));
  }
  {
    const h = parseLine(led.headLine);
    const other = resignHead({ ...h, ts: '2026-01-01T00:00:10.000Z' }, harness).head;
    add('signature-head', "HEAD carries the signature of another HEAD", { ...files(led), head: Buffer.from(canonicalLine({ ...h, sig: other.sig })) }, fail('signature', null, 'SIG_HEAD'));
  }
  {
    const lines = [...L];
    const other = editLine(lines[6], (r) => r, signerFor('intruder'));
    lines[6] = withSig(other, { key: harness.publicKey });
    add('signature-claimed-key', 'seq 6 is signed by another key but claims the pinned one', relinked(led, lines), fail('signature', 6, 'SIG_RECORD'));
  }
  {
    // S + L: the same signature with a non-reduced S (SPEC 4: strict verification refuses it).
    const lines = [...L];
    const sig = Buffer.from((parseLine(lines[7]).sig as Json).value as string, 'base64url');
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]);
    s += 2n ** 252n + 27742317777372353535851937790883648493n;
    for (let i = 32; i < 64; i++) {
      sig[i] = Number(s & 0xffn);
      s >>= 8n;
    }
    lines[7] = withSig(lines[7], { value: sig.toString('base64url') });
    add('signature-non-canonical-s', 'seq 7 has S + L in place of S (malleated)', relinked(led, lines), fail('signature', 7, 'SIG_RECORD'));
  }

  // ---- key-pin (13)
  {
    const unpinned = buildLedger(base({ signerFor: (seq) => (seq === 5 ? signerFor('intruder') : null) }));
    add('key-pin-unpinned', 'seq 5 is validly signed by a key the trust file does not pin', files(unpinned), fail('key-pin', 5, 'PIN_UNPINNED'));
  }
  {
    const revoked = buildLedger(base({ keys: [{ name: 'harness', revokedAtSeq: 4 }] }));
    add('key-pin-revoked', 'the only key is revoked at seq 4 but keeps signing', files(revoked), fail('key-pin', 4, 'PIN_REVOKED'));
  }
  {
    const agents = buildLedger(base({ keys: [{ name: 'harness', agents: ['alice'] }], agent: (seq) => (seq === 3 ? 'mallory' : 'alice') }));
    add('key-pin-agent', 'the key may sign for alice only; seq 3 says mallory', files(agents), fail('key-pin', 3, 'PIN_AGENT'));
  }
  {
    const early = buildLedger(base({ keys: [{ name: 'harness' }, { name: 'harness-2026-06', fromSeq: 6 }] }));
    const trust: Trust = { v: 1, keys: early.trust.keys.map((k) => (k.name === 'harness-2026-06' ? { ...k, valid_from_seq: 8 } : { ...k, revoked_at_seq: 6 })) };
    add('key-pin-not-yet-valid', 'the new key signs from seq 6 but is pinned only from seq 8', { ...files(early), trust }, fail('key-pin', 6, 'PIN_NOT_YET_VALID'));
  }

  // ---- freshness (14)
  {
    const back = buildLedger(base({ edit: (r, seq) => (seq === 4 ? { ...r, ts: '2025-12-31T23:00:00.000Z' } : r) }));
    add('freshness-backwards', 'seq 4 is an hour older than seq 3', files(back), fail('freshness', 4, 'FRESH_BACKWARDS'));
  }
  {
    const future = buildLedger(base({ edit: (r, seq) => (seq >= 7 ? { ...r, ts: '2099-01-01T00:00:00.000Z' } : r) }));
    add('freshness-future', 'seq 7 on are dated 2099', files(future), fail('freshness', 7, 'FRESH_FUTURE'));
  }
  add('freshness-stale', 'HEAD is from 2026-01-01; --max-age 1d', files(led), fail('freshness', null, 'FRESH_STALE', ['--max-age', '1d']));
  {
    // The ledger was put back to seq 5; the consumer's floor says it had seen seq 8.
    const lines = L.slice(0, 6);
    add('freshness-rollback', 'HEAD is at seq 5 but the floor is at seq 8: rolled back', relinked(led, lines), fail('freshness', null, 'FRESH_ROLLBACK'), floorOf(led, 8));
  }
  return cases;
}

/** The project root: the nearest folder up with a package.json (this file runs from test/ and dist/test/). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}
export const FIXTURES_DIR = join(projectRoot(), 'fixtures', 'ledgers');

/** The files of a case, as they are committed. */
export function fixtureFiles(c: FixtureCase): Record<string, Buffer> {
  const out: Record<string, Buffer> = {
    'records.jsonl': c.records,
    HEAD: c.head,
    'trust.json': Buffer.from(JSON.stringify(c.trust, null, 2) + '\n'),
    'expected.json': Buffer.from(JSON.stringify({ about: c.name + ': ' + c.about, ...c.expected }, null, 2) + '\n'),
  };
  if (c.floor) out['floor.json'] = Buffer.from(canonicalLine(c.floor));
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  rmSync(FIXTURES_DIR, { recursive: true, force: true });
  for (const c of fixtureCases()) {
    const dir = join(FIXTURES_DIR, c.name);
    mkdirSync(dir, { recursive: true });
    for (const [name, bytes] of Object.entries(fixtureFiles(c))) writeFileSync(join(dir, name), bytes);
  }
  console.log(`wrote ${fixtureCases().length} cases to ${FIXTURES_DIR}`);
}
