// A remote that holds what this machine's trust file does not accept (SPEC 11, 7, 8): the ref's
// records are attacker-controlled input, checked before any byte reaches the local copy.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { git, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when a key this machine does not pin publishes to the remote', () => {
  it('sync and writers exit 13 (key-pin) and the local copy is unchanged', async () => {
    w = world(['ann', 'mal']);
    const [ann, mal] = w.machines;
    // ann's trust file pins only ann; mal's pins both, so mal can publish.
    const trust = JSON.parse(readFileSync(join(ann.dir, 'keys', 'trust.json'), 'utf8'));
    trust.keys = trust.keys.filter((k: { name: string }) => k.name === 'ann');
    writeFileSync(join(ann.dir, 'keys', 'trust.json'), JSON.stringify(trust));
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await mal.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await mal.run(['append', 'handoff', '--op', 'x', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    const before = snapshot(ann.ledger);
    const s = await ann.run(['sync', '--json']);
    expect(s.code).toBe(13);
    expect(JSON.parse(s.stdout).error.code).toBe('REMOTE_KEY_PIN');
    expect((await ann.run(['start', 'y', '--summary', 's'])).code).toBe(13);
    expect(snapshot(ann.ledger)).toEqual(before);
  });
});

describe('when the ref\'s tree holds more than HEAD and records/', () => {
  it('the fetch is refused as schema (exit 10) before anything is copied', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    // A commit on the ref with an extra blob at the root, made with plumbing.
    const tree = git(['--git-dir', w.bare, 'ls-tree', `${REF}^{tree}`]);
    const extra = spawnGit(['--git-dir', w.bare, 'hash-object', '-w', '--stdin'], 'planted\n').trim();
    const newTree = spawnGit(['--git-dir', w.bare, 'mktree'], `${tree}100644 blob ${extra}\tREADME\n`).trim();
    const commit = spawnGit(['--git-dir', w.bare, 'commit-tree', newTree, '-p', REF, '-m', 'x'], '', { GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' }).trim();
    git(['--git-dir', w.bare, 'update-ref', REF, commit]);
    const r = await ben.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(10);
    expect(existsSync(ben.ledger)).toBe(false);
  });
});

function spawnGit(args: string[], input: string, env: Record<string, string> = {}): string {
  const r = spawnSync('git', args, { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/tmp', ...env } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}
