// The git seam (src/remote/git.ts, publish.ts): a caller's GIT_* environment never reaches the
// git we run, and each push refusal is told apart by what git's porcelain says.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitEnv } from '../../src/remote/git.js';
import { classifyPush } from '../../src/remote/publish.js';
import { git, REF, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when the caller\'s environment points git elsewhere (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE)', () => {
  it('none of it is inherited, and a join through it still reaches the named remote only', async () => {
    const env = gitEnv({}, { PATH: '/bin', HOME: '/h', GIT_DIR: '/x', GIT_INDEX_FILE: '/y', GIT_WORK_TREE: '/z', GIT_OBJECT_DIRECTORY: '/o', GIT_CONFIG_PARAMETERS: "'core.sshCommand=evil'" });
    expect(Object.keys(env).filter((k) => k.startsWith('GIT_')).sort()).toEqual(['GIT_NO_LAZY_FETCH', 'GIT_NO_REPLACE_OBJECTS', 'GIT_OPTIONAL_LOCKS', 'GIT_PAGER', 'GIT_SSH_COMMAND', 'GIT_TERMINAL_PROMPT']);
    expect(env.GIT_TERMINAL_PROMPT).toBe('0');

    w = world(['ann']);
    const [ann] = w.machines;
    const decoy = join(w.root, 'decoy.git');
    git(['init', '--quiet', '--bare', decoy]);
    mkdirSync(join(w.root, 'wt'));
    const saved = { ...process.env };
    Object.assign(process.env, { GIT_DIR: decoy, GIT_INDEX_FILE: join(w.root, 'index'), GIT_WORK_TREE: join(w.root, 'wt') });
    try {
      const r = await ann.run(['init', '--remote', w.url]);
      expect(r.code, r.stderr).toBe(0);
    } finally {
      for (const k of ['GIT_DIR', 'GIT_INDEX_FILE', 'GIT_WORK_TREE']) if (saved[k] === undefined) delete process.env[k];
    }
    expect(git(['--git-dir', w.bare, 'rev-parse', REF]).trim()).toMatch(/^[0-9a-f]{40}$/);
    expect(git(['--git-dir', decoy, 'for-each-ref']).trim()).toBe('');
  });
});

describe('when git push --porcelain reports on the ledger ref', () => {
  const ref = REF;
  const line = (flag: string, summary: string) => `To /r.git\n${flag}\tabc:${ref}\t${summary}\nDone\n`;
  it.each([
    ['a fast-forward', 0, line(' ', 'aaa..bbb'), 'published'],
    ['a new ref', 0, line('*', '[new reference]'), 'published'],
    ['a failed lease', 1, line('!', '[rejected] (stale info)'), 'moved'],
    ['a ref that moved', 1, line('!', '[rejected] (fetch first)'), 'moved'],
    ['a lost race inside the remote', 1, line('!', '[remote rejected] (failed to update ref)'), 'moved'],
    ['a hook that refuses the ref', 1, line('!', '[remote rejected] (pre-receive hook declined)'), 'refused'],
    ['a host rule', 1, line('!', '[remote rejected] (refusing to update refs outside refs/heads)'), 'refused'],
  ])('%s is %s', (_name, status, stdout, kind) => {
    expect(classifyPush(status as number, stdout as string, '', ref, false).kind).toBe(kind);
  });
  it('no answer at all is unreachable, and a push that timed out is unknown (it may have landed)', () => {
    expect(classifyPush(128, '', "fatal: '/nope' does not appear to be a git repository\n", ref, false)).toMatchObject({ kind: 'unreachable' });
    expect(classifyPush(-1, '', '', ref, true).kind).toBe('unknown');
  });
});
