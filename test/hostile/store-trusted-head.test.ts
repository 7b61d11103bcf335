// Issue 13 finding 1 and issue 14 item 10 (SPEC 5): writers and `recover` build only on a HEAD
// whose key is pinned or their own, and never below the highest HEAD they published (the mark,
// kept in the per-user state directory, outside the ledger). Each refusal exits 3, names the
// cause, and leaves records.jsonl, HEAD and quarantine/ byte-identical.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readMark } from '../../src/store/head-guard.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { stateDirFrom } from '../../src/store/state-dir.js';
import { headForLines, signerFor } from '../helpers/gen-ledger.js';
import { initProject, runLedger, scratch, snapshot, type Run } from '../helpers/cli.js';

let p: Awaited<ReturnType<typeof initProject>>;
beforeEach(async () => {
  p = await initProject('guarded');
});
afterEach(() => p.cleanup());

const ledger = (args: string[], cwd = p.dir, env?: Record<string, string>) => runLedger(args, { cwd, env });
let n = 0;
const append = (cwd = p.dir, extra: string[] = []) => ledger(['append', 'handoff', '--agent', 'claude', '--op', 'op', '--exec', `e${n++}`, '--outcome', 'success', ...extra], cwd);
const ok = (r: Run) => expect(r.code, r.stderr).toBe(0);

/** The ledger's bytes, with quarantine/'s listing and contents: what a refusal must not change. */
function everything(ledgerDir: string) {
  const q = join(ledgerDir, 'quarantine');
  const quarantine = existsSync(q) ? readdirSync(q).map((f) => `${f}:${readFileSync(join(q, f)).toString('base64')}`) : null;
  return { ...snapshot(ledgerDir), quarantine, temps: readdirSync(ledgerDir).filter((f) => f.endsWith('.tmp')) };
}

const lines = (ledgerDir: string) => readFileSync(join(ledgerDir, 'records.jsonl'), 'utf8').split(/(?<=\n)/).filter((l) => l !== '');

/** Exit 3 with a one-line reason; and the same refusal under --json carries the code. */
function expectRefused(r: Run, message: RegExp) {
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('when a keyless attacker signs a HEAD at seq 1 with a throwaway key, then an honest writer appends', () => {
  let target = '';
  beforeEach(async () => {
    ok(await append());
    const h = JSON.parse((await append(p.dir, ['--json'])).stdout) as { id: string };
    target = h.id;
    ok(await ledger(['revoke', target, '--agent', 'claude', '--reason', 'evidence from the wrong branch']));
    // The attack (issue 13 finding 1): write access to .ledger/ only.
    writeFileSync(join(p.ledger, 'HEAD'), headForLines(lines(p.ledger).slice(0, 2), signerFor('mallory')).line);
  });

  it('the append is refused (exit 3, OP_UNTRUSTED_HEAD), naming the key, and nothing moves into quarantine/', async () => {
    const before = everything(p.ledger);
    const r = await append();
    expectRefused(r, /refusing to build on HEAD \(seq 1\): it is signed by key [A-Za-z0-9_-]{12}…, not this writer's key, and key [A-Za-z0-9_-]+ is not pinned in the trust file/);
    expect(everything(p.ledger)).toEqual(before);
    const j = await append(p.dir, ['--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'OP_UNTRUSTED_HEAD' } });
    expect(everything(p.ledger)).toEqual(before);
  });

  it('every other writer refuses the same way: revoke, start, append --batch, and recover (with or without a key)', async () => {
    const before = everything(p.ledger);
    for (const args of [
      ['revoke', target, '--agent', 'claude', '--reason', 'again'],
      ['start', 'item', '--agent', 'claude', '--summary', 'work'],
      ['append', '--batch', '--agent', 'claude'],
      ['recover'],
      ['recover', '--key', 'keys/harness.key'],
    ]) {
      const r = await runLedger(args, { cwd: p.dir, stdin: JSON.stringify({ kind: 'intent', logical_operation_id: 'o', execution_id: 'x', action: 'a' }) + '\n' });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr, args.join(' ')).toMatch(/OP_UNTRUSTED_HEAD|refusing to build on HEAD \(seq 1\)/);
      expect(everything(p.ledger), args.join(' ')).toEqual(before);
    }
  });

  it('a missing trust file does not help the attacker: the HEAD is still not the writer\'s own', async () => {
    unlinkSync(join(p.dir, 'keys', 'trust.json'));
    const before = everything(p.ledger);
    expectRefused(await append(), /the trust file cannot be read \(no trust file at /);
    expect(everything(p.ledger)).toEqual(before);
  });
});

describe('when HEAD is signed by a key the trust file pins (another writer of this ledger)', () => {
  it('the append builds on it; and with the writer\'s own HEAD a missing trust file is fine', async () => {
    const other = await ledger(['keygen', '--out', 'keys/ci.key', '--name', 'ci', '--json']);
    ok(other);
    const trust = JSON.parse(readFileSync(join(p.dir, 'keys', 'trust.json'), 'utf8')) as { keys: unknown[] };
    trust.keys.push((JSON.parse(other.stdout) as { entry: unknown }).entry);
    writeFileSync(join(p.dir, 'keys', 'trust.json'), JSON.stringify(trust));
    ok(await append(p.dir, ['--key', 'keys/ci.key']));
    ok(await append()); // the harness key builds on ci's HEAD: pinned
    unlinkSync(join(p.dir, 'keys', 'trust.json'));
    ok(await append()); // its own HEAD: no trust file needed
  });
});

describe('when an older genuine HEAD is copied back (a rollback below what this writer published)', () => {
  let old: { head: Buffer; size: number };
  beforeEach(async () => {
    ok(await append());
    old = { head: readFileSync(join(p.ledger, 'HEAD')), size: readFileSync(join(p.ledger, 'records.jsonl')).length };
    ok(await append());
    ok(await append());
  });

  for (const truncate of [true, false]) {
    it(`${truncate ? 'with records.jsonl truncated to it' : 'with the later records left past it'}: the append and recover are refused (exit 3, OP_ROLLBACK), nothing changed`, async () => {
      writeFileSync(join(p.ledger, 'HEAD'), old.head);
      if (truncate) truncateSync(join(p.ledger, 'records.jsonl'), old.size);
      const before = everything(p.ledger);
      expectRefused(await append(), /refusing to build on HEAD \(seq 1\): this writer has published through seq 3; the ledger was rolled back/);
      expect(everything(p.ledger)).toEqual(before);
      const rec = await ledger(['recover', '--json']);
      expect(rec.code).toBe(3);
      expect(JSON.parse(rec.stdout)).toMatchObject({ ok: false, error: { code: 'OP_ROLLBACK' } });
      expect(everything(p.ledger)).toEqual(before);
    });
  }
});

describe('when the ledger was forked at or above this writer\'s mark (another pinned key rewrote from an old copy)', () => {
  it('the append is refused (exit 3, OP_FORK) whether the fork is longer than the mark or just as long', async () => {
    const ci = await ledger(['keygen', '--out', 'keys/ci.key', '--name', 'ci', '--json']);
    const trust = JSON.parse(readFileSync(join(p.dir, 'keys', 'trust.json'), 'utf8')) as { keys: unknown[] };
    trust.keys.push((JSON.parse(ci.stdout) as { entry: unknown }).entry);
    writeFileSync(join(p.dir, 'keys', 'trust.json'), JSON.stringify(trust));
    ok(await append());
    const copy = join(p.dir, 'copy');
    cpSync(p.ledger, copy, { recursive: true });
    ok(await append()); // the harness's mark: seq 2
    for (const longer of [false, true]) {
      rmSync(p.ledger, { recursive: true });
      cpSync(copy, p.ledger, { recursive: true });
      // ci's writes go to a state directory of their own (another user, another machine).
      const ciState = mkdtempSync(join(tmpdir(), 'ledger-ci-state-'));
      for (let i = 0; i < (longer ? 2 : 1); i++) {
        const r = await runLedger(['append', 'handoff', '--key', 'keys/ci.key', '--agent', 'ci', '--op', 'fork', '--exec', `f${i}`, '--outcome', 'success'], { cwd: p.dir, env: { LEDGER_STATE_DIR: ciState } });
        ok(r);
      }
      rmSync(ciState, { recursive: true, force: true });
      const before = everything(p.ledger);
      expectRefused(await append(), /this writer published seq 2 as .*; the ledger was forked/);
      expect(everything(p.ledger)).toEqual(before);
    }
  });
});

describe('when one fixture is copied into two temp folders', () => {
  it('each copy keeps its own mark: appending to one never makes the other look rolled back', async () => {
    ok(await append());
    const a = scratch('ledger-copy-a-');
    const b = scratch('ledger-copy-b-');
    try {
      for (const d of [a.dir, b.dir]) cpSync(p.dir, d, { recursive: true });
      ok(await append(a.dir));
      ok(await append(a.dir));
      ok(await append(b.dir));
      ok(await append(p.dir));
    } finally {
      a.cleanup();
      b.cleanup();
    }
  });
});

describe('where the mark is kept', () => {
  it('in $LEDGER_STATE_DIR, else $XDG_STATE_HOME/handoff-ledger, else ~/.local/state/handoff-ledger, from the caller\'s environment', async () => {
    expect(stateDirFrom({ LEDGER_STATE_DIR: '/s', XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/s');
    expect(stateDirFrom({ LEDGER_STATE_DIR: '', XDG_STATE_HOME: '/x', HOME: '/h' })).toBe('/x/handoff-ledger');
    expect(stateDirFrom({ HOME: '/h' })).toBe('/h/.local/state/handoff-ledger');
    const xdg = mkdtempSync(join(tmpdir(), 'ledger-xdg-'));
    try {
      ok(await ledger(['append', 'handoff', '--agent', 'claude', '--op', 'op', '--exec', 'x1', '--outcome', 'success'], p.dir, { LEDGER_STATE_DIR: '', XDG_STATE_HOME: xdg }));
      const head = JSON.parse(readFileSync(join(p.ledger, 'HEAD'), 'utf8')) as { genesis: string; seq: number; tail: string; sig: { key: string } };
      const mark = readMark(join(xdg, 'handoff-ledger'), ledgerPaths(p.ledger), head.genesis, head.sig.key);
      expect(mark).toMatchObject({ seq: head.seq, tail: head.tail });
      // Nothing of it lives in the ledger directory, which an attacker can write.
      expect(readdirSync(p.ledger).sort()).toEqual(expect.not.arrayContaining(['marks', 'chain']));
    } finally {
      rmSync(xdg, { recursive: true, force: true });
    }
  });

  it('a mark file that does not parse is refused (exit 3, OP_STATE), never ignored', async () => {
    ok(await append());
    const head = JSON.parse(readFileSync(join(p.ledger, 'HEAD'), 'utf8')) as { genesis: string; sig: { key: string } };
    const state = process.env.LEDGER_STATE_DIR!;
    const marks = readdirSync(join(state, 'marks'));
    expect(readMark(state, ledgerPaths(p.ledger), head.genesis, head.sig.key)).not.toBeNull();
    const mine = marks.find((m) => readFileSync(join(state, 'marks', m), 'utf8').includes(head.genesis))!;
    writeFileSync(join(state, 'marks', mine), '{"torn');
    const before = everything(p.ledger);
    const r = await append();
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the writer mark .* is not JSON/);
    expect(everything(p.ledger)).toEqual(before);
    unlinkSync(join(state, 'marks', mine));
    ok(await append());
  });
});
