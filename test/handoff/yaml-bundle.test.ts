// The CLI writes HANDOFF.yml with its own bundle of yaml (dist/cli/yaml.cjs: Document, visit and
// isScalar from the package's ESM build, without the parser; src/launch/build.mjs). It must
// write exactly what the yaml package writes, for any value the views can hold.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import type { CliYaml } from '../../src/handoff/yaml-lib.js';
import { ROOT } from '../helpers/cli.js';
import { runs } from '../helpers/runs.js';

const bundled = createRequire(import.meta.url)(join(ROOT, 'dist/cli/yaml.cjs')) as CliYaml;

const render = (lib: CliYaml, value: unknown) => {
  const doc = new lib.Document(value);
  lib.visit(doc, { Scalar(_k, node) { if (lib.isScalar(node) && typeof node.value === 'string' && node.value.includes('\u202e')) node.type = 'QUOTE_DOUBLE'; } });
  return doc.toString({ lineWidth: 0 });
};

describe("the CLI's bundle of yaml", () => {
  it('holds what the views use, and writes byte for byte what the package writes', () => {
    expect(Object.keys(bundled).sort()).toEqual(['Document', 'isScalar', 'version', 'visit']);
    // The package's own version, as the bundle names it.
    expect(bundled.version).toBe((createRequire(import.meta.url)('yaml/package.json') as { version: string }).version);
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('', 'a: b', '- x', '#', 'null', '1e3', '\u202e', 'line\nline\n', ' lead', 'trail ', "'q'", '"dq"'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.boolean(), fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(text, tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(fc.property(value, (v) => {
      expect(render(bundled, v)).toBe(render(yaml as unknown as CliYaml, v));
    }), { numRuns: runs(200, 5000) });
  });
});
