// The trust floor (SPEC 8): resume above it, refuse a fork under it or a rollback below it,
// advance it atomically after a pass, and warn when it sits inside the ledger.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAuditSyncInternal as auditSync } from '../../audit/index.js';
import { readFloor } from '../../audit/floor.js';
import { canonicalLine } from '../../src/canonical.js';
import { auditLedger, keepFloor } from '../../src/ledger.js';
import { buildLedger, floorOf, headForLines, serializeLedger, signerFor, type Json } from '../helpers/gen-ledger.js';
import { NOW, freshDir, verdict, writeLedger } from './harness.js';

const led = buildLedger({ count: 12 });
const harness = signerFor('harness');

function placeFloor(floor: Json | null, files: ReturnType<typeof serializeLedger>, inside: boolean) {
  const w = writeLedger(files, led.trust);
  const floorPath = inside ? join(w.dir, 'floor.json') : join(w.base, 'floor.json');
  if (floor) writeFileSync(floorPath, canonicalLine(floor));
  return { w, floorPath };
}

/** The auditor alone: it reads the floor and never writes it. */
function withFloor(floor: Json | null, files = serializeLedger(led), extra: { floorInside?: boolean } = {}) {
  const { w, floorPath } = placeFloor(floor, files, extra.floorInside ?? false);
  const report = auditSync({ dir: w.dir, trust: led.trust, now: NOW, floorPath });
  return { report, floorPath, w };
}

/** --advance: the public auditLedger, which writes the floor the auditor reports. */
async function advancing(floor: Json | null, files = serializeLedger(led)) {
  const { w, floorPath } = placeFloor(floor, files, false);
  const report = await auditLedger({ dir: w.dir, trust: led.trust, now: NOW, floorPath, advance: true, threads: 1 });
  return { report, floorPath, w };
}

describe('floor: resuming above it', () => {
  it('checks only the records after the floor', () => {
    const { report } = withFloor(floorOf(led, 7));
    expect(report.ok).toBe(true);
    expect(report.checked).toBe(4);
    expect(report.verdict).toMatch(/^pass: 4 new records verified above the floor at seq 7, HEAD seq 11 /);
  });

  it('checks nothing but HEAD when the floor is at HEAD', () => {
    const { report } = withFloor(floorOf(led, 11));
    expect({ ok: report.ok, checked: report.checked }).toEqual({ ok: true, checked: 0 });
  });

  it('does not see damage under the floor (that is what a floor means), but does above it', () => {
    const lines = [...led.lines];
    lines[3] = lines[3].replace('{"agent"', '{"agent" ');
    const head = headForLines(lines, harness).line;
    const files = { ...serializeLedger(led), records: Buffer.from(lines.join('')), head: Buffer.from(head) };
    // The floor's offsets moved by one byte; a floor at 7 taken from the damaged bytes:
    const shifted = { ...floorOf(led, 7), offset: led.offsets[7] + 1 };
    expect(withFloor(shifted, files).report.ok).toBe(true);
    expect(verdict(withFloor(floorOf(led, 2), files).report)).toEqual({ layer: 'schema', seq: 3, code: 'SCHEMA_NOT_CANONICAL' });
  });

  it('audits from genesis, with a warning, when the floor file does not exist', () => {
    const { report } = withFloor(null);
    expect(report.ok).toBe(true);
    expect(report.checked).toBe(12);
    expect(report.warnings.join('\n')).toMatch(/no floor at .*audited from genesis/);
  });
});

describe('floor: a fork or another ledger under it fails linkage', () => {
  it('when the record at the floor has another id', () => {
    const forked = buildLedger({ count: 12, agent: (seq) => (seq < 4 ? 'agent-1' : 'agent-2') });
    const { report } = withFloor(floorOf(led, 6), serializeLedger(forked));
    expect(verdict(report)).toEqual({ layer: 'linkage', seq: 6, code: 'LINKAGE_FORK' });
  });

  it('when the floor offset is not where record seq starts, or past the end', () => {
    expect(verdict(withFloor({ ...floorOf(led, 6), offset: led.offsets[6] + 1 }).report).code).toBe('LINKAGE_FORK');
    expect(verdict(withFloor({ ...floorOf(led, 6), offset: led.offsets[7] }).report).code).toBe('LINKAGE_FORK');
    expect(verdict(withFloor({ ...floorOf(led, 6), offset: 10_000_000 }).report).code).toBe('LINKAGE_FORK');
  });

  it('when the floor is for another genesis', () => {
    const other = buildLedger({ count: 12, nonce: 'another' });
    const { report } = withFloor(floorOf(other, 6));
    expect(verdict(report)).toEqual({ layer: 'linkage', seq: null, code: 'LINKAGE_FLOOR_GENESIS' });
    expect(report.verdict).toMatch(/^linkage fails at the floor: /);
  });

  it('still audits the whole ledger from genesis, so a lower layer wins', () => {
    const forked = buildLedger({ count: 12, agent: (seq) => (seq < 4 ? 'agent-1' : 'agent-2'), edit: (r, seq) => (seq === 9 ? { ...r, extra: 1 } : r) });
    expect(verdict(withFloor(floorOf(led, 6), serializeLedger(forked)).report)).toEqual({ layer: 'schema', seq: 9, code: 'SCHEMA_FIELD' });
  });
});

describe('floor: a HEAD below it fails freshness (rollback)', () => {
  it('when the ledger was put back to an earlier, valid state', () => {
    const lines = led.lines.slice(0, 8);
    const files = { ...serializeLedger(led), records: Buffer.from(lines.join('')), head: Buffer.from(headForLines(lines, harness).line) };
    const { report } = withFloor(floorOf(led, 10), files);
    expect(verdict(report)).toEqual({ layer: 'freshness', seq: null, code: 'FRESH_ROLLBACK' });
    expect(report.checked).toBe(8);
  });
});

describe('floor: --advance', () => {
  it('writes the new HEAD as the floor after a pass, canonical, with no temp file left', async () => {
    const { report, floorPath, w } = await advancing(floorOf(led, 3));
    expect(report.ok).toBe(true);
    const expected = floorOf(led, 11);
    expect(readFileSync(floorPath, 'utf8')).toBe(canonicalLine(expected));
    expect(report.advanced).toEqual(expected);
    expect(readdirSync(w.base).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // The next audit starts there and checks nothing new.
    expect(auditSync({ dir: w.dir, trust: led.trust, now: NOW, floorPath }).checked).toBe(0);
  });

  it('is only reported by the auditor, which writes nothing', () => {
    const { w, floorPath } = placeFloor(floorOf(led, 3), serializeLedger(led), false);
    const before = readFileSync(floorPath, 'utf8');
    const report = auditSync({ dir: w.dir, trust: led.trust, now: NOW, floorPath, advance: true });
    expect(report.advanced).toEqual(floorOf(led, 11));
    expect(readFileSync(floorPath, 'utf8')).toBe(before);
  });

  it('creates the floor when the file did not exist', async () => {
    const { report, floorPath } = await advancing(null);
    expect(report.ok).toBe(true);
    expect(readFloor(floorPath)).toEqual(floorOf(led, 11));
  });

  it('leaves the floor untouched after a failure', async () => {
    const back = buildLedger({ count: 12, edit: (r, seq) => (seq === 10 ? { ...r, ts: '2020-01-01T00:00:00.000Z' } : r) });
    const before = floorOf(back, 3);
    const { report, floorPath } = await advancing(before, serializeLedger(back));
    expect(report.ok).toBe(false);
    expect(JSON.parse(readFileSync(floorPath, 'utf8'))).toEqual(before);
  });

  it('is refused without --floor', () => {
    const w = writeLedger(led);
    expect(() => auditSync({ dir: w.dir, trust: led.trust, now: NOW, advance: true })).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});

describe('floor: the file itself', () => {
  it('warns when it lives inside the ledger directory', () => {
    const { report } = withFloor(floorOf(led, 5), undefined, { floorInside: true });
    expect(report.ok).toBe(true);
    expect(report.warnings.join('\n')).toContain('inside the ledger directory');
  });

  it.each([
    ['not JSON', 'nope'],
    ['a duplicate key', '{"v":1,"v":1,"genesis":"sha256:' + '0'.repeat(64) + '","seq":1,"id":"sha256:' + '0'.repeat(64) + '","offset":1}'],
    ['an unknown field', JSON.stringify({ ...floorOf(led, 3), extra: 1 })],
    ['a missing field', JSON.stringify({ v: 1, seq: 3 })],
    ['a negative seq', JSON.stringify({ ...floorOf(led, 3), seq: -1 })],
  ])('is a usage error (exit 2) when it has %s', (_what, text) => {
    const dir = freshDir();
    const path = join(dir, 'floor.json');
    writeFileSync(path, text);
    expect(() => readFloor(path)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^INPUT_/) }));
  });

  it('keepFloor replaces atomically (temp file, rename) and leaves nothing else', () => {
    const dir = freshDir();
    const path = join(dir, 'f.json');
    keepFloor(path, floorOf(led, 1) as never);
    keepFloor(path, floorOf(led, 2) as never);
    expect(readdirSync(dir)).toEqual(['f.json']);
    expect(existsSync(path) && readFloor(path)).toEqual(floorOf(led, 2));
  });
});
