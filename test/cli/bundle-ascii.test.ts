// The shipped CLI bundle is ASCII: one non-ASCII character anywhere (a regular expression
// literal, which esbuild cannot escape) makes V8 hold the whole ~500 KB source as two-byte text,
// twice the bytes every start reads and hashes. Source files write such characters as \u escapes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

describe('the shipped CLI bundle and its library bundles', () => {
  for (const file of ['bundle.cjs', 'yaml.cjs']) {
    it(`${file} holds only ASCII bytes`, () => {
      const bytes = readFileSync(join(ROOT, 'dist/cli', file));
      const at = bytes.findIndex((b) => b > 0x7f);
      expect(at === -1 ? null : bytes.subarray(Math.max(0, at - 60), at + 20).toString('utf8')).toBeNull();
    });
  }
});
