// `ledger init --remote` on a machine that already has a local ledger (docs/across-machines.md,
// "Joining a ledger you already have"): with the remote empty it publishes the ledger as it is;
// where the remote holds the continuation of it, it takes what is new; joined already, another
// ledger there, or the remote away, it refuses with the documented code and leaves nothing
// half-done: the ledger byte-identical, no join, no anchor, and a later join works. Real git: a
// bare repository as the remote, one folder (a git repository, key, state directory) per machine.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runLedger, snapshot } from '../helpers/cli.js';
import { bytes, git, REF, world, type Machine, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

/** What init must leave untouched when it refuses: the ledger, the files it may write, the remote state. */
function everything(m: Machine) {
  const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : null);
  return {
    ledger: snapshot(m.ledger),
    gitignore: read(join(m.dir, '.gitignore')),
    trust: read(join(m.dir, 'keys', 'trust.json')),
    key: read(join(m.dir, 'keys', 'harness.key')),
    remote: joinState(m),
  };
}

/** join.json and anchor.json of every ledger this machine keeps remote state for. */
function joinState(m: Machine): string[] {
  const base = join(m.env.LEDGER_STATE_DIR, 'remote');
  if (!existsSync(base)) return [];
  return listFiles(base).filter((f) => /(join|anchor|hold|outbox)\.json$/.test(f));
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  walk(dir, '');
  return out;
}

// The records and HEAD (SPEC 11); the checkpoint beside them (SPEC 13) is checked on its own.
const remoteTree = () => git(['--git-dir', w.bare, 'ls-tree', '-r', '--name-only', REF]).trim().split('\n').filter((p) => p !== 'checkpoint');

/** A machine with a local ledger (plain `init`) holding two records, not joined to anything. */
async function localLedger(m: Machine): Promise<void> {
  expect((await m.run(['init'])).code).toBe(0);
  expect((await m.run(['append', 'handoff', '--op', 'local_op', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);
  expect((await m.run(['start', 'fix-tz', '--summary', 'fix toLocal()'])).code).toBe(0);
}

describe('when a machine with a local ledger joins an empty remote', () => {
  it('publishes that ledger as it is (same bytes on the ref), and from then on its writes publish', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    await localLedger(ann);
    const before = bytes(ann);
    const r = await ann.run(['init', '--remote', w.url, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, created: false, adopted: 0, seq: 2 });
    expect(bytes(ann)).toEqual(before);
    const paths = remoteTree();
    expect(paths).toEqual(['HEAD', 'records/000000/000000000000', 'records/000000/000000000001', 'records/000000/000000000002']);
    expect(paths.slice(1).map((p) => git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:${p}`])).join('')).toBe(before.records);
    expect(git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:HEAD`])).toBe(before.head);
    expect(git(['--git-dir', w.bare, 'cat-file', 'blob', `${REF}:checkpoint`])).toBe(readFileSync(join(ann.ledger, 'checkpoint'), 'utf8'));

    expect((await ann.run(['checkpoint', 'fix-tz', '--done', 'd', '--state', 's', '--next', 'n'])).code).toBe(0);
    expect(remoteTree()).toHaveLength(5);
    expect((await ben.run(['init', '--remote', w.url])).code).toBe(0);
    expect(bytes(ben)).toEqual(bytes(ann));
    expect(JSON.parse((await ann.run(['status', '--json'])).stdout).remote).toMatchObject({ state: 'in-sync' });
  });
});

describe('when a machine whose local ledger is an earlier copy of the remote one joins', () => {
  it('verifies the records after its tail and takes them; nothing before its tail is rewritten', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    expect((await ann.run(['append', 'handoff', '--op', 'a', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);
    // ben copied the ledger by hand at seq 1 (records and HEAD: what a backup holds).
    cpSync(ann.ledger, ben.ledger, { recursive: true, filter: (src) => !/\.lock$/.test(src) });
    const copied = bytes(ben);
    expect((await ann.run(['append', 'handoff', '--op', 'b', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);

    const r = await ben.run(['init', '--remote', w.url, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, created: false, adopted: 1, seq: 2 });
    expect(bytes(ben)).toEqual(bytes(ann));
    expect(bytes(ben).records.startsWith(copied.records)).toBe(true);
  });
});

describe('when init --remote meets a local ledger it must not join', () => {
  it('already joined on this machine: exit 2, "run `ledger sync`", nothing changed', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    const before = everything(ann);
    const tip = git(['--git-dir', w.bare, 'rev-parse', REF]);
    const r = await ann.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'INPUT_EXISTS', hint: 'run `ledger sync`' });
    expect(everything(ann)).toEqual(before);
    expect(git(['--git-dir', w.bare, 'rev-parse', REF])).toBe(tip);
  });

  it('the remote holds another ledger signed by a pinned key: refused (11), the local ledger kept, not joined, and a later join elsewhere works', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    expect((await ben.run(['init', '--remote', w.url])).code).toBe(0);
    await localLedger(ann);
    const before = everything(ann);
    const tip = git(['--git-dir', w.bare, 'rev-parse', REF]);

    const r = await ann.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(11);
    expect(JSON.parse(r.stdout).error.code).toBe('REMOTE_LINKAGE');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(everything(ann)).toEqual(before);
    expect(git(['--git-dir', w.bare, 'rev-parse', REF])).toBe(tip);
    // Not joined: status says nothing of a remote, and a write stays local, as before.
    expect(JSON.parse((await ann.run(['status', '--json'])).stdout).remote).toBeUndefined();
    expect((await ann.run(['sync'])).code).toBe(2);
    expect(everything(ann)).toEqual(before);

    // Nothing left behind blocks a join to another (empty) remote.
    const other = `${w.bare}.other`;
    git(['init', '--quiet', '--bare', other]);
    const j = await ann.run(['init', '--remote', other, '--json']);
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: true, created: false, seq: 2 });
    expect(bytes(ann).records).toBe(Buffer.from(before.ledger.records!, 'base64').toString('utf8'));
  });

  it('the remote holds this ledger cut back below the local copy: refused (14), nothing changed, not joined', async () => {
    w = world(['ann', 'ben']);
    const [ann, ben] = w.machines;
    expect((await ann.run(['init', '--remote', w.url])).code).toBe(0);
    const c0 = git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
    expect((await ann.run(['append', 'handoff', '--op', 'a', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);
    cpSync(ann.ledger, ben.ledger, { recursive: true, filter: (src) => !/\.lock$/.test(src) });
    git(['--git-dir', w.bare, 'update-ref', REF, c0]);
    const before = everything(ben);
    const r = await ben.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(14);
    expect(JSON.parse(r.stdout).error.code).toBe('REMOTE_FRESHNESS');
    expect(everything(ben)).toEqual(before);
    expect(git(['--git-dir', w.bare, 'rev-parse', REF]).trim()).toBe(c0);
    expect(JSON.parse((await ben.run(['status', '--json'])).stdout).remote).toBeUndefined();
  });

  it('the remote cannot be reached: exit 3, nothing changed, not joined; the same init works once it is back', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    await localLedger(ann);
    const away = `${w.bare}.away`;
    renameSync(w.bare, away);
    const before = everything(ann);
    const r = await ann.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('OP_REMOTE_UNREACHABLE');
    expect(everything(ann)).toEqual(before);
    expect(JSON.parse((await ann.run(['status', '--json'])).stdout).remote).toBeUndefined();

    renameSync(away, w.bare);
    const j = await ann.run(['init', '--remote', w.url, '--json']);
    expect(j.code, j.stderr).toBe(0);
    expect(remoteTree()).toHaveLength(4);
  });

  it('a ledger found in a folder above this one: refused (exit 2) as every init there is; joining it is done from its root', async () => {
    w = world(['ann']);
    const [ann] = w.machines;
    await localLedger(ann);
    const before = everything(ann);
    const sub = join(ann.dir, 'src');
    mkdirSync(sub);
    const r = await runLedger(['init', '--remote', w.url, '--json'], { cwd: sub, env: ann.env });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('INPUT_EXISTS');
    expect(everything(ann)).toEqual(before);
    expect(existsSync(join(sub, '.ledger'))).toBe(false);
  });

  it('on a machine with nothing yet (no ledger, key or .gitignore), a refused init --remote leaves the folder as it was', async () => {
    w = world(['ann']);
    const fresh = join(w.root, 'fresh');
    mkdirSync(fresh);
    git(['init', '--quiet', fresh]);
    const env = { PATH: process.env.PATH ?? '', HOME: fresh, LEDGER_STATE_DIR: join(w.root, 'fresh-state'), LEDGER_AGENT: 'cat' };
    const listing = () => readdirSync(fresh).sort();
    expect(listing()).toEqual(['.git']);
    for (const [remote, code, error] of [['nosuchremote', 2, 'USAGE'], [join(w.root, 'gone.git'), 3, 'OP_REMOTE_UNREACHABLE']] as const) {
      const r = await runLedger(['init', '--remote', remote, '--json'], { cwd: fresh, env });
      expect(r.code, r.stderr).toBe(code);
      expect(JSON.parse(r.stdout).error.code).toBe(error);
      expect(listing()).toEqual(['.git']);
    }
    // And the same command against a remote that answers: key, pin, .gitignore and ledger made.
    const ok = await runLedger(['init', '--remote', w.url, '--json'], { cwd: fresh, env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(listing()).toEqual(['.git', '.gitignore', '.ledger', 'keys']);
  });
});
