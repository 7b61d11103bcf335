// One exit-code table (src/errors.ts EXIT): the auditor's layers, the gate, `render --check`,
// the help text and the table in docs/guarantees.md all derive from it, and advice reaches the
// user through an error's structured hint, never from its message text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYER_EXIT, LAYER_NAMES } from '../../audit/findings.js';
import { reportError } from '../../src/cli/cli.js';
import { EXIT, EXIT_MEANINGS, LedgerError, exitCodeFor } from '../../src/errors.js';
import { ROOT, runLedger } from '../helpers/cli.js';

describe('when the exit codes are read from the one table', () => {
  it('lists every code of EXIT once, in EXIT_MEANINGS', () => {
    expect(EXIT_MEANINGS.map((e) => e.code).sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
  });

  it('gives the audit layers their codes from it, in SPEC 8 order', () => {
    expect(LAYER_NAMES.map((l) => LAYER_EXIT[l])).toEqual([EXIT.schema, EXIT.linkage, EXIT.signature, EXIT.keyPin, EXIT.freshness]);
  });

  it('maps error codes by prefix: USAGE and INPUT_* to usage, OP_* to operational, the rest internal', () => {
    expect(exitCodeFor('USAGE')).toBe(EXIT.usage);
    expect(exitCodeFor('INPUT_SCHEMA')).toBe(EXIT.usage);
    expect(exitCodeFor('OP_CORRUPT')).toBe(EXIT.operational);
    expect(exitCodeFor('INTERNAL')).toBe(EXIT.internal);
  });

  it('matches the table of docs/guarantees.md row for row', () => {
    const page = readFileSync(join(ROOT, 'docs', 'guarantees.md'), 'utf8');
    const at = page.indexOf('\n## Exit codes\n');
    expect(at, 'docs/guarantees.md has an "Exit codes" section').toBeGreaterThan(0);
    // The section's own table: up to the next heading (its subsection lists failures by code).
    const section = page.slice(at + 1, page.indexOf('\n#', at + 2));
    const rows = [...section.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => ({ code: Number(m[1]), meaning: m[2] }));
    expect(rows).toEqual(EXIT_MEANINGS.map((e) => ({ code: e.code, meaning: e.meaning })));
  });

  it('prints every code and meaning in `ledger --help`', async () => {
    const r = await runLedger(['--help'], { cwd: ROOT });
    expect(r.code).toBe(0);
    for (const e of EXIT_MEANINGS) expect(r.stdout).toContain(`${String(e.code).padEnd(3)} ${e.meaning}`);
  });
});

function report(e: unknown, json = false, verb?: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (t: string) => (out.stdout += t), stderr: (t: string) => (out.stderr += t), env: {}, cwd: ROOT, readStdin: async () => '', isTTY: false };
  const code = reportError(e, io, json, verb);
  return { code, ...out };
}

describe('when an error is reported', () => {
  it('prints the fact, then the hint after a semicolon, on one line, and both in --json', () => {
    const r = report(new LedgerError('OP_CORRUPT', 'HEAD is not canonical JSON', { path: 'HEAD' }, 'run `ledger audit` to see what happened'), true);
    expect(r.code).toBe(EXIT.operational);
    expect(r.stderr).toBe('ledger: HEAD is not canonical JSON; run `ledger audit` to see what happened\n');
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, error: { code: 'OP_CORRUPT', message: 'HEAD is not canonical JSON', hint: 'run `ledger audit` to see what happened' } });
  });

  it('takes no advice from the message text: a message that names a command still gets the code\'s advice', () => {
    const r = report(new LedgerError('USAGE', 'the word `ledger init` in a message is just text'), false, 'append');
    expect(r.stderr).toBe('ledger: the word `ledger init` in a message is just text; see `ledger append --help`\n');
  });

  it('adds no advice to an operational error without a hint', () => {
    expect(report(new LedgerError('OP_LOCK_TIMEOUT', 'the lock is held')).stderr).toBe('ledger: the lock is held\n');
  });
});

describe('when the library refuses', () => {
  it('states the fact in the message and keeps the advice in the hint', async () => {
    const { Ledger } = await import('../../src/ledger.js');
    let err: unknown;
    try {
      Ledger.open({ dir: join(ROOT, 'test', '.scratch', 'no-such-ledger') }).head();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    const e = err as LedgerError;
    expect(e.code).toBe('INPUT_NOT_FOUND');
    expect(e.message).not.toMatch(/ledger init|--dir/);
    expect(e.hint).toMatch(/`ledger init`/);
  });
});
