// A writer that dies after its push and before its local copy took the records (SPEC 11: a
// record is published exactly when the push succeeded). The death is the file-operation seam
// refusing the first local write after the push, so nothing local is written, as with SIGKILL;
// the next command takes the record back from the remote: nothing is lost, nothing doubled.
import { afterEach, describe, expect, it } from 'vitest';
import { realFileOps, type FileOps } from '../../src/fs/ops.js';
import { Ledger } from '../../src/ledger.js';
import { snapshot } from '../helpers/cli.js';
import { bytes, git, records, REF, world, type World } from './kit.js';
import { join } from 'node:path';

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
