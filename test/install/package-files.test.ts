// What `npm pack` ships (the files the tarball holds, read with --dry-run): one CLI, the bundled
// one `bin` names, with its caches and audit worker; the library and the auditor whole. Installing
// that tarball into another project is test/install/pack.test.ts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

describe('the package', () => {
  // What `npm pack` would put in the tarball (nothing is written; scripts are not run), asked
  // once for both tests.
  let files: string[] | null = null;
  const packed = (): string[] => {
    if (files) return files;
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path).sort();
    return files;
  };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; main: string; types: string; exports: unknown };
  /** Every file path in package.json's "exports" (its leaves), without the leading ./ */
  const exported = (e: unknown): string[] =>
    typeof e === 'string' ? [e.replace(/^\.\//, '')] : e && typeof e === 'object' ? Object.values(e).flatMap(exported) : [];

  it('ships one CLI, the bundled one that `bin` names, with its cache and audit worker, and no demo', () => {
    const files = packed();
    // Two names (`ledger`, and `handoff-ledger` for `npx` from another project), one file.
    expect(pkg.bin).toEqual({ ledger: 'dist/cli/ledger.cjs', 'handoff-ledger': 'dist/cli/ledger.cjs' });
    // yaml.cjs and its cache: the library the verbs that render HANDOFF.yml load on first use.
    // The shared cache, and one of its own for each verb of VERB_CACHES (bundle-loader.cts, as built).
    const { VERB_CACHES } = createRequire(import.meta.url)(join(ROOT, 'dist/src/launch/bundle-loader.cjs')) as { VERB_CACHES: readonly string[] };
    const verbCaches = [...VERB_CACHES].sort().map((v) => `dist/cli/bundle.${v}.cache`);
    // mcp-listing.json: what `ledger mcp` answers before it loads the SDK (src/agents/mcp-listing.ts).
    expect(files.filter((f) => f.startsWith('dist/cli/')).sort()).toEqual([...verbCaches, 'dist/cli/bundle.cache', 'dist/cli/bundle.cjs', 'dist/cli/cache-writer.cjs', 'dist/cli/ledger.cjs', 'dist/cli/mcp-listing.json', 'dist/cli/worker.js', 'dist/cli/yaml.cache', 'dist/cli/yaml.cjs'].sort());
    expect(files.filter((f) => /^dist\/src\/(cli|demo|launch)\//.test(f))).toEqual([]);
    expect(files.some((f) => f.includes('/demo/') || f.includes('prime-cache'))).toBe(false);
  });

  it('ships the library and the auditor whole: every entry point, and every module they import', () => {
    const files = packed();
    for (const f of [pkg.main, pkg.types, ...exported(pkg.exports), 'dist/audit/index.js', 'dist/audit/worker.js']) expect(files, f).toContain(f);
    for (const f of files.filter((p) => p.endsWith('.js') && !p.startsWith('dist/cli/'))) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.\.?\/[^'"]+)['"]/g)) {
        expect(files, `${f} imports ${m[1]}`).toContain(relative(ROOT, resolve(dirname(join(ROOT, f)), m[1])));
      }
    }
  });
});
