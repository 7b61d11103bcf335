// The dependency direction of STYLE.md: the Ledger (src/ledger.ts) sits above the rules it
// applies, so nothing under it imports it, and the CLI sits above the Ledger. An append goes
// cli -> a typed request (src/requests/) -> ledger -> causal and handoff rules -> store -> fs,
// never back up, and the CLI and the MCP server reach nothing below the Ledger but the requests,
// the formats and the text (issue 22: one request path). Beside that line:
// src/text/ (record text made safe to show) is pure and lowest, importing nothing outside
// itself, so every layer may use it; src/project/ (finding the ledger directory: the upward
// search, git worktrees) sits above the store, whose names it uses, and below everything that
// takes a ledger directory found for it (the Ledger, the public API, the CLI).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** Every file a source file imports (static, dynamic, type-only, for its side effects), relative to ROOT. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]+)['"]|import\s*\(\s*['"](\.[^'"]+)['"]\s*\)|^\s*import\s*['"](\.[^'"]+)['"]/gm)) {
    out.push(relative(ROOT, resolve(dirname(file), (m[1] ?? m[2] ?? m[3]).replace(/\.js$/, '.ts'))));
  }
  return out;
}

/** Lower first: a file may import only files of its own rank or lower. */
const RANK: [RegExp, number][] = [
  [/^src\/text\//, 0],
  [/^src\/(canonical|record|record-line|sign|sign-batch|ed25519-reference|errors)\.ts$/, 0],
  [/^src\/keys\//, 1],
  [/^audit\//, 1],
  [/^src\/fs\//, 2],
  [/^src\/store\//, 3],
  [/^src\/cache\//, 3],
  [/^src\/project\//, 3.5],
  [/^src\/requests\//, 3.8],
  [/^src\/causal\//, 4],
  [/^src\/handoff\//, 5],
  [/^src\/remote\//, 5.5],
  [/^src\/ledger\.ts$/, 6],
  [/^src\/agents\//, 6.5],
  [/^src\/(index|formats)\.ts$/, 7],
  [/^src\/cli\//, 8],
];
const rankOf = (f: string) => RANK.find(([re]) => re.test(f))?.[1];

describe('the layers', () => {
  const files = [...tsFiles(join(ROOT, 'src')), ...tsFiles(join(ROOT, 'audit'))].map((f) => relative(ROOT, f));

  it('finds the files the rule is about (the scan is not vacuous)', () => {
    expect(files).toEqual(expect.arrayContaining(['src/ledger.ts', 'src/causal/retry.ts', 'src/causal/gate-run.ts', 'src/handoff/workflow.ts', 'src/handoff/views.ts', 'src/cli/commands/handoff-verbs.ts']));
    expect(imports(join(ROOT, 'src/ledger.ts'))).toEqual(expect.arrayContaining(['src/causal/retry.ts', 'src/handoff/workflow.ts']));
  });

  it('nothing below the Ledger imports it, and nothing but the CLI imports the CLI', () => {
    const bad: string[] = [];
    for (const f of files) {
      const r = rankOf(f);
      for (const t of imports(join(ROOT, f))) {
        if (t === 'src/ledger.ts' && r !== undefined && r < 6) bad.push(`${f} imports ${t}`);
        if (t.startsWith('src/cli/') && !f.startsWith('src/cli/')) bad.push(`${f} imports ${t}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('the rules import downwards: causal never the handoff log, the store neither of them', () => {
    const bad: string[] = [];
    for (const f of files.filter((x) => /^src\/(store|cache|causal|handoff|project|text|requests)\//.test(x))) {
      for (const t of imports(join(ROOT, f))) {
        const rt = rankOf(t);
        if (rt !== undefined && rt > rankOf(f)!) bad.push(`${f} imports ${t}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('src/text/ is pure: it imports nothing outside itself (no node: module, no other layer)', () => {
    const text = files.filter((f) => f.startsWith('src/text/'));
    expect(text).toEqual(expect.arrayContaining(['src/text/sanitize.ts', 'src/text/markdown.ts']));
    const bad: string[] = [];
    for (const f of text) {
      for (const t of imports(join(ROOT, f))) if (!t.startsWith('src/text/')) bad.push(`${f} imports ${t}`);
      if (/(?:from\s*|import\s*\(\s*)['"](?!\.)[^'"]+['"]/.test(readFileSync(join(ROOT, f), 'utf8'))) bad.push(`${f} imports a package or node: module`);
    }
    expect(bad).toEqual([]);
  });

  it('src/project/ imports only the store and below, and is imported only from the Ledger up', () => {
    const project = files.filter((f) => f.startsWith('src/project/'));
    expect(project).toEqual(expect.arrayContaining(['src/project/locate.ts', 'src/project/git.ts']));
    expect(imports(join(ROOT, 'src/project/locate.ts'))).toEqual(expect.arrayContaining(['src/store/discover.ts']));
    const bad: string[] = [];
    for (const f of files) {
      for (const t of imports(join(ROOT, f))) {
        if (f.startsWith('src/project/') && !t.startsWith('src/project/') && (rankOf(t) === undefined || rankOf(t)! > 3)) bad.push(`${f} imports ${t}`);
        if (t.startsWith('src/project/') && !f.startsWith('src/project/') && (rankOf(f) === undefined || rankOf(f)! < 3.5)) bad.push(`${f} imports ${t}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('every file of src/text/ and src/project/ has a rank', () => {
    expect(files.filter((f) => /^src\/(text|project)\//.test(f) && rankOf(f) === undefined)).toEqual([]);
  });

  describe('the one request path (issue 22)', () => {
    /**
     * What the CLI and the MCP server may import from below them: the Ledger and the public API
     * (src/index.ts, src/formats.ts: the Ledger, its types, the output formatters, keys and trust
     * files), the requests and their checks, the errors, the record's types and constants, the text
     * layer, the project (where a ledger is, what init makes around it), and the progress sink.
     * Never the store, the folds or the rules themselves.
     */
    const ALLOWED = [
      /^src\/(ledger|index|formats|errors|record|progress)\.ts$/,
      /^src\/requests\//,
      /^src\/text\//,
      /^src\/project\//,
      // the privilege boundary (issue 23): whom the command acts for, decided by the CLI before anything is read
      /^src\/fs\/boundary\.ts$/,
      // node:crypto itself, loaded where first used (issue 22): the same as importing node:crypto
      /^src\/node-crypto\.ts$/,
      /^src\/agents\//,
      /^src\/cli\//,
    ];
    /**
     * Policy: beside the request path, two parts of the agents layer keep what their work needs:
     * the hooks' rules read the work log the Ledger hands them (its types) and the one lease
     * boundary (handoff/lease.ts); setup writes the agents' config files (never the ledger) by
     * the durable recipe (fs/). Listed one by one, so nothing else can join them unseen.
     */
    const BESIDE: Record<string, RegExp[]> = {
      'src/agents/hooks/rules.ts': [/^src\/handoff\/(lease|status|workitems)\.ts$/],
      'src/agents/hooks/events.ts': [/^src\/handoff\/status\.ts$/],
      'src/agents/setup/common.ts': [/^src\/fs\/(durable|ops)\.ts$/],
      // Issue 24: the stop rule compares the work tree's content as a checkpoint recorded it (the
      // one digest, handoff/code-place.ts); a StopFailure is marked for its session's SessionEnd in
      // the per-user state directory (store/state-dir.ts names it) under a hashed session id, written
      // by the durable recipe (fs/), as setup writes.
      'src/agents/hooks/worktree.ts': [/^src\/handoff\/code-place\.ts$/],
      // Issue 23: that mark is written by the durable recipe through the seam (no link followed in
      // the state directory), and a caller-named transcript read only if the caller's (fs/boundary.ts).
      'src/agents/hooks/stop-failure.ts': [/^src\/canonical\.ts$/, /^src\/store\/state-dir\.ts$/, /^src\/fs\/(durable|ops)\.ts$/],
    };
    const front = files.filter((f) => /^src\/(cli|agents)\//.test(f));

    it('finds the CLI and the MCP server (the scan is not vacuous)', () => {
      expect(front).toEqual(expect.arrayContaining(['src/cli/cli.ts', 'src/cli/commands/handoff-verbs.ts', 'src/agents/mcp-server.ts', 'src/agents/mcp-front.ts', 'src/agents/tools/work.ts']));
      expect(imports(join(ROOT, 'src/cli/commands/handoff-verbs.ts'))).toEqual(expect.arrayContaining(['src/index.ts', 'src/requests/work.ts']));
      expect(imports(join(ROOT, 'src/agents/tools/read.ts'))).toContain('src/index.ts');
    });

    it('cli/ and agents/ import nothing below the Ledger but the requests, the formats, the text and the project', () => {
      const bad: string[] = [];
      for (const f of front) {
        for (const t of imports(join(ROOT, f))) {
          if (ALLOWED.some((re) => re.test(t)) || (BESIDE[f] ?? []).some((re) => re.test(t))) continue;
          bad.push(`${f} imports ${t}`);
        }
      }
      expect(bad).toEqual([]);
    });

    it('the requests are pure: their checks read no file and run nothing (no node: module)', () => {
      const requests = files.filter((f) => f.startsWith('src/requests/'));
      expect(requests).toEqual(expect.arrayContaining(['src/requests/work.ts', 'src/requests/causal.ts', 'src/requests/read.ts', 'src/requests/fields.ts', 'src/requests/checked.ts']));
      const bad = requests.filter((f) => /(?:from\s*|import\s*\(\s*)['"]node:/.test(readFileSync(join(ROOT, f), 'utf8')));
      expect(bad).toEqual([]);
    });
  });
});
