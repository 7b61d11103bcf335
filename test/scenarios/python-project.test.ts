// Issue 26: a Python project (pytest) in a real git repository, as the person who met the field
// issues drives it: `finish --tests-cmd "python3 -m pytest -q" --evidence src=dir:src` from a
// subdirectory. dir: evidence stays current across a pytest run (git ignores __pycache__/, and
// dir/v3 leaves out what git ignores), a change holds the gate naming the changed path, the tests
// run from the project root, and a run that tested nothing is called out. Real pytest, when it is
// installed; skipped with the reason when not.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, scenario, type Scenario } from './kit.js';
import { scratch, spawnLedgerSync } from '../helpers/cli.js';

const pytest = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' });
const HAVE_PYTEST = pytest.status === 0;
const AGENT = { LEDGER_AGENT: 'claude' };

let sc: Scenario;
beforeAll(() => {
  if (!HAVE_PYTEST) return;
  sc = scenario('calc', {
    '.gitignore': '__pycache__/\n.pytest_cache/\n',
    // testpaths: run from the root, pytest finds tests/; run from src/, it finds nothing (exit 5).
    'pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n',
    'src/calc/__init__.py': 'def add(a, b):\n    return a + b\n',
    'tests/test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_add_negative():\n    assert add(-1, -2) == -3\n',
  });
});
afterAll(() => sc?.cleanup());

const FIN = ['--done', 'add() works', '--state', 'all tests pass', '--next', 'ship it', '--tests-cmd', 'python3 -m pytest -q'];

describe.skipIf(!HAVE_PYTEST)(`a Python project with real pytest (${HAVE_PYTEST ? pytest.stdout.trim() : 'pytest is not installed: python3 -m pytest --version failed'})`, () => {
  it('finish from src/ runs pytest from the project root, digests src/ as dir/v3, and warns of nothing', () => {
    sc.ok(['start', 'calc', '--summary', 'add numbers'], { env: AGENT });
    const r = sc.ledger(['finish', 'calc', ...FIN, '--evidence', 'src=dir:.', '--json'], { cwd: join(sc.root, 'src'), env: AGENT });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.warnings).toEqual([]);
    expect(out.tests).toMatchObject({ exit_code: 0, command: 'python3 -m pytest -q', workdir: { path: sc.root } });
    expect(out.tests.nothing_tested).toBeUndefined();
    expect(out.tests.excerpt).toMatch(/2 passed/);
    // pytest wrote its bytecode into src/ after the digest was taken.
    expect(existsSync(join(sc.root, 'src/calc/__pycache__'))).toBe(true);
  });

  it('the gate passes: the evidence is current although pytest wrote __pycache__/ into src/', () => {
    const g = sc.ledger(['gate', 'calc', '--json']);
    expect(g.code, g.stdout).toBe(0);
    expect(JSON.parse(g.stdout).evidence).toMatchObject([{ name: 'src', source: 'dir/v3:src', current: true }]);
  });

  it('and again after another pytest run', () => {
    expect(spawnSync('python3', ['-m', 'pytest', '-q'], { cwd: sc.root }).status).toBe(0);
    expect(sc.ledger(['gate', 'calc']).code).toBe(0);
  });

  it('a change to a source file holds the gate, and the hold names the path', () => {
    writeFileSync(join(sc.root, 'src/calc/__init__.py'), 'def add(a, b):\n    return a + b + 0\n');
    const g = sc.ledger(['gate', 'calc']);
    expect(g.code).toBe(20);
    expect(g.stdout).toMatch(/state_current: evidence src: dir\/v3:src has changed: "calc\/__init__\.py" changed/);
    sc.commit('calc: a no-op change');
  });

  it('a run that collects no tests (--tests-cwd src: pytest exit 5) is called out in the output, the record and resume', () => {
    sc.ok(['start', 'calc-2', '--summary', 'more'], { env: AGENT });
    const r = sc.ledger(['checkpoint', 'calc-2', '--done', 'd', '--state', 's', '--next', 'n', '--verified', 'add', '--tests-cmd', 'python3 -m pytest -q', '--tests-cwd', 'src', '--json'], { env: AGENT });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.tests).toMatchObject({ exit_code: 5, nothing_tested: 'pytest collected no tests (exit 5)', workdir: { path: join(sc.root, 'src') } });
    expect(out.warnings).toContain('1 item claimed as verified, but the test command tested nothing');
    const text = sc.ledger(['checkpoint', 'calc-2', '--done', 'd', '--state', 's', '--next', 'n', '--tests-cmd', 'python3 -m pytest -q', '--tests-cwd', 'src'], { env: AGENT });
    expect(text.stdout).toContain('tests: NOTHING WAS TESTED: pytest collected no tests (exit 5)');
    expect(sc.ledger(['resume', 'calc-2']).stdout).toContain('NOTHING WAS TESTED: pytest collected no tests (exit 5)');
  });

  it('a project whose .gitignore does not ignore __pycache__/: finish says at once that its evidence is not current', () => {
    sc.write('.gitignore', sc.read('.gitignore').replace('__pycache__/\n', ''));
    rmSync(join(sc.root, 'src/calc/__pycache__'), { recursive: true, force: true });
    sc.commit('stop ignoring __pycache__');
    const r = sc.ledger(['finish', 'calc-2', ...FIN, '--evidence', 'src=dir:src', '--json'], { env: AGENT });
    expect(r.code, r.stderr).toBe(0);
    const [warning] = JSON.parse(r.stdout).warnings as string[];
    expect(warning).toMatch(/^evidence src is already not current after --tests-cmd ran: dir\/v3:src has changed: "calc\/__pycache__" was added \(a directory\)/);
    expect(sc.ledger(['gate', 'calc-2']).code).toBe(20);
  });
});

describe('installing into a project that is not JavaScript (issue 26, item 8)', () => {
  const initIn = (withIgnore: boolean) => {
    const s = scratch('ledger-nonjs-');
    const root = join(realpathSync(s.dir), 'app');
    mkdirSync(join(root, 'node_modules/handoff-ledger'), { recursive: true });
    writeFileSync(join(root, 'node_modules/handoff-ledger/package.json'), '{}\n');
    writeFileSync(join(root, 'main.py'), 'print(1)\n');
    if (withIgnore) writeFileSync(join(root, '.gitignore'), 'node_modules/\n');
    git(root, 'init', '-q', '-b', 'main');
    const r = spawnLedgerSync(['init', '--name', 'app'], { cwd: root, env: { HOME: s.dir, LEDGER_STATE_DIR: join(s.dir, 'state') } });
    s.cleanup();
    return r;
  };

  it('init notices a node_modules/ that git neither tracks nor ignores, and says what to do', () => {
    const r = initIn(false);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('ledger: warning: node_modules/ is untracked and git does not ignore it (a local install leaves it): add `node_modules/` to .gitignore, or install globally (README "Install")');
  });

  it('says nothing when .gitignore ignores it', () => {
    const r = initIn(true);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('node_modules');
  });
});
