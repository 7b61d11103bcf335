// `ledger init` in a git repository keeps the secret key and the ledger out of git (issue 14.2):
// real repositories, real `git add -A`, real `git status`.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GITIGNORE_COMMENT } from '../../src/project/git-ignore.js';
import { runLedger, scratch } from '../helpers/cli.js';
import { git, gitRepo, statusPaths } from '../helpers/git-repo.js';

let s: ReturnType<typeof scratch>;
let base: string;
beforeEach(() => {
  s = scratch('ledger-init-git-');
  base = realpathSync(s.dir);
});
afterEach(() => s.cleanup());

async function init(cwd: string, ...extra: string[]) {
  const r = await runLedger(['init', '--json', ...extra], { cwd });
  expect(r.code, r.stderr).toBe(0);
  return { ...(JSON.parse(r.stdout) as { gitignore: { file: string | null; added: string[]; tracked: string[] } | null }), stderr: r.stderr };
}

describe('when a user runs `ledger init` in a git repository and then `git add -A`', () => {
  it('git stages the trust file and the ignore rules, never the key or the ledger, and init says where it wrote them', async () => {
    const repo = gitRepo(join(base, 'repo'), { 'README.md': 'x\n', '.gitignore': 'node_modules/' });
    const text = await runLedger(['init'], { cwd: repo });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`git ignores /keys/*.key and /.ledger/ now (added to ${join(repo, '.gitignore')})`);
    // Appended after what was there (which had no final newline), with a comment that says why.
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe(`node_modules/\n\n${GITIGNORE_COMMENT}\n/keys/*.key\n/.ledger/\n`);
    git(repo, 'add', '-A');
    expect(statusPaths(repo).sort()).toEqual(['.gitignore', 'keys/trust.json']);
    // A key made later beside it (`ledger keygen`) is ignored too.
    expect((await runLedger(['keygen', '--out', 'keys/ci.key', '--name', 'ci'], { cwd: repo })).code).toBe(0);
    git(repo, 'add', '-A');
    expect(statusPaths(repo).sort()).toEqual(['.gitignore', 'keys/trust.json']);
  });

  it('adds nothing the second time: an init of a fresh ledger beside the same key leaves .gitignore as it was', async () => {
    const repo = gitRepo(join(base, 'repo'));
    expect((await init(repo)).gitignore?.added).toEqual(['/keys/*.key', '/.ledger/']);
    const before = readFileSync(join(repo, '.gitignore'), 'utf8');
    rmSync(join(repo, '.ledger'), { recursive: true });
    const again = await init(repo);
    expect(again.gitignore).toEqual({ file: null, added: [], tracked: [] });
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe(before);
  });

  it('in a subdirectory of a repository without a ledger, anchors the lines to that folder in the top .gitignore', async () => {
    const repo = gitRepo(join(base, 'repo'));
    const svc = join(repo, 'services', 'api');
    mkdirSync(svc, { recursive: true });
    const r = await init(svc);
    expect(r.gitignore).toEqual({ file: join(repo, '.gitignore'), added: ['/services/api/keys/*.key', '/services/api/.ledger/'], tracked: [] });
    git(repo, 'add', '-A');
    expect(statusPaths(repo).sort()).toEqual(['.gitignore', 'services/api/keys/trust.json']);
  });

  it('leaves a key outside the work tree alone and ignores only the ledger', async () => {
    const repo = gitRepo(join(base, 'repo'));
    const r = await init(repo, '--key', join(base, 'secrets', 'harness.key'));
    expect(r.gitignore?.added).toEqual(['/.ledger/']);
    expect(existsSync(join(base, 'secrets', 'harness.key'))).toBe(true);
  });

  it('quotes a folder name that git would read as a pattern', async () => {
    const repo = gitRepo(join(base, 'repo'));
    const odd = join(repo, 'odd[1]*');
    mkdirSync(odd);
    const r = await init(odd);
    expect(r.gitignore?.added).toEqual(['/odd\\[1]\\*/keys/*.key', '/odd\\[1]\\*/.ledger/']);
    // The sibling the unquoted pattern would also have matched is not ignored.
    mkdirSync(join(repo, 'odd1x', 'keys'), { recursive: true });
    writeFileSync(join(repo, 'odd1x', 'keys', 'a.key'), 'x');
    git(repo, 'add', '-A');
    expect(statusPaths(repo)).toContain('odd1x/keys/a.key');
    expect(statusPaths(repo).filter((p) => p.startsWith('odd[1]*/'))).toEqual(['odd[1]*/keys/trust.json']);
  });

  it('warns when git already tracks the key: ignoring does not take it out of the history', async () => {
    const repo = gitRepo(join(base, 'repo'));
    expect((await runLedger(['keygen', '--out', 'keys/harness.key'], { cwd: repo })).code).toBe(0);
    git(repo, 'add', 'keys/harness.key');
    git(repo, 'commit', '-q', '-m', 'a key, by mistake');
    const r = await init(repo);
    expect(r.gitignore?.tracked).toEqual([join(repo, 'keys', 'harness.key')]);
    expect(r.stderr).toMatch(/git already tracks .*harness\.key; .*git rm -r --cached .*make a new key/);
  });
});
