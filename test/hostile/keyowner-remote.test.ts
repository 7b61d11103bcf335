// Issue 23 findings 6, 7, 8 and the remote ones of 10: a joined ledger fails closed. The machines
// run as root (each holds its key); the attacker is another uid (nobody), who owns the bare
// remote and rewrites its ref with plain git, without any key. Each refusal: its documented exit
// code, one line, and the local copy (records.jsonl, HEAD) byte-identical.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createSigner } from '../../src/sign.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { AGENT, giveToAgent, isRoot } from '../helpers/two-users.js';
import { git, keptWorld, REF, remoteState, world, type World } from '../remote/kit.js';

let w: World;
afterEach(() => w?.cleanup());

const tip = () => git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
const quarantined = (ledger: string) => (existsSync(join(ledger, 'quarantine')) ? readdirSync(join(ledger, 'quarantine')) : []);

/**
 * The attacker's keyless commit on the ref: the tip's tree with `edits` (path -> mode and bytes,
 * or null to remove), the tip as its parent, made by plain git as the attacker's uid when this
 * runs as root (the remote is the attacker's to write), else as this user.
 */
function keylessCommit(edits: Record<string, { mode: string; data: string | Buffer } | null>): string {
  const scratch = mkdtempSync(join(tmpdir(), 'ledger-attacker-'));
  const as = isRoot ? { uid: AGENT, gid: AGENT } : {};
  if (isRoot) {
    chmodSync(w.root, 0o755);
    giveToAgent(scratch);
    giveToAgent(w.bare);
  }
  const env = { PATH: process.env.PATH ?? '', HOME: scratch, GIT_DIR: w.bare, GIT_INDEX_FILE: join(scratch, 'index'), GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x', GIT_CONFIG_NOSYSTEM: '1' };
  const run = (args: string[], input: string | Buffer = '') => {
    const r = spawnSync('git', args, { env, input, encoding: 'utf8', ...as, maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  try {
    run(['read-tree', REF]);
    for (const [path, v] of Object.entries(edits)) {
      if (v === null) run(['update-index', '--force-remove', path]);
      else if (v.mode === '160000') run(['update-index', '--add', '--cacheinfo', `160000,${tip()},${path}`]);
      else run(['update-index', '--add', '--cacheinfo', `${v.mode},${run(['hash-object', '-w', '--stdin'], v.data)},${path}`]);
    }
    const commit = run(['commit-tree', run(['write-tree']), '-p', REF, '-m', 'keyless']);
    run(['update-ref', REF, commit]);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    // The machines' git (root) reaches the remote again as its owner would let it.
    if (isRoot) ownTree(w.bare, 0);
  }
}

function ownTree(path: string, uid: number): void {
  chownSync(path, uid, uid);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) ownTree(join(path, name), uid);
}

/** Ann and ben joined, ann's work item synced to ben, cat not joined: built once, put back per test. */
const pairWorld = keptWorld(async () => {
  const built = world(['ann', 'ben', 'cat']);
  const [ann, ben] = built.machines;
  for (const m of [ann, ben]) expect((await m.run(['init', '--remote', built.url])).code).toBe(0);
  expect((await ann.run(['start', 'fix-tz', '--summary', 'fix toLocal()'])).code).toBe(0);
  expect((await ben.run(['sync'])).code).toBe(0);
  return built;
});

async function joinedPair() {
  w = await pairWorld();
  return w.machines;
}

describe('a joined copy whose HEAD is missing or odd (finding 6)', () => {
  it('missing: sync refuses (exit 3, one line) and never moves the published records to quarantine', async () => {
    const [ann] = await joinedPair();
    const records = readFileSync(join(ann.ledger, 'records.jsonl'));
    rmSync(join(ann.ledger, 'HEAD'));
    const s = await ann.run(['sync', '--json']);
    expect(s.code, s.stderr).toBe(3);
    expect(JSON.parse(s.stdout).error.code).toBe('OP_CORRUPT');
    expect(s.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(ann.ledger, 'records.jsonl'))).toEqual(records);
    expect(quarantined(ann.ledger)).toEqual([]);
  });

  it('a FIFO: sync answers at once (exit 3), it does not wait for a writer', async () => {
    const [ann] = await joinedPair();
    // (Read records.jsonl alone: the test's own read of a FIFO would wait.)
    const before = readFileSync(join(ann.ledger, 'records.jsonl'));
    rmSync(join(ann.ledger, 'HEAD'));
    expect(spawnSync('mkfifo', [join(ann.ledger, 'HEAD')]).status).toBe(0);
    // A hang guard only (never a timing assertion): a sync that waited on the FIFO is killed.
    const r = spawnSync(process.execPath, [join(process.cwd(), 'dist/cli/ledger.cjs'), 'sync', '--json'], { cwd: ann.dir, env: ann.env, encoding: 'utf8', timeout: 120_000 });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('OP_NOT_REGULAR');
    expect(readFileSync(join(ann.ledger, 'records.jsonl'))).toEqual(before);
  });

  it('put back to an older HEAD: sync brings it forward from the verified remote and quarantines nothing', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    const genesisHead = readFileSync(join(ann.ledger, 'HEAD'));
    expect((await ann.run(['start', 'fix-tz', '--summary', 's'])).code).toBe(0);
    const kept = snapshot(ann.ledger);
    writeFileSync(join(ann.ledger, 'HEAD'), genesisHead);
    const s = await ann.run(['sync']);
    expect(s.code, s.stderr).toBe(0);
    expect(snapshot(ann.ledger)).toEqual(kept);
    expect(quarantined(ann.ledger)).toEqual([]);
  });
});

describe('an oversized object on the remote (finding 10: a 600 MB HEAD made every sync run 20 s to an internal error)', () => {
  it('HEAD of 12 MiB: sync refuses it unread (exit 10), and the local copy and anchor stay', async () => {
    const [, ben] = await joinedPair();
    const before = { ben: snapshot(ben.ledger), anchor: readFileSync(join(remoteState(ben), 'anchor.json')) };
    keylessCommit({ HEAD: { mode: '100644', data: Buffer.alloc(12 << 20, 0x78) } });
    const s = await ben.run(['sync', '--json']);
    expect(s.code, s.stderr).toBe(10);
    expect(JSON.parse(s.stdout).error.code).toBe('REMOTE_SCHEMA');
    expect(s.stderr).toMatch(/larger than \d+ bytes; nothing was read from it/);
    expect({ ben: snapshot(ben.ledger), anchor: readFileSync(join(remoteState(ben), 'anchor.json')) }).toEqual(before);
  });

  it('a record of 12 MiB, met by a machine that joins: refused unread (exit 10), nothing joined', async () => {
    const [, , cat] = await joinedPair();
    keylessCommit({ 'records/000000/000000000001': { mode: '100644', data: Buffer.alloc(12 << 20, 0x78) } });
    const j = await cat.run(['init', '--remote', w.url, '--json']);
    expect(j.code, j.stderr).toBe(10);
    expect(j.stderr).toMatch(/larger than \d+ bytes; nothing was read from it/);
    expect(existsSync(join(cat.ledger, 'HEAD'))).toBe(false);
  });
});

describe('a keyless commit that keeps HEAD and rewrites the tree below the anchor (finding 7)', () => {
  // The genesis, below the anchor (seq 1): a check of only what is new, or of the anchor's own
  // record, never reads it.
  const GENESIS = 'records/000000/000000000000';
  const cases: [string, Record<string, { mode: string; data: string } | null>][] = [
    ['junk in place of a record', { [GENESIS]: { mode: '100644', data: 'junk\n' } }],
    ['a symbolic link in place of a record', { [GENESIS]: { mode: '120000', data: '../../HEAD' } }],
    ['a gitlink in place of a record', { [GENESIS]: { mode: '160000', data: '' } }],
    ['an extra entry beside the records', { 'records/000000/zzz': { mode: '100644', data: 'planted\n' } }],
  ];
  for (const [what, edits] of cases) {
    it(`${what}: sync refuses it, honest writers do not carry it forward, and the local copies stay`, async () => {
      const [ann, ben] = await joinedPair();
      const kept = { ann: snapshot(ann.ledger), ben: snapshot(ben.ledger) };
      const bad = keylessCommit(edits);
      const s = await ben.run(['sync', '--json']);
      expect([10, 11], s.stderr).toContain(s.code);
      expect(s.stderr.trim().split('\n')).toHaveLength(1);
      const wr = await ann.run(['checkpoint', 'fix-tz', '--done', 'd', '--state', 's', '--next', 'n']);
      expect([10, 11]).toContain(wr.code);
      // Nobody built on the rewritten commit: the ref is still the attacker's, the copies as they were.
      expect(tip()).toBe(bad);
      expect({ ann: snapshot(ann.ledger), ben: snapshot(ben.ledger) }).toEqual(kept);
    });
  }
});

describe('a consumption under --offline (finding 8: one consumer, one handoff, two deploys)', () => {
  it('the gate holds (exit 20) and queues nothing; the one consumption is the one published', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    for (const m of [ann, ben]) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ann.run(['append', 'handoff', '--op', 'deploy-17', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);
    expect((await ben.run(['sync'])).code).toBe(0);
    const hidden = `${w.bare}.away`;
    renameSync(w.bare, hidden);
    const before = snapshot(ann.ledger);
    const g = await ann.run(['gate', 'deploy-17', '--consume-as', 'deployer', '--offline', '--json']);
    expect(g.code, g.stderr).toBe(20);
    expect(JSON.parse(g.stdout)).toMatchObject({ ok: false, failed_term: 'handoff_valid', consume: { id: null } });
    expect(JSON.parse(g.stdout).reason).toMatch(/could not be published/);
    expect(snapshot(ann.ledger)).toEqual(before);
    expect(existsSync(join(remoteState(ann), 'outbox.json'))).toBe(false);
    renameSync(hidden, w.bare);
    // Back online: ann's sync publishes nothing of a consume; ben's gate takes the one consumption.
    expect((await ann.run(['sync'])).code).toBe(0);
    const other = await ben.run(['gate', 'deploy-17', '--consume-as', 'deployer', '--json']);
    expect(other.code, other.stderr).toBe(0);
    const again = await ann.run(['gate', 'deploy-17', '--consume-as', 'deployer', '--json']);
    expect(again.code).toBe(20);
  });
});

describe('a join (finding 10)', () => {
  it('never publishes a local ledger its trust file would reject (exit 13), and the remote stays empty', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    expect((await ann.run(['init'])).code).toBe(0);
    expect((await ann.run(['start', 'fix-tz', '--summary', 's'])).code).toBe(0);
    const other = join(ann.dir, 'other-trust');
    mkdirSync(other);
    writeFileSync(join(other, 'trust.json'), `${JSON.stringify({ v: 1, keys: [{ name: 'someone', alg: 'ed25519', key: createSigner(new Uint8Array(randomBytes(32))).publicKey, agents: ['*'], valid_from_seq: 0, revoked_at_seq: null }] })}\n`);
    const before = snapshot(ann.ledger);
    const j = await ann.run(['init', '--remote', w.url, '--trust', join(other, 'trust.json'), '--json']);
    expect(j.code, j.stderr).toBe(13);
    expect(JSON.parse(j.stdout).error.message).toMatch(/the join publishes nothing/);
    expect(snapshot(ann.ledger)).toEqual(before);
    expect(git(['--git-dir', w.bare, 'for-each-ref']).trim()).toBe('');
  });

  it('after a fork, the documented way out (move .ledger aside, join again) lifts the hold: writes go through', async () => {
    w = world(['ann', 'ben', 'cat']);
    const [ann, ben, cat] = w.machines;
    for (const m of [ann, ben]) expect((await m.run(['init', '--remote', w.url])).code).toBe(0);
    const genesis = tip();
    expect((await ann.run(['append', 'handoff', '--op', 'real', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    expect((await ben.run(['sync'])).code).toBe(0);
    git(['--git-dir', w.bare, 'update-ref', REF, genesis]);
    expect((await cat.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await cat.run(['append', 'handoff', '--op', 'other', '--exec', 'e', '--outcome', 'success'])).code).toBe(0);
    expect((await ben.run(['sync'])).code).toBe(11);
    expect((await ben.run(['start', 'x', '--summary', 's'])).code).toBe(11);
    renameSync(ben.ledger, `${ben.ledger}.forked`);
    const j = await ben.run(['init', '--remote', w.url]);
    expect(j.code, j.stderr).toBe(0);
    const wr = await ben.run(['start', 'x', '--summary', 's']);
    expect(wr.code, wr.stderr).toBe(0);
    expect(existsSync(join(remoteState(ben), 'hold.json'))).toBe(false);
    // The evidence of the fork stays.
    expect(readdirSync(join(remoteState(ben), 'evidence')).some((d) => d.endsWith('fork'))).toBe(true);
  });
});
