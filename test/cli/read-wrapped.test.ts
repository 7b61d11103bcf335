// The launcher reads a bundle already wrapped as CommonJS wraps it (src/launch/bundle-loader.cts
// readWrapped), in one string: the same text as Module.wrap of the file read the plain way, for
// any bytes, the shipped bundles included.
import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runs } from '../helpers/runs.js';
import { ROOT } from '../helpers/cli.js';

const { readWrapped } = createRequire(import.meta.url)(join(ROOT, 'dist/src/launch/bundle-loader.cjs')) as { readWrapped(file: string): string };
const wrap = (text: string) => (Module as unknown as { wrap(s: string): string }).wrap(text);

describe('the launcher reading a bundle', () => {
  it('reads the shipped bundles as Module.wrap of their text', () => {
    for (const f of ['dist/cli/bundle.cjs', 'dist/cli/yaml.cjs']) expect(readWrapped(join(ROOT, f)) === wrap(readFileSync(join(ROOT, f), 'utf8')), f).toBe(true);
  });

  it('property: any bytes (not UTF-8 ones too) read as Module.wrap of the file read the plain way', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wrapped-'));
    const file = join(dir, 'b.cjs');
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.string({ unit: 'binary', maxLength: 40 }).map((s) => Buffer.from(s, 'utf8'))), (bytes) => {
      writeFileSync(file, bytes);
      expect(readWrapped(file)).toBe(wrap(readFileSync(file, 'utf8')));
    }), { numRuns: runs(200, 5_000) });
  });
});
