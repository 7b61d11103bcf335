// Layer 2, linkage (SPEC 8): consecutive seqs, prev_tail_hash, the genesis, HEAD against the
// records, a short records.jsonl. (Forks under a floor: floor.test.ts.)
import { rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAuditSyncInternal as auditLedger } from '../../audit/index.js';
import { buildLedger, editLine, headForLines, parseLine, payloadFor, resignHead, serializeLedger, signerFor, type Json } from '../helpers/gen-ledger.js';
import { NOW, audit, verdict, writeLedger, lineEditor } from './harness.js';

const led = buildLedger({ count: 8 });
const harness = signerFor('harness');
const files = serializeLedger(led);
const withLines = lineEditor(led);
const headWith = (change: Json) => Buffer.from(resignHead({ ...parseLine(led.headLine), ...change }, harness).line);

describe('linkage: the chain', () => {
  it('fails a prev_tail_hash that is not the previous id, with a verdict a person can act on', () => {
    // Built with the edit, so seq 5 links to the edited seq 4 and the fault is in seq 4 alone.
    const r = audit(buildLedger({ count: 8, edit: (x, seq) => (seq === 4 ? { ...x, prev_tail_hash: led.ids[2] } : x) }));
    expect(verdict(r)).toEqual({ layer: 'linkage', seq: 4, code: 'LINKAGE_PREV' });
    expect(r.findings_total).toBe(1);
    expect(r.verdict).toBe('linkage fails at seq 4: prev_tail_hash is not the id of seq 3');
    expect(r.findings[0]).toMatchObject({ expected: led.ids[3], actual: led.ids[2] });
  });

  it('fails a seq that skips, and a deleted line, once each (not for every line after)', () => {
    const skipped = audit(withLines((l) => void (l[5] = editLine(l[5], (x) => ({ ...x, seq: 6 }), harness))));
    expect(verdict(skipped)).toEqual({ layer: 'linkage', seq: 5, code: 'LINKAGE_SEQ' });
    const deleted = audit(withLines((l) => l.splice(3, 1)));
    expect(verdict(deleted)).toEqual({ layer: 'linkage', seq: 3, code: 'LINKAGE_SEQ' });
    expect(deleted.findings.map((f) => f.code)).toEqual(['LINKAGE_SEQ', 'LINKAGE_PREV']);
  });

  it('fails duplicated and swapped lines', () => {
    expect(verdict(audit(withLines((l) => l.splice(3, 0, l[3])))).layer).toBe('linkage');
    expect(verdict(audit(withLines((l) => ([l[3], l[4]] = [l[4], l[3]])))).seq).toBe(3);
  });

  it('fails a first record that is not a genesis, and a second genesis', () => {
    const start = { ...payloadFor('start', 0, '2026-11-29T12:00:00.000Z'), v: 1, seq: 0, prev_tail_hash: null, ts: '2026-11-29T12:00:00.000Z', kind: 'start', agent: 'agent-1' };
    const noGenesis = buildLedger({ count: 4, edit: (r, seq) => (seq === 0 ? start : r) });
    expect(verdict(audit(noGenesis))).toEqual({ layer: 'linkage', seq: 0, code: 'LINKAGE_GENESIS' });
    const twice = buildLedger({ count: 6, edit: (r, seq) => (seq === 3 ? { v: 1, seq, prev_tail_hash: r.prev_tail_hash, ts: r.ts, kind: 'genesis', agent: 'agent-1', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' } : r) });
    expect(verdict(audit(twice))).toEqual({ layer: 'linkage', seq: 3, code: 'LINKAGE_GENESIS' });
  });

  it('fails a genesis with a prev_tail_hash, or a first record at another seq', () => {
    const linked = buildLedger({ count: 3, edit: (r, seq) => (seq === 0 ? { ...r, prev_tail_hash: 'sha256:' + '0'.repeat(64) } : r) });
    expect(verdict(audit(linked))).toEqual({ layer: 'linkage', seq: 0, code: 'LINKAGE_GENESIS' });
    const r = audit(withLines((l) => l.splice(0, 1)));
    expect(verdict(r)).toEqual({ layer: 'linkage', seq: 0, code: 'LINKAGE_SEQ' });
  });
});

describe('linkage: HEAD against the records', () => {
  it.each([
    ['tail', { tail: led.ids[6] }, 'LINKAGE_HEAD_TAIL'],
    ['seq', { seq: 6 }, 'LINKAGE_HEAD_SEQ'],
    ['genesis', { genesis: led.ids[1] }, 'LINKAGE_HEAD_GENESIS'],
    ['size in the middle of a line', { size: led.offsets[7] + 10 }, 'LINKAGE_HEAD_SIZE'],
  ])('fails when HEAD names another %s (seq null)', (_what, change, code) => {
    expect(verdict(audit({ ...files, head: headWith(change) }))).toMatchObject({ layer: 'linkage', seq: null, code });
  });

  it('fails when HEAD covers fewer records than its seq says (size at an earlier line end)', () => {
    const r = audit({ ...files, head: headWith({ size: led.offsets[7] }) });
    expect(r.findings.map((f) => f.code).sort()).toEqual(['LINKAGE_HEAD_SEQ', 'LINKAGE_HEAD_TAIL']);
  });

  it('fails when records.jsonl is shorter than HEAD size, or missing', () => {
    expect(verdict(audit({ ...files, records: files.records.subarray(0, files.records.length - 1) }))).toEqual({ layer: 'linkage', seq: null, code: 'LINKAGE_SHORT' });
    const w = writeLedger(led);
    unlinkSync(join(w.dir, 'records.jsonl'));
    expect(verdict(auditLedger({ dir: w.dir, trust: w.trust, now: NOW }))).toEqual({ layer: 'linkage', seq: null, code: 'LINKAGE_SHORT' });
  });

  it('fails an empty records.jsonl under a HEAD', () => {
    expect(verdict(audit({ ...files, records: Buffer.alloc(0) })).layer).toBe('linkage');
  });

  it('reports a missing HEAD as a schema fault, and a missing ledger as a usage error', () => {
    const w = writeLedger(led);
    unlinkSync(join(w.dir, 'HEAD'));
    expect(verdict(auditLedger({ dir: w.dir, trust: w.trust, now: NOW }))).toEqual({ layer: 'schema', seq: null, code: 'SCHEMA_HEAD_MISSING' });
    unlinkSync(join(w.dir, 'records.jsonl'));
    expect(() => auditLedger({ dir: w.dir, trust: w.trust, now: NOW })).toThrow(expect.objectContaining({ code: 'INPUT_NOT_FOUND' }));
    rmSync(w.dir, { recursive: true });
    expect(() => auditLedger({ dir: w.dir, trust: w.trust, now: NOW })).toThrow(expect.objectContaining({ code: 'INPUT_NOT_FOUND' }));
  });
});
