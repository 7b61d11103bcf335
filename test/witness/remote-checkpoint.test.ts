// SPEC 13 across machines: the checkpoint travels beside HEAD in the ref's tree; a machine that
// takes the records takes it too, after checking it is HEAD's (its key, its size) and that its
// root is the records' root. A checkpoint someone planted on the ref is refused before anything
// is written (exit 11; a folder there is not the ledger's shape, exit 10).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSecretKeyFile } from '../../src/keys/trust.js';
import { createSigner } from '../../src/sign.js';
import { logNoteSigner } from '../../src/store/checkpoint.js';
import { formatCheckpoint, ledgerOrigin } from '../../src/tlog/checkpoint.js';
import { leafHash } from '../../src/tlog/hash.js';
import { signNote } from '../../src/tlog/note.js';
import { projectState } from '../helpers/project-state.js';
import { git, REF, world, type World } from '../remote/kit.js';

let w: World;
afterEach(() => w?.cleanup());

const refBlob = (path: string) => git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:${path}`]);

/** Puts a commit on the ref whose root tree has `entry` at `checkpoint` instead (plumbing, no key). */
function replaceCheckpoint(entry: { mode: string; type: string; oid: string } | null) {
  const tree = git(['--git-dir', w.bare, 'ls-tree', `${REF}^{tree}`]).split('\n').filter((l) => l && !l.endsWith('\tcheckpoint'));
  if (entry) tree.push(`${entry.mode} ${entry.type} ${entry.oid}\tcheckpoint`);
  const newTree = plumb(['mktree'], tree.join('\n') + '\n');
  const commit = plumb(['commit-tree', newTree, '-p', REF, '-m', 'x'], '');
  git(['--git-dir', w.bare, 'update-ref', REF, commit]);
}

function plumb(args: string[], input: string): string {
  const r = spawnSync('git', ['--git-dir', w.bare, ...args], { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/tmp', GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

describe('when machines share a ledger through a remote', () => {
  it('each publication carries its HEAD\'s checkpoint, and every machine that takes the records keeps it byte for byte', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    expect(refBlob('checkpoint')).toBe(readFileSync(join(ann.ledger, 'checkpoint'), 'utf8'));
    expect((await ann.run(['start', 'item', '--summary', 's'])).code).toBe(0);
    expect((await ben.run(['init', '--remote', w.url])).code).toBe(0);
    expect(readFileSync(join(ben.ledger, 'checkpoint'), 'utf8')).toBe(refBlob('checkpoint'));
    expect(readFileSync(join(ben.ledger, 'tree'))).toEqual(readFileSync(join(ann.ledger, 'tree')));
    expect((await ben.run(['note', 'item', '--text', 'from ben'])).code).toBe(0);
    expect((await ann.run(['sync'])).code).toBe(0);
    expect(readFileSync(join(ann.ledger, 'checkpoint'), 'utf8')).toBe(refBlob('checkpoint'));
    expect(readFileSync(join(ann.ledger, 'tree'))).toEqual(readFileSync(join(ben.ledger, 'tree')));
    const audit = await ann.run(['audit']);
    expect(audit.code, audit.stdout).toBe(0);
    expect(audit.stdout + audit.stderr).not.toContain('checkpoint');
  });

  it('a planted checkpoint (junk, unsigned, another root, a folder) is refused before anything is written', async () => {
    w = world(['ann', 'ben', 'cid']);
    const [ann, ben, cid] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ann.run(['start', 'item', '--summary', 's'])).code).toBe(0);
    expect((await ben.run(['init', '--remote', w.url])).code).toBe(0);
    const head = JSON.parse(refBlob('HEAD'));
    const origin = ledgerOrigin(head.genesis);
    const blob = (text: string) => plumb(['hash-object', '-w', '--stdin'], text);
    // Another root signed with the very key of HEAD: only a key holder could, and it is still refused.
    const seed = parseSecretKeyFile(readFileSync(join(ann.dir, 'keys', 'harness.key'), 'utf8')).seed;
    const otherRoot = signNote(formatCheckpoint({ origin, size: head.seq + 1, root: leafHash('not the records') }), [logNoteSigner(origin, createSigner(seed))]);
    const unsigned = signNote(formatCheckpoint({ origin, size: head.seq + 1, root: leafHash('x') }), [logNoteSigner(origin, createSigner(new Uint8Array(32).fill(9)))]);
    const good = git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
    const cases: [string, { mode: string; type: string; oid: string }, number][] = [
      ['junk', { mode: '100644', type: 'blob', oid: blob('not a note\n') }, 11],
      ['unsigned', { mode: '100644', type: 'blob', oid: blob(unsigned) }, 11],
      ['another root', { mode: '100644', type: 'blob', oid: blob(otherRoot) }, 11],
      ['a folder', { mode: '040000', type: 'tree', oid: plumb(['mktree'], '') }, 10],
    ];
    for (const [what, entry, code] of cases) {
      git(['--git-dir', w.bare, 'update-ref', REF, good]);
      replaceCheckpoint(entry);
      const before = projectState(ben.dir);
      const s = await ben.run(['sync', '--json']);
      expect(s.code, `${what}: ${s.stdout}${s.stderr}`).toBe(code);
      expect(projectState(ben.dir), what).toEqual(before);
      // A fresh machine's join: refused alike, and it leaves no ledger behind.
      const r = await cid.run(['init', '--remote', w.url]);
      expect(r.code, `${what} (join): ${r.stderr}`).toBe(code);
      expect(existsSync(cid.ledger), what).toBe(false);
    }
  });
});
