// The scenarios' one helper: a scratch project that is a real git repository (real `git init`,
// real commits, `git worktree add`), and the shipped binary run in it as a user's shell would run
// it (`spawnLedgerSync`: a real process, its real exit code; `npm run build` first, `npm test`
// does). Every refusal is checked the same way: its exit code, its --json error code, one line on
// stderr, and the ledger (every file under .ledger/) and both views byte-identical afterwards.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { copyTree, scratch, spawnLedgerSync, type Run } from '../helpers/cli.js';
import { git, statusPaths } from '../helpers/git-repo.js';
import { projectState } from '../helpers/project-state.js';

export { git, statusPaths };

export interface Scenario {
  /** The project root (realpath), a git repository on branch main. */
  root: string;
  /** The scratch folder that holds the root, HOME and the per-user state directory. */
  base: string;
  ledgerDir: string;
  /** `ledger ...args` from `cwd` (default: the root), as a real process. */
  ledger: (args: string[], opts?: { cwd?: string; env?: Record<string, string> }) => Run;
  /** `ledger ...args --json` that must exit 0: its parsed output. */
  ok: (args: string[], opts?: { cwd?: string; env?: Record<string, string> }) => Record<string, any>;
  /** `ledger ...args --json` that must be refused with `exit` and error `code`, changing nothing. */
  refused: (args: string[], exit: number, code: string, opts?: { cwd?: string }) => Run;
  write: (path: string, text: string) => void;
  read: (path: string) => string;
  /** `git add -A` and a commit; returns the new commit id. */
  commit: (subject: string, cwd?: string) => string;
  md: () => string;
  yml: () => any;
  cleanup: () => void;
}

/** A git repository at `<scratch>/<name>` holding `files`, committed once, with `ledger init`
 * run in it (which makes git ignore the key and the ledger) and that commit made too. */
export function scenario(name: string, files: Record<string, string>): Scenario {
  const key = JSON.stringify([name, files, process.env.LEDGER_NO_CACHE ?? '']);
  const kept = KEPT.get(key);
  if (kept && !existsSync(kept.base)) {
    copyTree(kept.copy, kept.base);
    return scenarioAt(name, kept.base);
  }
  const s = scratch(`ledger-scenario-${name}-`);
  const base = realpathSync(s.dir);
  const sc = scenarioAt(name, base, files);
  if (!kept) {
    KEPT.set(key, { base, copy: `${base}.kept` });
    copyTree(base, `${base}.kept`);
  }
  return sc;
}

/**
 * Speed: the scenarios built so far in this worker (by name, files and LEDGER_NO_CACHE), each as
 * its folder was right after `scenario()` made it. The next call with the same arguments copies it
 * back to the same path (`cp -a`: modes and times as they were), so the absolute paths inside (the
 * per-user state directory's marks, keyed by the ledger's real path) stay true: eight processes
 * (git init, two commits, `ledger init`) become one `cp`. A test still gets a repository and a
 * ledger no other test has touched, as the one before it left the copy alone; a call while that
 * path is still in use builds afresh. The copies go when the worker exits.
 */
const KEPT = new Map<string, { base: string; copy: string }>();
process.once('exit', () => {
  for (const { copy } of KEPT.values()) rmSync(copy, { recursive: true, force: true });
});


/** The scenario whose folder is `base`, made there first when `files` are given. */
function scenarioAt(name: string, base: string, files?: Record<string, string>): Scenario {
  const root = join(base, name);
  const home = join(base, 'home');
  // HOME and the state directory inside the scratch folder: a writer's marks (SPEC 5) and npm's
  // cache never touch the machine's own.
  const env = { HOME: home, LEDGER_STATE_DIR: join(base, 'state'), npm_config_cache: join(home, '.npm'), npm_config_update_notifier: 'false' };
  const run = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
    spawnLedgerSync(args, { cwd: opts.cwd ?? root, env: { ...env, ...(opts.env ?? {}) } });
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const commit = (subject: string, cwd = root) => {
    git(cwd, 'add', '-A');
    git(cwd, 'commit', '-q', '-m', subject);
    return git(cwd, 'rev-parse', 'HEAD').trim();
  };
  if (files) {
    mkdirSync(home);
    mkdirSync(root);
    git(root, 'init', '-q', '-b', 'main');
    for (const [path, text] of Object.entries(files)) write(path, text);
    commit('initial');
    const init = run(['init', '--name', name]);
    if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
    commit('handoff-ledger: the trust file and the ignore rules');
  }

  const sc: Scenario = {
    root, base, ledgerDir: join(root, '.ledger'),
    ledger: run,
    ok: (args, opts) => {
      const r = run([...args, '--json'], opts);
      expect(r.code, `ledger ${args.join(' ')}: ${r.stderr}`).toBe(0);
      const out = JSON.parse(r.stdout);
      // SPEC 10: a successful --json carries "ok": true (test/scenarios/README.md: cli-ux).
      expect(out.ok, `ledger ${args.join(' ')}: "ok": true`).toBe(true);
      return out;
    },
    refused: (args, exit, code, opts) => {
      const before = projectState(root);
      const r = run([...args, '--json'], opts);
      expect(r.code, `ledger ${args.join(' ')}: ${r.stderr}`).toBe(exit);
      expect(JSON.parse(r.stdout), args.join(' ')).toMatchObject({ ok: false, error: { code } });
      expect(r.stderr.trimEnd().split('\n'), `one line: ${r.stderr}`).toHaveLength(1);
      expect(projectState(root), `ledger ${args.join(' ')} changed nothing`).toEqual(before);
      return r;
    },
    write,
    read: (path) => readFileSync(join(root, path), 'utf8'),
    commit,
    md: () => readFileSync(join(root, 'HANDOFF.md'), 'utf8'),
    yml: () => parse(readFileSync(join(root, 'HANDOFF.yml'), 'utf8')),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
  return sc;
}

/** What `git status` and a `git add -A` would take: never the secret key, never the ledger. */
export function expectKeyNeverInGit(sc: Scenario, cwd = sc.root): void {
  const listed = statusPaths(cwd);
  expect(listed.filter((p) => /harness\.key$|^\.ledger\//.test(p)), `git status: ${listed.join(', ')}`).toEqual([]);
  expect(existsSync(join(sc.root, 'keys/harness.key'))).toBe(true);
}
