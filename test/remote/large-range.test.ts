// A join or sync that takes many records at once (tree.ts recordOids: the shards are listed and
// checked whole, the blobs read by id) takes exactly the remote's bytes, and refuses a tree
// that is not exactly one regular blob per record: a record missing from a shard (exit 11), and
// (issue 23 finding 7) an extra entry in a shard (exit 10), which every honest writer would
// otherwise carry forward.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLedger } from '../helpers/cli.js';
import { recordPath } from '../../src/remote/tree.js';
import { bytes, git, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

const COUNT = 1200; // seq 1-1200: two shards, both read by id
const payloads = Array.from({ length: COUNT }, (_, i) => JSON.stringify({ kind: 'handoff', logical_operation_id: `op-${i}`, execution_id: 'e', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] })).join('\n') + '\n';

async function published(): Promise<World> {
  w = world(['ann', 'ben']);
  const [ann] = w.machines;
  expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
  const r = await runLedger(['append', '--batch'], { cwd: ann.dir, env: ann.env, stdin: payloads });
  expect(r.code, r.stderr).toBe(0);
  return w;
}

/** Replaces the ref by a commit whose tree is the tip's with `edit` applied to a scratch index. */
function rewriteTip(edit: (gitEnv: Record<string, string>) => void): void {
  const scratch = mkdtempSync(join(tmpdir(), 'ledger-index-'));
  try {
    const env = { PATH: process.env.PATH ?? '', HOME: scratch, GIT_DIR: w.bare, GIT_INDEX_FILE: join(scratch, 'index'), GIT_WORK_TREE: scratch, GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' };
    const run = (args: string[], input = '') => {
      const r = spawnSync('git', args, { env, input, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout.trim();
    };
    run(['read-tree', REF]);
    edit(env);
    const commit = run(['commit-tree', run(['write-tree']), '-p', REF, '-m', 'x']);
    git(['--git-dir', w.bare, 'update-ref', REF, commit]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function gitIn(env: Record<string, string>, args: string[], input = ''): string {
  const r = spawnSync('git', args, { env, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

describe(`when a machine joins a ledger of ${COUNT} records (two shards)`, () => {
  it('it takes exactly the remote ledger, and a sync after more writes too', async () => {
    await published();
    const [ann, ben] = w.machines;
    const j = await ben.run(['init', '--remote', w.url, '--json']);
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout).adopted).toBe(COUNT + 1);
    expect(bytes(ben)).toEqual(bytes(ann));
    expect((await runLedger(['append', '--batch'], { cwd: ann.dir, env: ann.env, stdin: payloads.replace(/op-/g, 'more-') })).code).toBe(0);
    const s = await ben.run(['sync', '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).adopted).toBe(COUNT);
    expect(bytes(ben)).toEqual(bytes(ann));
  });

  it('a record missing from its shard is refused (exit 11), and so is an extra entry (exit 10); nothing is copied', async () => {
    await published();
    const [, ben] = w.machines;
    const tip = git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
    // An extra blob beside the records of shard 0.
    rewriteTip((env) => {
      const oid = gitIn(env, ['hash-object', '-w', '--stdin'], 'planted\n');
      gitIn(env, ['update-index', '--add', '--cacheinfo', `100644,${oid},records/000000/zzz`]);
    });
    const extra = await ben.run(['init', '--remote', w.url, '--json']);
    expect(extra.code, extra.stdout).toBe(10);
    expect(JSON.parse(extra.stdout).error.message).toContain('records/000000/zzz');
    expect(existsSync(join(ben.ledger, 'HEAD'))).toBe(false);
    git(['--git-dir', w.bare, 'update-ref', REF, tip]);

    rewriteTip((env) => gitIn(env, ['update-index', '--force-remove', recordPath(700)]));
    const r = await ben.run(['init', '--remote', w.url, '--json']);
    expect(r.code, r.stdout).toBe(11);
    expect(JSON.parse(r.stdout).error.message).toContain('seq 700 is missing');
    expect(existsSync(join(ben.ledger, 'HEAD'))).toBe(false);
  });
});
