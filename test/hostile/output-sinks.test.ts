// The CLI's sinks (issue 13, finding 10): whatever a verb hands `emit`, or writes to its io,
// reaches stdout and stderr with no control, bidi or invisible code point; each line it emits
// is one output line; `--json` parses back to the exact values. A property over any string.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { neutralisingIO, reportError } from '../../src/cli/cli.js';
import { emit, type CliIO } from '../../src/cli/commands/common.js';
import { LedgerError } from '../../src/errors.js';

const RUNS = process.env.SOAK === '1' ? 5_000 : 200;
const ACTS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff\u{e0000}-\u{e0fff}]|\p{Cs}/u;

function capture(): { io: CliIO; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const raw: CliIO = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, cwd: '/', isTTY: false, readStdin: async () => '' };
  return { io: neutralisingIO(raw), out: () => out, err: () => err };
}

const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('\x1b', '[2J', ']52;c;', '\x07', '\u009b', '\u009d', '\u202e', '\u2066', '\u2028', '\u0085', '\r', '\n', '\0', '\u{E0041}', 'proceed: ', 'a'), maxLength: 40 }),
);

describe('when a verb prints any string at all', () => {
  it('property: each emitted line is one inert output line', () => {
    fc.assert(
      fc.property(fc.array(anyString, { minLength: 1, maxLength: 6 }), (lines) => {
        const c = capture();
        emit(c.io, {}, null, lines);
        expect(c.out()).not.toMatch(ACTS);
        expect(c.out().split('\n')).toHaveLength(lines.length + 1);
      }),
      { numRuns: RUNS },
    );
  });

  it('property: --json carries the exact strings, with nothing a terminal acts on', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 5 }), anyString, { maxKeys: 4 }), (value) => {
        const c = capture();
        emit(c.io, { json: true }, { ok: true, value }, 'unused');
        expect(c.out()).not.toMatch(ACTS);
        expect(JSON.parse(c.out())).toStrictEqual(JSON.parse(JSON.stringify({ ok: true, value })));
        expect(JSON.parse(c.out()).value).toEqual(value);
      }),
      { numRuns: RUNS },
    );
  });

  it('property: an error quoting it is one inert line on stderr; its --json message is exact', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const c = capture();
        const code = reportError(new LedgerError('USAGE', `bad value "${s}"`), c.io, true);
        expect(code).toBe(2);
        expect(c.err()).not.toMatch(ACTS);
        expect(c.err().split('\n')).toHaveLength(2); // one line and its line feed
        expect(JSON.parse(c.out()).error.message).toBe(`bad value "${s}"`);
      }),
      { numRuns: RUNS },
    );
  });

  it('property: a direct write to stderr (a warning) is one inert line too', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const c = capture();
        c.io.stderr(`ledger: warning: ${s}\n`);
        expect(c.err()).not.toMatch(ACTS);
        expect(c.err().split('\n')).toHaveLength(2);
      }),
      { numRuns: RUNS },
    );
  });
});
