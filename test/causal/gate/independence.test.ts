// The gate's terms are pure (issue 12): they read a GateInputs and nothing else. Only inputs.ts
// touches the CausalView, the evidence context or the disk; this test reads the imports of the
// term files (and of everything they load at run time) and fails if that changes.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const GATE = 'src/causal/gate';
/** The term functions and the pure modules beside them (the gate's request is checked in src/requests/causal.ts). */
const PURE = ['handoff-valid.ts', 'outcome-accepted.ts', 'invariants-satisfied.ts', 'state-current.ts', 'dependencies-true.ts', 'index.ts', 'format.ts', 'types.ts'].map((f) => `${GATE}/${f}`);
/** What a term must never reach: the ledger reader, the evidence re-digest, the disk. */
const FORBIDDEN = [/^src\/causal\/view\.ts$/, /^src\/causal\/verified\.ts$/, /^src\/causal\/record-index/, /^src\/causal\/evidence\.ts$/, /^src\/causal\/gate\/inputs\.ts$/, /^src\/store\//, /^src\/fs\//, /^node:/];

interface Import { spec: string; typeOnly: boolean }

/** Every import, export-from and dynamic import of a file, and whether it is erased (type-only). */
function imports(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: Import[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm)) {
    out.push({ spec: m[3] ?? m[4] ?? m[5], typeOnly: Boolean(m[2]) });
  }
  return out;
}

/** A specifier as a path relative to ROOT (node: builtins and packages as written). */
function target(from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const abs = resolve(dirname(join(ROOT, from)), spec).replace(/\.js$/, '.ts');
  return relative(ROOT, existsSync(abs) ? abs : abs.replace(/\.ts$/, '/index.ts'));
}

const forbidden = (t: string) => FORBIDDEN.some((re) => re.test(t));

describe('the gate\'s terms read only their inputs', () => {
  it('finds the gate sources (the scan is not vacuous)', () => {
    const here = readdirSync(join(ROOT, GATE)).map((f) => `${GATE}/${f}`);
    expect(here).toEqual(expect.arrayContaining([...PURE, `${GATE}/inputs.ts`]));
    // Every .ts file in the folder is either pure or the collection step.
    expect(here.filter((f) => f.endsWith('.ts') && !PURE.includes(f))).toEqual([`${GATE}/inputs.ts`]);
    expect(imports(`${GATE}/inputs.ts`).map((i) => target(`${GATE}/inputs.ts`, i.spec))).toEqual(expect.arrayContaining(['src/causal/view.ts', 'src/causal/evidence.ts']));
  });

  it('a term file imports nothing from view.ts, evidence.ts, the store or node:, not even a type', () => {
    const terms = PURE.filter((f) => !/\/(index|format|types)\.ts$/.test(f));
    const bad = terms.flatMap((f) => imports(f).map((i) => target(f, i.spec)).filter(forbidden).map((t) => `${f} imports ${t}`));
    expect(bad).toEqual([]);
  });

  it('nothing the gate index loads at run time reaches the view, the evidence re-digest or the disk', () => {
    const seen = new Set<string>();
    const queue = [`${GATE}/index.ts`];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      if (forbidden(file) || !file.endsWith('.ts')) continue;
      for (const i of imports(file)) if (!i.typeOnly) queue.push(target(file, i.spec));
    }
    expect([...seen].filter(forbidden)).toEqual([]);
    // The walk follows imports: from index.ts it reaches every term file.
    expect([...seen]).toEqual(expect.arrayContaining(PURE.filter((f) => !f.endsWith('/types.ts'))));
  });

  it('the data types name the evidence check only as a type, erased at run time', () => {
    const typeImports = imports(`${GATE}/types.ts`);
    expect(typeImports.map((i) => target(`${GATE}/types.ts`, i.spec))).toContain('src/causal/evidence.ts');
    expect(typeImports.every((i) => i.typeOnly)).toBe(true);
  });
});
