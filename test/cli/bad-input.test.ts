// One table of bad input thrown at every core verb: each row exits with its documented code,
// says why in one line on stderr, and leaves records.jsonl and HEAD byte-identical.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initProject, runLedger, snapshot } from '../helpers/cli.js';

let project: Awaited<ReturnType<typeof initProject>>;
const env = { LEDGER_AGENT: 'tester' };
const ok = ['append', 'handoff', '--op', 'op_1', '--exec', 'exec_1', '--outcome', 'success'];

beforeAll(async () => {
  project = await initProject();
  writeFileSync(join(project.dir, 'evidence.txt'), 'real evidence\n');
  // One good record so the table runs against a ledger with history.
  const r = await runLedger(ok, { cwd: project.dir, env });
  expect(r.code).toBe(0);
});
afterAll(() => project.cleanup());

interface Row { name: string; args: string[]; code: number; stdin?: string; env?: Record<string, string>; match?: RegExp }

const rows: Row[] = [
  { name: 'an operation id with a space', args: ['append', 'handoff', '--op', 'bad id', '--exec', 'e', '--outcome', 'success'], code: 2, match: /--op must be/ },
  { name: 'an operation id over 128 chars', args: ['append', 'handoff', '--op', 'x'.repeat(129), '--exec', 'e', '--outcome', 'success'], code: 2, match: /--op/ },
  { name: 'a missing --op', args: ['append', 'handoff', '--exec', 'e', '--outcome', 'success'], code: 2, match: /--op is required/ },
  { name: 'a missing --exec', args: ['append', 'handoff', '--op', 'o', '--outcome', 'success'], code: 2, match: /--exec is required/ },
  { name: 'an unknown outcome', args: ['append', 'handoff', '--op', 'o', '--exec', 'e', '--outcome', 'done'], code: 2, match: /--outcome must be one of/ },
  { name: '--op given twice', args: [...ok, '--op', 'other'], code: 2, match: /given 2 times/ },
  { name: 'evidence that does not exist', args: [...ok, '--evidence', 'schema=missing.sql'], code: 2, match: /no such file/ },
  { name: 'evidence without NAME=', args: [...ok, '--evidence', 'evidence.txt'], code: 2, match: /NAME=SOURCE/ },
  { name: 'evidence with a bad name', args: [...ok, '--evidence', 'bad name=evidence.txt'], code: 2, match: /name "bad name"/ },
  { name: 'evidence named twice', args: [...ok, '--evidence', 'a=evidence.txt', '--evidence', 'a=evidence.txt'], code: 2, match: /given twice/ },
  { name: 'file: evidence naming a directory', args: [...ok, '--evidence', 'd=file:.'], code: 2, match: /a directory/ },
  { name: 'a malformed sha256 evidence', args: [...ok, '--evidence', 'x=sha256:ABC'], code: 2, match: /64 lowercase hex/ },
  { name: 'git evidence outside a repository', args: [...ok, '--evidence', 'c=git:HEAD'], code: 2, match: /does not name a commit/ },
  { name: 'an invariant that is neither ok nor fail', args: [...ok, '--invariant', 'tests=maybe'], code: 2, match: /expected ok or fail/ },
  { name: 'a dependency with a bad id', args: [...ok, '--depends-on', 'bad id'], code: 2, match: /--depends-on/ },
  { name: 'supersedes that is not a record id', args: [...ok, '--supersedes', 'abc'], code: 2, match: /record id/ },
  { name: 'a note over 4096 chars', args: [...ok, '--note', 'n'.repeat(4097)], code: 2, match: /--note/ },
  { name: 'an unknown flag', args: [...ok, '--bogus', 'x'], code: 2, match: /Unknown option/i },
  { name: 'no agent anywhere', args: ok, env: {}, code: 2, match: /--agent is required/ },
  { name: 'an agent with a slash', args: [...ok, '--agent', 'a/b'], code: 2, match: /--agent must be/ },
  { name: 'a kind other than handoff', args: ['append', 'checkpoint', '--op', 'o'], code: 2, match: /append writes "handoff"/ },
  { name: 'append with no kind', args: ['append'], code: 2, match: /needs a kind/ },
  { name: 'a bad --wait duration', args: [...ok, '--wait', 'soon'], code: 2, match: /duration/ },
  { name: 'a key file that does not exist', args: [...ok, '--key', 'nope.key'], code: 2, match: /no key file/ },
  { name: 'a ledger directory that does not exist', args: [...ok, '--dir', 'elsewhere'], code: 2, match: /no ledger at/ },
  { name: 'batch: not JSON', args: ['append', '--batch'], stdin: '{"kind":"handoff",\n', code: 2, match: /not valid JSON/ },
  { name: 'batch: half good, half bad', args: ['append', '--batch'], stdin: JSON.stringify({ kind: 'handoff', logical_operation_id: 'o', execution_id: 'e2', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) + '\n' + JSON.stringify({ kind: 'handoff', logical_operation_id: 'o', execution_id: 'e3', outcome: 'nope', evidence: {}, invariants: {}, depends_on: [] }) + '\n', code: 2, match: /stdin line 2: 1 problem: \$\.outcome/ },
  { name: 'batch: a duplicate key', args: ['append', '--batch'], stdin: '{"kind":"revoke","kind":"handoff"}\n', code: 2, match: /duplicate key "kind"/ },
  { name: 'batch: an unknown field', args: ['append', '--batch'], stdin: JSON.stringify({ kind: 'revoke', target: 'sha256:' + '0'.repeat(64), reason: 'r', extra: 1 }) + '\n', code: 2, match: /extra: unknown field/ },
  { name: 'batch: envelope fields in a payload', args: ['append', '--batch'], stdin: JSON.stringify({ kind: 'revoke', target: 'sha256:' + '0'.repeat(64), reason: 'r', seq: 5 }) + '\n', code: 2, match: /seq: unknown field/ },
  { name: 'batch: a genesis payload', args: ['append', '--batch'], stdin: '{"kind":"genesis","nonce":"AAAAAAAAAAAAAAAAAAAAAA"}\n', code: 2, match: /genesis/ },
  { name: 'batch: an array instead of an object', args: ['append', '--batch'], stdin: '[1,2]\n', code: 2, match: /JSON object/ },
  { name: 'batch: a fractional number', args: ['append', '--batch'], stdin: JSON.stringify({ kind: 'revoke', target: 'sha256:' + '0'.repeat(64), reason: 'r' }).replace('}', ',"n":1.5}') + '\n', code: 2 },
  { name: 'batch: nothing on stdin', args: ['append', '--batch'], stdin: '', code: 2, match: /no payloads/ },
  { name: 'batch: with a handoff flag', args: ['append', '--batch', '--op', 'o'], stdin: '{}\n', code: 2, match: /does not apply/ },
  { name: 'init on an existing ledger', args: ['init'], code: 2, match: /already exists/ },
  { name: 'show: not an id or a seq', args: ['show', 'latest'], code: 2, match: /show expects a record: a seq number, HEAD, or a record id/ },
  { name: 'show: a seq past HEAD', args: ['show', '99'], code: 2, match: /no published record at seq 99/ },
  { name: 'show: an id not in the ledger', args: ['show', 'sha256:' + 'a'.repeat(64)], code: 2, match: /no published record/ },
  { name: 'log: an unknown kind', args: ['log', '--kind', 'memo'], code: 2, match: /--kind must be one of/ },
  { name: 'log: a bad limit', args: ['log', '--limit', '-1'], code: 2 },
  { name: 'keygen without --out', args: ['keygen'], code: 2, match: /--out is required/ },
  { name: 'keygen over an existing file', args: ['keygen', '--out', 'keys/harness.key'], code: 2, match: /never overwritten/ },
  { name: 'an unknown command', args: ['frobnicate'], code: 2, match: /unknown command/ },
];

describe('bad input at every core verb', () => {
  for (const row of rows) {
    it(`refuses ${row.name} with exit ${row.code} and changes nothing`, async () => {
      const before = snapshot(project.ledger);
      const r = await runLedger(row.args, { cwd: project.dir, env: row.env ?? env, stdin: row.stdin });
      expect(r.code, r.stderr).toBe(row.code);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^ledger: /);
      if (row.match) expect(r.stderr).toMatch(row.match);
      expect(snapshot(project.ledger)).toEqual(before);
    });
  }

  it('with --json, an error is one JSON object on stdout naming its code', async () => {
    const r = await runLedger([...ok.slice(0, -1), 'done', '--json'], { cwd: project.dir, env });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, error: { code: 'USAGE', message: expect.stringMatching(/--outcome/), hint: 'see `ledger append --help`' } });
  });

  it('refuses a key file that others can read with exit 3, as ssh does', async () => {
    const key = join(project.dir, 'keys/harness.key');
    const before = snapshot(project.ledger);
    chmodSync(key, 0o644);
    try {
      const r = await runLedger(ok, { cwd: project.dir, env });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/mode 0644; others can read it.*chmod 600/);
      expect(snapshot(project.ledger)).toEqual(before);
    } finally {
      chmodSync(key, 0o600);
    }
  });

  it('refuses a key file with an unknown field, with the reason', async () => {
    const bad = join(project.dir, 'bad.key');
    writeFileSync(bad, JSON.stringify({ v: 1, alg: 'ed25519', name: 'x', secret_key: 'A'.repeat(43), extra: 1 }), { mode: 0o600 });
    const before = snapshot(project.ledger);
    const r = await runLedger([...ok, '--key', bad], { cwd: project.dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/an unknown field \(expected only v, alg, name, secret_key\)/);
    expect(r.stderr).not.toMatch(/extra/);
    expect(snapshot(project.ledger)).toEqual(before);
  });

  it('treats an empty LEDGER_DIR as unset', async () => {
    const r = await runLedger(['head', '--json'], { cwd: project.dir, env: { LEDGER_DIR: '' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).seq).toBe(1);
  });
});

describe('values that look like numbers', () => {
  it('reach the record exactly as typed (cac would read 007 as 7 and 1e3 as 1000)', async () => {
    const p = await initProject();
    try {
      const r = await runLedger(['append', 'handoff', '--op', '007', '--exec', '1e3', '--outcome', 'success', '--note', '0x10', '--json'], { cwd: p.dir, env });
      expect(r.code, r.stderr).toBe(0);
      const shown = await runLedger(['show', String(JSON.parse(r.stdout).seq), '--json'], { cwd: p.dir });
      expect(JSON.parse(shown.stdout).record).toMatchObject({ logical_operation_id: '007', execution_id: '1e3', note: '0x10' });
    } finally {
      p.cleanup();
    }
  });

  it('an empty value is refused as empty, not read as 0', async () => {
    const before = snapshot(project.ledger);
    const r = await runLedger(['append', 'handoff', '--op', '', '--exec', 'e', '--outcome', 'success'], { cwd: project.dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--op needs a value/);
    expect(snapshot(project.ledger)).toEqual(before);
  });
});
