// A join leaves nothing behind (src/remote/sync.ts joinLedger). The per-user state directory is
// listed before and after each join, with real git and a bare remote: a join that creates the
// ledger keeps only the documented state (remote/<ledger>/ join.json, anchor.json, fetched.json and the
// private repository objects.git; the verified-chain memo), and no staging copy anywhere, also
// not in the state directory of the process that ran it; a join whose push another machine beat
// (it joins that ledger instead) the same; a join the host refuses, or whose remote cannot be
// reached, leaves the state directory exactly as it was, and makes no ledger directory.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { bytes, git, REF, remoteState, world, type Machine, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

/** Every path under `dir` (relative), folders with a trailing slash, sorted; [] when it is not there. Inside a git repository only its top level. */
function listing(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const isDir = statSync(p).isDirectory();
      out.push(relative(dir, p) + (isDir ? '/' : ''));
      if (isDir && !name.endsWith('.git')) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** What the documented state of one joined ledger may hold (src/remote/state.ts, src/store/state-dir.ts). */
function expectOnlyDocumentedState(m: Machine): void {
  const state = m.env.LEDGER_STATE_DIR;
  for (const name of readdirSync(state)) expect(['chain', 'fold', 'marks', 'remote', 'views'], `an undocumented ${name} in the state directory`).toContain(name);
  expect(readdirSync(join(state, 'remote'))).toHaveLength(1);
  for (const name of readdirSync(remoteState(m))) expect(['anchor.json', 'evidence', 'fetched.json', 'hold.json', 'join.json', 'objects.git', 'outbox.json'], `an undocumented remote/<ledger>/${name}`).toContain(name);
  expect(listing(state).filter((p) => /genesis-|\.tmp$|staging/.test(p)), 'a staging copy or a temp file was left').toEqual([]);
}

const processState = () => listing(process.env.LEDGER_STATE_DIR!);

describe('when a join creates the ledger and publishes its genesis', () => {
  it('the state directory holds only the documented state, and nothing was staged anywhere', async () => {
    w = world(['alice']);
    const [a] = w.machines;
    const before = { state: listing(a.env.LEDGER_STATE_DIR), project: listing(a.dir), process: processState() };
    expect(before.state).toEqual([]);
    const r = await a.run(['init', '--remote', w.url, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: true, seq: 0 });
    const after = listing(a.env.LEDGER_STATE_DIR);
    const key = relative(a.env.LEDGER_STATE_DIR, remoteState(a));
    expect(after.filter((p) => p.startsWith('remote/'))).toEqual(['remote/', `${key}/`, `${key}/anchor.json`, `${key}/join.json`, `${key}/objects.git/`]);
    expectOnlyDocumentedState(a);
    // The project gains the ledger (and init's .gitignore) and nothing else; the process's own
    // state directory nothing.
    expect(listing(a.dir).filter((p) => !before.project.includes(p) && !/^\.ledger\/./.test(p))).toEqual(['.gitignore', '.ledger/']);
    expect(readdirSync(a.ledger).sort()).toEqual(['HEAD', 'checkpoint', 'records.jsonl', 'tree']);
    expect(processState()).toEqual(before.process);

    // Writing and syncing afterwards keep to the documented state too.
    expect((await a.run(['append', 'handoff', '--op', 'op1', '--exec', 'e1', '--outcome', 'success'])).code).toBe(0);
    expect((await a.run(['sync'])).code).toBe(0);
    expectOnlyDocumentedState(a);
  });
});

describe('when another machine creates the ref between the join\'s fetch and its push', () => {
  it('the join takes that ledger instead, and its own genesis left no copy behind', async () => {
    w = world(['alice', 'bob']);
    const [a, b] = w.machines;
    expect((await b.run(['init', '--remote', w.url])).code).toBe(0);
    const bobs = git(['--git-dir', w.bare, 'rev-parse', REF]).trim();
    git(['--git-dir', w.bare, 'update-ref', '-d', REF]);
    // The remote's pre-receive hook puts bob's ledger on the ref once, as if bob had pushed
    // just before alice: alice's push, expecting no ref, is refused as contention ('moved').
    const once = join(w.root, 'hook-ran');
    mkdirSync(join(w.bare, 'hooks'), { recursive: true });
    writeFileSync(join(w.bare, 'hooks', 'pre-receive'), `#!/bin/sh\ncat >/dev/null\n[ -e '${once}' ] && exit 0\ntouch '${once}'\nunset GIT_QUARANTINE_PATH\ngit update-ref ${REF} ${bobs}\n`, { mode: 0o755 });
    const before = processState();
    const r = await a.run(['init', '--remote', w.url, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(once), 'the hook moved the ref').toBe(true);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: false, adopted: 1 });
    expect(bytes(a)).toEqual(bytes(b));
    expect(git(['--git-dir', w.bare, 'rev-parse', REF]).trim()).toBe(bobs);
    expectOnlyDocumentedState(a);
    expect(processState()).toEqual(before);
  });
});

describe('when a join fails', () => {
  it('refused by the host (a pre-receive hook): the state directory is as it was, and no ledger directory is made', async () => {
    w = world(['alice']);
    const [a] = w.machines;
    // A state directory already in use: what was there stays, and nothing is added.
    mkdirSync(join(a.env.LEDGER_STATE_DIR, 'remote'), { recursive: true });
    writeFileSync(join(a.env.LEDGER_STATE_DIR, 'remote', 'unrelated'), 'kept\n');
    mkdirSync(join(w.bare, 'hooks'), { recursive: true });
    writeFileSync(join(w.bare, 'hooks', 'pre-receive'), '#!/bin/sh\ncat >/dev/null\necho "no custom refs" >&2\nexit 1\n', { mode: 0o755 });
    const before = { state: listing(a.env.LEDGER_STATE_DIR), process: processState() };
    const r = await a.run(['init', '--remote', w.url, '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('OP_REMOTE_REFUSED');
    expect(listing(a.env.LEDGER_STATE_DIR)).toEqual(before.state);
    expect(processState()).toEqual(before.process);
    expect(existsSync(a.ledger)).toBe(false);
    expect(git(['--git-dir', w.bare, 'for-each-ref']).trim()).toBe('');
  });

  it('the remote cannot be reached: the state directory that was not there is not there, and a local ledger stays as it was', async () => {
    w = world(['alice']);
    const [a] = w.machines;
    expect((await a.run(['init'])).code).toBe(0);
    const ledger = snapshot(a.ledger);
    const state = listing(a.env.LEDGER_STATE_DIR);
    const r = await a.run(['init', '--remote', join(w.root, 'no-such-remote.git'), '--json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe('OP_REMOTE_UNREACHABLE');
    expect(listing(a.env.LEDGER_STATE_DIR)).toEqual(state);
    expect(state.some((p) => p.startsWith('remote'))).toBe(false);
    expect(snapshot(a.ledger)).toEqual(ledger);
  });
});
