// The auditor is the independent second reader (STYLE, issue 3): audit/ imports only the pure
// modules, never the store, the causal or handoff code, or the CLI, not even through another file.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const AUDIT = join(ROOT, 'audit');

/** The only modules outside audit/ that audit/ may import directly. */
const ALLOWED = ['src/canonical.ts', 'src/record.ts', 'src/sign.ts', 'src/ed25519-reference.ts', 'src/keys/trust.ts', 'src/errors.ts'];
/** Never reachable from audit/, directly or through anything it imports. */
const FORBIDDEN = [/^src\/fs\//, /^src\/store\//, /^src\/causal\//, /^src\/handoff\//, /^src\/cli/, /^src\/ledger/];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every import/export-from/dynamic import specifier of a file (type-only imports included). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm)) {
    out.push(m[1] ?? m[2] ?? m[3]);
  }
  return out;
}

/** A relative specifier (./x.js) to the .ts file it names, relative to ROOT; null for packages. */
function resolveTs(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const abs = resolve(dirname(from), spec).replace(/\.js$/, '.ts');
  return relative(ROOT, existsSync(abs) ? abs : abs.replace(/\.ts$/, '/index.ts'));
}

describe('audit/ independence', () => {
  const files = tsFiles(AUDIT);

  it('finds the audit sources (the scan is not vacuous)', () => {
    expect(files.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['audit/index.ts', 'audit/schema.ts', 'audit/linkage.ts', 'audit/signature.ts', 'audit/keypin.ts', 'audit/freshness.ts']));
    expect(specifiers(join(AUDIT, 'index.ts'))).toEqual(expect.arrayContaining(['../src/errors.js', './schema.js']));
  });

  it('imports, directly, only audit/ files, node: builtins and the six pure modules', () => {
    const bad: string[] = [];
    for (const f of files) {
      for (const spec of specifiers(f)) {
        if (spec.startsWith('node:')) continue;
        const target = resolveTs(f, spec);
        if (target === null) bad.push(`${relative(ROOT, f)} imports package ${spec}`);
        else if (!target.startsWith('audit/') && !ALLOWED.includes(target)) bad.push(`${relative(ROOT, f)} imports ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('never reaches the store, causal, handoff or CLI code through what it imports', () => {
    const seen = new Set<string>();
    const queue = files.map((f) => relative(ROOT, f));
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const spec of specifiers(join(ROOT, file))) {
        const target = resolveTs(join(ROOT, file), spec);
        if (target !== null && existsSync(join(ROOT, target))) queue.push(target);
      }
    }
    const reached = [...seen].filter((f) => FORBIDDEN.some((re) => re.test(f)));
    expect(reached).toEqual([]);
    expect(seen.has('src/keys/trust.ts')).toBe(true);
  });
});
