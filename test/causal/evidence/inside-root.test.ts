// Resolving a source path inside the project root, one component at a time (SPEC 9).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locateInsideRoot } from '../../../src/causal/evidence/inside-root.js';
import { realEvidenceOps } from '../../../src/causal/evidence/read-ops.js';
import { LedgerError } from '../../../src/errors.js';
import { scratch } from '../../helpers/cli.js';

let s: ReturnType<typeof scratch>;
afterEach(() => s?.cleanup());

function root(): string {
  s = scratch('ledger-root-');
  const r = join(s.dir, 'proj');
  mkdirSync(join(r, 'src/deep'), { recursive: true });
  writeFileSync(join(r, 'src/a.txt'), 'a');
  return r;
}
const locate = (r: string, given: string, base = r) => locateInsideRoot(realEvidenceOps, given, base, r, given);
const refusal = (f: () => unknown): LedgerError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LedgerError);
    return e as LedgerError;
  }
  throw new Error('expected a refusal');
};

describe('locating evidence inside the project root', () => {
  it('records a path relative to the root, from any working directory inside it', () => {
    const r = root();
    expect(locate(r, 'src/a.txt').recorded).toBe('src/a.txt');
    expect(locate(r, '../a.txt', join(r, 'src/deep')).recorded).toBe('src/a.txt');
    expect(locate(r, join(r, 'src/a.txt')).recorded).toBe('src/a.txt');
    expect(locate(r, '.').recorded).toBe('.');
  });

  it('follows links that stay inside, relative or absolute, with `..` in a target taken the POSIX way', () => {
    const r = root();
    symlinkSync('src/deep/..', join(r, 'rel'));
    symlinkSync(join(r, 'src'), join(r, 'abs'));
    expect(locate(r, 'rel/a.txt').real).toBe(join(r, 'src/a.txt'));
    expect(locate(r, 'abs/a.txt').real).toBe(join(r, 'src/a.txt'));
    // Policy: the path as given is normalised lexically first, as path.resolve does, so
    // `abs/../x` is the root's `x`: never a read outside, whatever `abs` points at.
    expect(refusal(() => locate(r, 'abs/../a.txt')).data.missing).toBe(true);
  });

  it('refuses a link loop without hanging, and a missing file as missing', () => {
    const r = root();
    symlinkSync('loop-b', join(r, 'loop-a'));
    symlinkSync('loop-a', join(r, 'loop-b'));
    expect(refusal(() => locate(r, 'loop-a')).message).toContain('too many symbolic links');
    expect(refusal(() => locate(r, 'nope.txt')).data.missing).toBe(true);
    expect(refusal(() => locate(r, 'src/a.txt/x')).data.missing).toBe(true);
  });

  it('refuses a path that steps outside even when it would come back in', () => {
    const r = root();
    symlinkSync(`../proj/src`, join(r, 'round-trip'));
    expect(refusal(() => locate(r, 'round-trip/a.txt')).data.outside).toBe(true);
    expect(refusal(() => locate(r, '../other/a.txt')).data.outside).toBe(true);
    expect(refusal(() => locate(r, '..')).data.outside).toBe(true);
  });
});
