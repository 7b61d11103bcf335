// Layer 1, schema (SPEC 8, exit 10): HEAD and every line are canonical JSON (SPEC 4, SPEC 5), of
// the right shape (SPEC 4-6: no field missing, extra, or of the wrong type or form; `v` known),
// and no line is over 1 MiB.
import { headProblems, recordProblems, MAX_LINE_BYTES, type Head, type LedgerRecord } from '../src/record.js';
import type { AuditContext, Layer, LineView } from './context.js';
import { clip, type FindingCollector } from './findings.js';
import { isCanonicalText } from '../src/canonical.js';
import { decodeLine } from './lines.js';

export function schemaLayer(ctx: AuditContext): Layer {
  const fail = (sink: FindingCollector, code: string, seq: number | null, expected: string, actual: string, reason: string) =>
    sink.add({ layer: 'schema', code, seq, id: null, expected, actual, reason });

  /** Parses one canonical JSON text (HEAD's or a line's). Attacker-controlled bytes. */
  function parseCanonical(bytes: Buffer, what: string, seq: number | null, sink: FindingCollector): unknown {
    const text = decodeLine(bytes);
    if (text === null) {
      fail(sink, 'SCHEMA_NOT_UTF8', seq, 'UTF-8 text', 'invalid UTF-8', `${what} is not valid UTF-8`);
      return undefined;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      fail(sink, 'SCHEMA_NOT_JSON', seq, 'a JSON object', clip((e as Error).message, 80), `${what} is not JSON`);
      return undefined;
    }
    if (!isCanonicalText(value, text)) {
      fail(sink, 'SCHEMA_NOT_CANONICAL', seq, 'JCS(JSON.parse(line))', clip(text, 80), `${what} is not canonical JSON (RFC 8785)`);
      return undefined;
    }
    return value;
  }

  return {
    name: 'schema',

    checkHead(sink) {
      const bytes = ctx.headBytes;
      if (bytes === null) {
        fail(sink, 'SCHEMA_HEAD_MISSING', null, 'a HEAD file', 'none', 'HEAD is missing: nothing in records.jsonl is published');
        return;
      }
      // SPEC 5: HEAD is exactly JCS(head) + "\n".
      if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a || bytes.indexOf(0x0a) !== bytes.length - 1) {
        fail(sink, 'SCHEMA_NOT_CANONICAL', null, 'one line ending in a newline', `${bytes.length} bytes`, 'HEAD is not one canonical JSON line');
        return;
      }
      const value = parseCanonical(bytes.subarray(0, bytes.length - 1), 'HEAD', null, sink);
      if (value === undefined) return;
      const problems = headProblems(value);
      for (const p of problems) fail(sink, 'SCHEMA_HEAD_FIELD', null, 'a valid HEAD (SPEC 5)', p, `HEAD ${p}`);
      if (problems.length === 0) ctx.head = value as Head;
    },

    checkRecord(line: LineView, sink) {
      if (line.oversize) {
        fail(sink, 'SCHEMA_LINE_TOO_LONG', line.pos, `at most ${MAX_LINE_BYTES} bytes`, `${line.length + 1} bytes`, `the line at byte ${line.offset} is over 1 MiB`);
        return false;
      }
      let value: unknown;
      let problems: string[];
      try {
        value = parseCanonical(line.bytes, `the line at byte ${line.offset}`, line.pos, sink);
        if (value === undefined) return false;
        problems = recordProblems(value);
      } catch (e) {
        // A check that cannot decide (a stack overflow on absurd nesting) says no.
        fail(sink, 'SCHEMA_UNCHECKABLE', line.pos, 'a checkable record', clip(String(e), 80), `the line at byte ${line.offset} could not be checked`);
        return false;
      }
      if (problems.length) {
        for (const p of problems) fail(sink, 'SCHEMA_FIELD', line.pos, 'a valid record (SPEC 4, 6)', p, `record ${p}`);
        return false;
      }
      line.record = value as LedgerRecord;
      return true;
    },

    checkEnd() {
      // Nothing: a schema fault is always in one line or in HEAD.
    },
  };
}
