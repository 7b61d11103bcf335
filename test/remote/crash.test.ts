// A writer that dies after its push and before its local copy took the records (SPEC 11: a
// record is published exactly when the push succeeded). The death is the file-operation seam
// refusing the first local write after the push, so nothing local is written, as with SIGKILL;
// the next command takes the record back from the remote: nothing is lost, nothing doubled. The
// second case is a real SIGKILL, held at that point by a post-receive hook on the remote.
import { afterEach, describe, expect, it } from 'vitest';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { Ledger } from '../../src/ledger.js';
import { snapshot } from '../helpers/cli.js';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytes, finished, git, records, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when a writer dies between its push and its local update', () => {
  it('the next command recovers the published record from the remote, once', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    const before = snapshot(ann.ledger);
    let died = false;
    const dying: FileOps = {
      ...realFileOps,
      open: (p, flags, mode) => {
        if (!died && p.endsWith('records.jsonl') && flags === 'r+') {
          died = true;
          throw Object.assign(new Error('killed'), { code: 'EIO' });
        }
        return realFileOps.open(p, flags, mode);
      },
    };
    const key = join(ann.dir, 'keys', 'harness.key');
    const open = (ops: FileOps) => Ledger.open({ dir: ann.ledger, key, env: ann.env, ops });
    expect(() => open(dying).append({ kind: 'handoff', agent: 'ann', logical_operation_id: 'op1', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).toThrow();
    expect(died).toBe(true);
    // Published on the remote, not in the local copy.
    expect(snapshot(ann.ledger)).toEqual(before);
    expect(git(['--git-dir', w.bare, 'ls-tree', '-r', '--name-only', REF])).toContain('records/000000/000000000001');

    // The next write takes seq 1 from the remote first, then writes seq 2.
    const next = open(realFileOps).append({ kind: 'handoff', agent: 'ann', logical_operation_id: 'op2', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] });
    expect(next.records[0].seq).toBe(2);
    // A retry of the first one is the record that is there, not a second one (retry identity).
    const retry = open(realFileOps).append({ kind: 'handoff', agent: 'ann', logical_operation_id: 'op1', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] });
    expect(retry.records[0]).toMatchObject({ seq: 1, existing: true });
    expect(records(ann).map((r) => r.logical_operation_id ?? null)).toEqual([null, 'op1', 'op2']);
    expect((await ben.run(['sync'])).code).toBe(0);
    expect(bytes(ben)).toEqual(bytes(ann));
    expect((await ann.run(['audit'])).code).toBe(0);
  });
});

describe('when the writer process is SIGKILLed after the remote took its push and before it wrote its copy', () => {
  it('the next command recovers the record from the remote: nothing lost, nothing doubled', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    // The remote's post-receive hook runs after the ref moved: it says so, then holds the push
    // open until the test lets it go, so the writer is killed exactly there (no timing).
    const mark = join(w.root, 'pushed');
    const fifo = join(w.root, 'release');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    writeFileSync(join(w.bare, 'hooks', 'post-receive'), `#!/bin/sh\ncat >/dev/null\ntouch '${mark}'\ncat '${fifo}' >/dev/null\n`, { mode: 0o755 });
    const before = snapshot(ann.ledger);
    const child = ann.spawn(['append', 'handoff', '--op', 'killed', '--exec', 'e1', '--outcome', 'success']);
    const exited = finished(child);
    while (!existsSync(mark)) await new Promise((r) => setImmediate(r));
    child.kill('SIGKILL');
    const run = await exited;
    expect(run.code).toBe(-1); // killed: no exit code
    spawnSync('sh', ['-c', `echo go > '${fifo}'`]);
    rmSync(join(w.bare, 'hooks', 'post-receive'));
    expect(snapshot(ann.ledger)).toEqual(before);

    const next = await ann.run(['append', 'handoff', '--op', 'after', '--exec', 'e1', '--outcome', 'success', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout).seq).toBe(2);
    const retry = await ann.run(['append', 'handoff', '--op', 'killed', '--exec', 'e1', '--outcome', 'success', '--json']);
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ seq: 1 });
    expect(records(ann).map((r) => r.logical_operation_id ?? null)).toEqual([null, 'killed', 'after']);
    expect((await ben.run(['sync'])).code).toBe(0);
    expect(bytes(ben)).toEqual(bytes(ann));
    expect((await ann.run(['audit'])).code).toBe(0);
  });
});
