// git:REV evidence in a real repository. "Still current" means: REV still names the recorded
// commit, that commit is checked out, and the work tree is clean outside the ledger directory
// and its two views (docs/causal-handoffs.md).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { handoff, project, type Project } from './kit.js';

let p: Project;
afterEach(() => p?.cleanup());

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: p.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('git:REV evidence in a real repository', () => {
  it('is current only while the commit is checked out and the work tree is clean', async () => {
    p = await project();
    git('init', '-q', '-b', 'main');
    p.write('.gitignore', 'keys/\n'); // the secret key never goes into the repository
    p.write('src/app.js', 'export const v = 1;\n');
    git('add', '.gitignore', 'src/app.js');
    git('commit', '-q', '-m', 'one');
    const commit = git('rev-parse', 'HEAD').trim();

    await p.id(handoff('build', 'e1', 'success', '--evidence', 'code=git:main'));
    // The ledger directory is untracked in this repository: its own writes do not count.
    let g = await p.gate('build');
    expect(g.code, JSON.stringify(g.r.reasons)).toBe(0);
    expect(g.r.evidence[0]).toMatchObject({ name: 'code', source: 'git:main', current: true });
    p.write('HANDOFF.md', '# the view the ledger writes\n');
    expect((await p.gate('build')).code).toBe(0);

    // A change to a tracked file.
    p.write('src/app.js', 'export const v = 2;\n');
    g = await p.gate('build');
    expect(g.code).toBe(20);
    expect(g.r.failed_term).toBe('state_current');
    expect(g.r.reason).toContain('uncommitted changes: src/app.js');
    git('checkout', '--', 'src/app.js');
    expect((await p.gate('build')).code).toBe(0);

    // An untracked file.
    p.write('src/extra.js', 'new\n');
    g = await p.gate('build');
    expect(g.r.reason).toContain('src/extra.js');
    rmSync(join(p.dir, 'src/extra.js'));

    // A staged change.
    p.write('src/app.js', 'export const v = 3;\n');
    git('add', 'src/app.js');
    expect((await p.gate('build')).r.failed_term).toBe('state_current');
    git('reset', '-q', '--hard');
    expect((await p.gate('build')).code).toBe(0);

    // The branch moves on: git:main names another commit now.
    p.write('src/app.js', 'export const v = 4;\n');
    git('commit', '-q', '-am', 'two');
    g = await p.gate('build');
    expect(g.code).toBe(20);
    expect(g.r.reason).toContain('git:main now names commit');

    // The recorded commit checked out again (detached), nothing else changed: current again.
    git('checkout', '-q', commit);
    g = await p.gate('build');
    expect(g.r.reason).toContain('git:main now names commit'); // main itself still moved
    await p.id(handoff('pinned', 'e1', 'success', '--evidence', `code=git:${commit}`));
    expect((await p.gate('pinned')).code).toBe(0);
    git('checkout', '-q', 'main');
    g = await p.gate('pinned');
    expect(g.code).toBe(20);
    expect(g.r.reason).toContain('checked out');
  });

  it('holds when the revision no longer exists', async () => {
    p = await project();
    git('init', '-q', '-b', 'main');
    p.write('.gitignore', 'keys/\n');
    git('add', '.gitignore');
    git('commit', '-q', '-m', 'one');
    git('branch', 'feature');
    await p.id(handoff('op', 'e1', 'success', '--evidence', 'code=git:feature'));
    expect((await p.gate('op')).code).toBe(0);
    git('branch', '-D', 'feature');
    const g = await p.gate('op');
    expect(g.code).toBe(20);
    expect(g.r.reason).toContain('no longer names a commit');
  });
});
