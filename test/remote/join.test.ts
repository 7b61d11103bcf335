// Joining a remote and what lands on it (SPEC 11): the genesis published by the first machine,
// the ledger taken (verified) by the next, one single-parent commit per publication, and the
// ref's tree alone rebuilding records.jsonl and HEAD byte for byte.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLedger, snapshot } from '../helpers/cli.js';
import { bytes, git, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when two machines join one bare remote by path', () => {
  it('the first publishes its genesis, the second takes the same bytes, and both write through the ref', async () => {
    w = world(['alice', 'bob']);
    const [a, b] = w.machines;
    const ja = await a.run(['init', '--remote', w.url, '--json']);
    expect(ja.code, ja.stderr).toBe(0);
    expect(JSON.parse(ja.stdout)).toMatchObject({ ok: true, created: true, seq: 0 });
    const jb = await b.run(['init', '--remote', w.url, '--json']);
    expect(jb.code, jb.stderr).toBe(0);
    expect(JSON.parse(jb.stdout)).toMatchObject({ ok: true, created: false, adopted: 1 });
    expect(bytes(b)).toEqual(bytes(a));

    expect((await a.run(['start', 'item-a', '--summary', 'a'])).code).toBe(0);
    expect((await b.run(['start', 'item-b', '--summary', 'b'])).code).toBe(0);
    expect((await a.run(['checkpoint', 'item-a', '--done', 'd', '--state', 's', '--next', 'n'])).code).toBe(0);
    expect((await b.run(['finish', 'item-b', '--done', 'd', '--state', 's', '--next', 'n', '--outcome', 'success', '--invariant', 'tests=ok'])).code).toBe(0);
    expect((await a.run(['append', 'handoff', '--op', 'op1', '--exec', 'e1', '--outcome', 'success', '--invariant', 'x=ok'])).code).toBe(0);
    expect((await b.run(['sync'])).code).toBe(0);
    expect((await a.run(['sync'])).code).toBe(0);
    expect(bytes(a)).toEqual(bytes(b));
    for (const m of [a, b]) {
      const audit = await m.run(['audit', '--json']);
      expect(audit.code, audit.stdout).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ ok: true, checked: 6 });
    }
    // One commit per publication, each with exactly one parent (genesis none): a line.
    const parents = git(['--git-dir', w.bare, 'log', '--format=%H %P', REF]).trim().split('\n').map((l) => l.trim().split(' ').length - 1);
    expect(parents).toEqual([1, 1, 1, 1, 1, 0]);
  });
});

describe('when the ref is read with git cat-file alone, in a fresh repository', () => {
  it('its blobs in seq order and its HEAD are records.jsonl and HEAD, byte for byte', async () => {
    w = world(['alice']);
    const [a] = w.machines;
    expect((await a.run(['init', '--remote', w.url])).code).toBe(0);
    for (let i = 0; i < 4; i++) expect((await a.run(['append', 'handoff', '--op', `op${i}`, '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    const fresh = join(w.root, 'fresh.git');
    git(['init', '--quiet', '--bare', fresh]);
    git(['--git-dir', fresh, 'fetch', '--quiet', w.bare, `${REF}:${REF}`]);
    const paths = git(['--git-dir', fresh, 'ls-tree', '-r', '--name-only', REF]).trim().split('\n');
    expect(paths).toEqual(['HEAD', 'checkpoint', ...[0, 1, 2, 3, 4].map((s) => `records/000000/${String(s).padStart(12, '0')}`)]);
    // SPEC 13: the checkpoint beside HEAD is the local copy's, byte for byte.
    expect(git(['--git-dir', fresh, 'cat-file', 'blob', `${REF}:checkpoint`])).toBe(readFileSync(join(a.dir, '.ledger', 'checkpoint'), 'utf8'));
    const rebuilt = paths.slice(2).map((p) => git(['--git-dir', fresh, 'cat-file', 'blob', `${REF}:${p}`])).join('');
    expect(rebuilt).toBe(bytes(a).records);
    expect(git(['--git-dir', fresh, 'cat-file', 'blob', `${REF}:HEAD`])).toBe(bytes(a).head);
  });
});

describe('when the host refuses the custom ref (a pre-receive hook)', () => {
  it('init --remote stops with exit 3, says why and names the fallback ref; that ref works', async () => {
    w = world(['alice']);
    const [a] = w.machines;
    const hook = join(w.bare, 'hooks', 'pre-receive');
    mkdirSync(join(w.bare, 'hooks'), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/handoff/*) echo "custom refs are not allowed" >&2; exit 1;; esac; done\n');
    chmodSync(hook, 0o755);
    const r = await a.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(3);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe('OP_REMOTE_REFUSED');
    expect(err.hint).toContain('refs/heads/handoff-ledger');
    expect(snapshot(a.ledger)).toEqual({ records: null, head: null });
    const ok = await a.run(['init', '--remote', w.url, '--remote-ref', 'refs/heads/handoff-ledger']);
    expect(ok.code, ok.stderr).toBe(0);
    expect((await a.run(['start', 'x', '--summary', 's'])).code).toBe(0);
    expect(git(['--git-dir', w.bare, 'rev-parse', 'refs/heads/handoff-ledger:HEAD'])).toBeTruthy();
  });
});

describe('when a batch of many records is published at once', () => {
  it('they land as one commit whose blobs git wrote, in shards of 1000', async () => {
    w = world(['alice', 'bob']);
    const [a, b] = w.machines;
    expect((await a.run(['init', '--remote', w.url])).code).toBe(0);
    const payloads = Array.from({ length: 1005 }, (_, i) => JSON.stringify({ kind: 'handoff', logical_operation_id: `op${i}`, execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).join('\n') + '\n';
    const r = await runLedger(['append', '--batch'], { cwd: a.dir, env: a.env, stdin: payloads });
    expect(r.code, r.stderr).toBe(0);
    const names = git(['--git-dir', w.bare, 'ls-tree', '--name-only', `${REF}:records`]).trim().split('\n');
    expect(names).toEqual(['000000', '000001']);
    expect(git(['--git-dir', w.bare, 'rev-list', '--count', REF]).trim()).toBe('2');
    expect((await b.run(['init', '--remote', w.url])).code).toBe(0);
    expect(bytes(b)).toEqual(bytes(a));
  });
});
