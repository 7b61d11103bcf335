// The anchor (SPEC 11): a remote force-pushed back below what a machine verified is a rollback
// (exit 14); one force-pushed to another history, signed by a pinned key, is a fork (exit 11).
// Either way `sync` and every writer refuse, the local copy stays byte-identical, both states
// are saved as evidence, and the refusal stands until a person decides (sync --accept-remote).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { evidenceDirs, git, REF, remoteState, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

const tip = () => git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
const setRef = (commit: string) => git(['--git-dir', w.bare, 'update-ref', REF, commit]);

describe('when the remote is force-pushed back below what this machine verified (a rollback)', () => {
  it('sync and writers exit 14, the local copy is unchanged, both states are saved; accept-remote after review lifts it', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of w.machines) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ann.run(['append', 'handoff', '--op', 'a', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    const c1 = tip();
    expect((await ann.run(['append', 'handoff', '--op', 'b', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    const c2 = tip();
    expect((await ben.run(['sync'])).code).toBe(0);
    const before = snapshot(ben.ledger);

    setRef(c1);
    const s = await ben.run(['sync', '--json']);
    expect(s.code).toBe(14);
    expect(JSON.parse(s.stdout).error.code).toBe('REMOTE_FRESHNESS');
    expect(snapshot(ben.ledger)).toEqual(before);
    const wr = await ben.run(['start', 'x', '--summary', 's']);
    expect(wr.code).toBe(14);
    expect(wr.stderr).toContain('rollback');
    expect(snapshot(ben.ledger)).toEqual(before);
    const [ev] = evidenceDirs(ben);
    expect(ev).toMatch(/rollback$/);
    const evDir = join(remoteState(ben), 'evidence', ev);
    expect(readFileSync(join(evDir, 'local-HEAD'))).toEqual(readFileSync(join(ben.ledger, 'HEAD')));
    expect(JSON.parse(readFileSync(join(evDir, 'remote-HEAD'), 'utf8')).seq).toBe(1);

    // The ref put back does not lift the hold by itself: a person decides.
    setRef(c2);
    expect((await ben.run(['start', 'x', '--summary', 's'])).code).toBe(14);
    const accepted = await ben.run(['sync', '--accept-remote']);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect((await ben.run(['start', 'x', '--summary', 's'])).code).toBe(0);
  });
});

describe('when the remote is force-pushed to a different history signed by a pinned key (a fork)', () => {
  it('sync and writers on both machines exit 11, local copies unchanged, evidence saved', async () => {
    w = world(['ann', 'ben', 'cat']);
    const [ann, ben, cat] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ben.run(['init', '--remote', w.url])).code).toBe(0);
    const genesis = tip();
    expect((await ann.run(['append', 'handoff', '--op', 'real', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    expect((await ben.run(['sync'])).code).toBe(0);
    const kept = { ann: snapshot(ann.ledger), ben: snapshot(ben.ledger) };

    // cat's pinned key writes another seq 1 on the genesis, and that history replaces the ref.
    setRef(genesis);
    expect((await cat.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await cat.run(['append', 'handoff', '--op', 'other', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);

    for (const m of [ann, ben]) {
      const s = await m.run(['sync', '--json']);
      expect(s.code, s.stdout).toBe(11);
      expect(JSON.parse(s.stdout).error).toMatchObject({ code: 'REMOTE_LINKAGE' });
      const wr = await m.run(['append', 'handoff', '--op', 'more', '--exec', 'e', '--outcome', 'success']);
      expect(wr.code).toBe(11);
      expect(wr.stderr).toContain('fork');
      expect(evidenceDirs(m).some((d) => d.endsWith('fork'))).toBe(true);
    }
    expect(snapshot(ann.ledger)).toEqual(kept.ann);
    expect(snapshot(ben.ledger)).toEqual(kept.ben);
    // Accepting a remote that does not contain the local copy refuses, and keeps the copy.
    const acc = await ben.run(['sync', '--accept-remote']);
    expect(acc.code).toBe(11);
    expect(acc.stderr).toContain('join again');
    expect(snapshot(ben.ledger)).toEqual(kept.ben);
    expect(existsSync(join(remoteState(ben), 'hold.json'))).toBe(true);
  });
});

describe('when the remote is replaced by another, shorter ledger (another genesis) while writers run', () => {
  it('a writer and sync exit 11 (fork), not 14 (rollback): the genesis is compared before the seq', async () => {
    w = world(['ann', 'cat']);
    const [ann, cat] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    for (const op of ['a', 'b', 'c']) expect((await ann.run(['append', 'handoff', '--op', op, '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    const kept = snapshot(ann.ledger);

    // cat's pinned key makes a ledger of its own (genesis only: seq 0, below ann's anchor at 3)
    // on another remote, and that ref replaces ann's.
    const other = join(w.root, 'other.git');
    git(['init', '--quiet', '--bare', other]);
    expect((await cat.run(['init', '--remote', other])).code).toBe(0);
    git(['--git-dir', w.bare, 'fetch', '--quiet', other, `+${REF}:${REF}`]);

    const wr = await ann.run(['append', 'handoff', '--op', 'd', '--exec', 'e', '--outcome', 'success', '--json']);
    expect(wr.code, wr.stdout + wr.stderr).toBe(11);
    expect(JSON.parse(wr.stdout).error).toMatchObject({ code: 'REMOTE_LINKAGE' });
    expect(wr.stdout).toContain('another ledger');
    expect(evidenceDirs(ann).some((d) => d.endsWith('fork'))).toBe(true);
    const s = await ann.run(['sync', '--json']);
    expect(s.code).toBe(11);
    expect(snapshot(ann.ledger)).toEqual(kept);
  });
});
