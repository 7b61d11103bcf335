// Issue 13 findings 8 and 17: a gate with a trust floor audits only the records above it, so what
// the decision relies on below the floor must still be found and verified. An attacker with write
// access to .ledger/ (and no key) tries to blind it: overwrite a revocation below the floor with
// same-length junk and delete the derived index, patch one value of an index segment, or turn a
// relied-on record into bytes that are not UTF-8 (a lossy decoder still reads the signed record).
// Each must make the gate hold (exit 20), and the gate must change nothing in the ledger.
import { closeSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordId } from '../../src/canonical.js';
import { hash64 } from '../../src/causal/index/hash.js';
import { revokeKey } from '../../src/causal/index/keys.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { handoff, project, type Project } from '../causal/kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const OP = 'deploy_api';

/** Lines of records.jsonl as bytes (each without its newline). */
function lineBuffers(p: Project): Buffer[] {
  const all = readFileSync(join(p.ledger, 'records.jsonl'));
  const out: Buffer[] = [];
  let start = 0;
  for (let i = all.indexOf(0x0a); i >= 0; i = all.indexOf(0x0a, start)) {
    out.push(all.subarray(start, i));
    start = i + 1;
  }
  return out;
}

/** Writes a trust floor at HEAD (SPEC 8) and returns its path. */
function floorAtHead(p: Project): string {
  const lines = lineBuffers(p);
  const last = JSON.parse(lines[lines.length - 1].toString('utf8'));
  const offset = lines.slice(0, -1).reduce((n, l) => n + l.length + 1, 0);
  const path = join(p.dir, 'floor.json');
  writeFileSync(path, JSON.stringify({ v: 1, genesis: recordId(JSON.parse(lines[0].toString('utf8'))), seq: last.seq, id: recordId(last), offset }) + '\n');
  return path;
}

/** Overwrites record `seq`'s line in place with `bytes` (same length, no newline). */
function overwriteLine(p: Project, seq: number, bytes: Buffer): void {
  const lines = lineBuffers(p);
  expect(bytes.length).toBe(lines[seq].length);
  const at = lines.slice(0, seq).reduce((n, l) => n + l.length + 1, 0);
  const fd = openSync(join(p.ledger, 'records.jsonl'), 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

/** A handoff, its revocation, a few records after it, and a floor at HEAD. */
async function revokedBelowFloor(extra = 3) {
  p = await project();
  const h = await p.id(handoff(OP, 'e1', 'success'));
  // Not next to the handoff: the handoff's own link check reads its neighbours.
  for (let i = 0; i < 2; i++) await p.id(['append', 'intent', '--op', `between_${i}`, '--exec', 'x', '--action', 'noise']);
  const revoke = await p.id(['revoke', h, '--reason', 'built from the wrong branch']);
  for (let i = 0; i < extra; i++) await p.id(['append', 'intent', '--op', `other_${i}`, '--exec', 'x', '--action', 'noise']);
  const revokeSeq = p.records().find((r) => r.kind === 'revoke')!.seq as number;
  // Honest baseline: the gate holds on the revoked handoff, with or without the floor.
  const floor = floorAtHead(p);
  const g = await p.gate(OP, '--floor', floor);
  expect(g.code).toBe(20);
  expect(g.r.revoked_by).toEqual([revoke]);
  return { h, revoke, revokeSeq, floor };
}

async function expectHoldsUnchanged(floor: string, why: RegExp) {
  // A fresh process (each command's Ledger its own caches): no scan of the tail remembered from the honest run above.
  const before = p.snap();
  const g = await p.gate(OP, '--floor', floor);
  expect(g.code, JSON.stringify(g.r.reasons)).toBe(20);
  expect(g.r.failed_term).toBe('handoff_valid');
  expect(g.r.reasons.handoff_valid.join(' ')).toMatch(why);
  expect(p.snap()).toEqual(before);
}

describe('when an attacker overwrites a revocation below the floor with same-length junk and deletes the index', () => {
  it.each([
    ['JSON that claims the same seq (a record of no kind the index files)', (len: number, seq: number) => Buffer.from(`{"kind":"x","seq":${seq}}`.padEnd(len, ' '))],
    ['bytes that are not JSON', (len: number) => Buffer.alloc(len, 'y')],
    ['bytes that are not UTF-8', (len: number) => Buffer.alloc(len, 0xff)],
  ])('%s: the rebuilt index refuses the line and the gate holds', async (_name, junk) => {
    const { revokeSeq, floor } = await revokedBelowFloor();
    const len = lineBuffers(p)[revokeSeq].length;
    overwriteLine(p, revokeSeq, junk(len, revokeSeq));
    rmSync(join(p.ledger, 'index'), { recursive: true, force: true });
    await expectHoldsUnchanged(floor, new RegExp(`seq ${revokeSeq}|cannot be read|does not (link|verify)`));
  });

  it('a revocation whose target is swapped for another digest of the same length, and the index deleted: the gate holds', async () => {
    const { revokeSeq, floor } = await revokedBelowFloor();
    const line = lineBuffers(p)[revokeSeq].toString('utf8');
    // Swap the revoked target for a digest of the same length: the line is a revoke of nothing.
    const swapped = line.replace(/"target":"sha256:[0-9a-f]{64}"/, `"target":"sha256:${'0'.repeat(64)}"`);
    overwriteLine(p, revokeSeq, Buffer.from(swapped));
    rmSync(join(p.ledger, 'index'), { recursive: true, force: true });
    await expectHoldsUnchanged(floor, new RegExp(`seq ${revokeSeq}|link`));
  });
});

describe('when an attacker patches one value of an index segment', () => {
  /** The revoked handoff with enough records after it that the index writes a segment. */
  async function withSegment() {
    const base = await revokedBelowFloor(0);
    const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key') });
    ledger.append(Array.from({ length: 300 }, (_, i) => ({ kind: 'intent', agent: 'alice', logical_operation_id: `noise_${i % 9}`, execution_id: `n${i}`, action: 'noise' }) as Draft));
    const floor = floorAtHead(p);
    const g = await p.gate(OP, '--floor', floor);
    expect(g.code).toBe(20);
    expect(g.r.revoked_by).toEqual([base.revoke]);
    const segs = readdirSync(join(p.ledger, 'index')).filter((f) => f.endsWith('.seg'));
    expect(segs.length).toBeGreaterThan(0);
    return { ...base, floor, seg: join(p.ledger, 'index', segs[0]) };
  }

  it('the key hash of the revocation entry: the gate holds', async () => {
    const { h, floor, seg } = await withSegment();
    const buf = readFileSync(seg);
    const [h1, h2] = hash64(revokeKey(h));
    const entry = Buffer.alloc(8);
    entry.writeUInt32LE(h1, 0);
    entry.writeUInt32LE(h2, 4);
    const at = buf.indexOf(entry, 136);
    expect(at).toBeGreaterThan(0);
    const fd = openSync(seg, 'r+');
    writeSync(fd, Buffer.from([buf[at] ^ 1]), 0, 1, at);
    closeSync(fd);
    await expectHoldsUnchanged(floor, /revoked by/);
  });

  it('one byte anywhere in the body (a bucket start, a posting count): the gate holds', async () => {
    const { floor, seg } = await withSegment();
    const buf = readFileSync(seg);
    const fd = openSync(seg, 'r+');
    // The middle of the body: whichever table that is, the segment no longer says what was written.
    const at = 136 + Math.floor((buf.length - 136) / 2);
    writeSync(fd, Buffer.from([buf[at] ^ 0x10]), 0, 1, at);
    closeSync(fd);
    await expectHoldsUnchanged(floor, /revoked by/);
  });
});

describe('when a relied-on record below the floor is not UTF-8 (a lossy decoder reads the signed record)', () => {
  // An honest record whose text holds U+FFFD (UTF-8 EF BF BD). The attacker writes F0 90 80 in
  // its place: the start of a 4-byte sequence cut short, which a decoder with replacement turns
  // into one U+FFFD. Same length, same decoded text, same id, same links: only the bytes say that
  // this line is not a record (SPEC 4: UTF-8).
  const LOSSY = Buffer.from([0xf0, 0x90, 0x80]);
  function corruptUtf8(seq: number) {
    const line = Buffer.from(lineBuffers(p)[seq]);
    const at = line.indexOf(Buffer.from('\uFFFD'));
    expect(at).toBeGreaterThan(0);
    LOSSY.copy(line, at);
    expect(line.toString('utf8')).toBe(lineBuffers(p)[seq].toString('utf8'));
    overwriteLine(p, seq, line);
  }

  it.each([
    ['the handoff itself', 'handoff'],
    ['the record just after the handoff', 'after'],
    ['the record just before the handoff', 'before'],
  ])('%s: the gate holds', async (_name, which) => {
    p = await project();
    const note = (w: string) => (which === w ? ['--note', 'caf\uFFFD'] : []);
    const first = await p.id(handoff(OP, 'e0', 'success'));
    await p.id(['revoke', first, '--reason', 'superseded by e1']);
    await p.id(['append', 'intent', '--op', 'before', '--exec', 'x', '--action', 'noise', ...note('before')]);
    await p.id(handoff(OP, 'e1', 'success', ...note('handoff')));
    await p.id(['append', 'intent', '--op', 'after', '--exec', 'x', '--action', 'noise', ...note('after')]);
    await p.id(['append', 'intent', '--op', 'last', '--exec', 'x', '--action', 'noise']);
    const floor = floorAtHead(p);
    const recs = p.records();
    const seqOf = (pred: (r: Record<string, unknown>) => boolean) => recs.find(pred)!.seq as number;
    const target = {
      handoff: seqOf((r) => r.kind === 'handoff' && r.execution_id === 'e1'),
      after: seqOf((r) => r.logical_operation_id === 'after'),
      before: seqOf((r) => r.logical_operation_id === 'before'),
    }[which]!;
    const g0 = await p.gate(OP, '--floor', floor);
    expect(g0.code, JSON.stringify(g0.r.reasons)).toBe(0);
    corruptUtf8(target);
    await expectHoldsUnchanged(floor, new RegExp(`seq ${target}|UTF-8|canonical|link`));
  });
});
