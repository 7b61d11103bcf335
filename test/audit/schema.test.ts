// Layer 1, schema (SPEC 8): canonical JSON, the record and HEAD shapes, the 1 MiB line limit.
import { describe, expect, it } from 'vitest';
import { buildLedger, editLine, headForLines, parseLine, serializeLedger, signerFor } from '../helpers/gen-ledger.js';
import { audit, verdict } from './harness.js';

const led = buildLedger({ count: 8 });
const harness = signerFor('harness');
/** The ledger with some lines replaced and HEAD re-signed over them (only the lines are at fault). */
function withLines(change: (lines: string[]) => void) {
  const lines = [...led.lines];
  change(lines);
  return { ...serializeLedger(led), records: Buffer.from(lines.join('')), head: Buffer.from(headForLines(lines, harness).line) };
}

describe('schema: the records', () => {
  it('passes a valid ledger', () => {
    const r = audit(led);
    expect(verdict(r)).toEqual({ layer: null, seq: null, code: null });
    expect(r.checked).toBe(8);
  });

  it('fails a line that is not JSON, at its seq', () => {
    expect(verdict(audit(withLines((l) => void (l[3] = '{"v":1,\n'))))).toEqual({ layer: 'schema', seq: 3, code: 'SCHEMA_NOT_JSON' });
  });

  it('fails a line with the same content but not in JCS form (whitespace, key order, escapes)', () => {
    const variants = [
      (s: string) => s.replace('{"agent"', '{ "agent"'),
      (s: string) => JSON.stringify(Object.fromEntries(Object.entries(parseLine(s)).reverse())) + '\n',
      (s: string) => s.replace('"kind":"', '"kind":"\\u00' + s.charCodeAt(s.indexOf('"kind":"') + 8).toString(16)).replace(/("kind":"\\u00[0-9a-f]{2})./, '$1'),
    ];
    for (const v of variants) {
      const r = audit(withLines((l) => void (l[5] = v(l[5]))));
      expect(JSON.parse(v(led.lines[5])), 'the variant keeps the content').toEqual(parseLine(led.lines[5]));
      expect(verdict(r)).toEqual({ layer: 'schema', seq: 5, code: 'SCHEMA_NOT_CANONICAL' });
    }
  });

  it('fails a field that is extra, missing or of the wrong form, even when validly signed', () => {
    const cases: [(r: Record<string, unknown>) => Record<string, unknown>, string][] = [
      [(r) => ({ ...r, extra: true }), '$.extra: unknown field'],
      [({ agent: _a, ...r }) => r, '$.agent: missing'],
      [(r) => ({ ...r, agent: 'no spaces allowed' }), '$.agent: expected'],
      [(r) => ({ ...r, v: 2 }), '$.v: expected 1'],
      [(r) => ({ ...r, ts: '2026-11-29T12:00:02Z' }), '$.ts: expected'],
    ];
    for (const [change, text] of cases) {
      const r = audit(withLines((l) => void (l[2] = editLine(l[2], change, harness))));
      expect(verdict(r), text).toEqual({ layer: 'schema', seq: 2, code: 'SCHEMA_FIELD' });
      expect(r.findings.map((f) => f.actual).join('\n'), text).toContain(text);
    }
  });

  it('counts text limits in characters (code points): 4096 astral characters pass, 4097 fail, at their seq', () => {
    const at = (n: number) => withLines((l) => void (l[7] = editLine(l[7], (x) => ({ ...x, done: '🦀'.repeat(n) }), harness)));
    expect(verdict(audit(at(4096)))).toEqual({ layer: null, seq: null, code: null });
    const r = audit(at(4097));
    expect(verdict(r)).toEqual({ layer: 'schema', seq: 7, code: 'SCHEMA_FIELD' });
    expect(r.findings[0].actual).toContain('$.done: expected a string of 1-4096 characters, got a string of 4097 characters');
  });

  it('fails invalid UTF-8 even where the decoder would have substituted U+FFFD', () => {
    const files = serializeLedger(led);
    const at = files.records.indexOf('agent-1', led.offsets[4]);
    const records = Buffer.from(files.records);
    records[at] = 0xff;
    expect(verdict(audit({ ...files, records }))).toEqual({ layer: 'schema', seq: 4, code: 'SCHEMA_NOT_UTF8' });
  });

  it('fails a line over 1 MiB without buffering it, and reads on after it', () => {
    const huge = '{"pad":"' + 'x'.repeat(1024 * 1024 + 10) + '"}\n';
    const r = audit(withLines((l) => l.splice(3, 0, huge)));
    expect(verdict(r)).toEqual({ layer: 'schema', seq: 3, code: 'SCHEMA_LINE_TOO_LONG' });
    expect(r.checked).toBe(9);
  });

  it('fails, without crashing, a line nested too deep to walk', () => {
    const deep = '{"a":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}\n';
    const r = audit(withLines((l) => void (l[2] = deep)));
    expect(r.failed_layer).toBe('schema');
    expect(r.failure?.seq).toBe(2);
  });

  it('lists every schema finding of the run, lowest seq first', () => {
    const r = audit(withLines((l) => {
      l[6] = 'not json\n';
      l[2] = editLine(l[2], (x) => ({ ...x, extra: 1 }), harness);
    }));
    expect(r.findings.map((f) => f.seq)).toEqual([2, 6]);
    expect(r.findings_total).toBe(2);
  });

  it('ranks a schema fault above a linkage fault at a lower seq (lowest layer first)', () => {
    const r = audit(withLines((l) => {
      l[1] = editLine(l[1], (x) => ({ ...x, prev_tail_hash: led.ids[5] }), harness);
      l[6] = editLine(l[6], (x) => ({ ...x, extra: 1 }), harness);
    }));
    expect(verdict(r)).toEqual({ layer: 'schema', seq: 6, code: 'SCHEMA_FIELD' });
  });
});

describe('schema: HEAD', () => {
  const files = serializeLedger(led);
  it('fails a HEAD that is missing while records.jsonl exists', () => {
    const r = audit({ ...files, head: Buffer.alloc(0) });
    expect(verdict(r)).toEqual({ layer: 'schema', seq: null, code: 'SCHEMA_NOT_CANONICAL' });
  });

  it('fails a HEAD without its newline, with two lines, or not canonical', () => {
    const line = led.headLine;
    for (const head of [line.slice(0, -1), line + '\n', line.replace('{"genesis"', '{ "genesis"')]) {
      expect(verdict(audit({ ...files, head: Buffer.from(head) })).layer).toBe('schema');
    }
  });

  it('fails a HEAD with a bad field, naming it, with seq null', () => {
    const h = parseLine(led.headLine);
    // Replacing a member keeps the key order, so the text stays canonical: only the field is bad.
    const r = audit({ ...files, head: Buffer.from(JSON.stringify({ ...h, size: -1 }) + '\n') });
    expect(verdict(r)).toEqual({ layer: 'schema', seq: null, code: 'SCHEMA_HEAD_FIELD' });
    expect(r.failure?.reason).toContain('$.size');
  });

  it('still schema-checks every complete line when HEAD is unusable', () => {
    const lines = [...led.lines];
    lines[4] = 'oops\n';
    const r = audit({ ...files, records: Buffer.from(lines.join('')), head: Buffer.from('junk\n') });
    expect(r.findings.map((f) => f.seq)).toEqual([4, null]);
  });
});
