// src/store/head-memo.ts: the HEAD this user last verified, by its exact bytes, lets a read skip
// verifying HEAD's signature again, and nothing else. The memo is believed only from a regular
// file of this user's own that no one else can write, and only for exactly those bytes; any other
// memo (another HEAD, a link, a wider mode, another owner, the caches off) means the signature is
// verified for real. Proven with a HEAD whose signature does not verify: a memo that vouched for
// it would let it through, so each refusal below shows the memo was not believed.
import { chmodSync, chownSync, existsSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realFileOps } from '../../src/fs/ops.js';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { LedgerCache } from '../../src/cache/ledger-cache.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { signerFor } from '../helpers/gen-ledger.js';
import { scratch } from '../helpers/cli.js';

let s: ReturnType<typeof scratch>;
let dir: string;
let state: string;
const key = signerFor('harness');
const intent = (i: number) => ({ kind: 'intent', agent: 'a', logical_operation_id: 'op', execution_id: `x${i}`, action: 'a' }) as Draft;

beforeEach(() => {
  s = scratch('head-memo-');
  dir = join(s.dir, '.ledger');
  state = join(s.dir, 'state');
  Ledger.init({ dir, key, agent: 'a', stateDir: state });
  Ledger.open({ dir, key, stateDir: state }).append([intent(1), intent(2)]);
});
afterEach(() => s.cleanup());

/** Reads HEAD as a fresh process would (a new LedgerCache; `on`: the caches on). */
const read = (on = true) => {
  const paths = ledgerPaths(dir, state, new LedgerCache(on, state));
  return readHead(realFileOps, paths);
};
const memoDir = () => join(state, 'head');
const memoFile = () => {
  const names = readdirSync(memoDir());
  expect(names).toHaveLength(1);
  return join(memoDir(), names[0]);
};

/** HEAD with one character of its signature changed: canonical and well formed, but it does not verify. */
function forgeHead(): Buffer {
  const good = readFileSync(join(dir, 'HEAD'), 'utf8');
  const value = (JSON.parse(good) as { sig: { value: string } }).sig.value;
  const bad = value.slice(0, 10) + (value[10] === 'A' ? 'B' : 'A') + value.slice(11);
  const forged = Buffer.from(good.replace(value, bad));
  writeFileSync(join(dir, 'HEAD'), forged);
  return forged;
}

describe('the HEAD memo', () => {
  it('a reader\'s real verification writes it, exactly HEAD\'s bytes; a writer (a Ledger with a key) keeps none', () => {
    expect(existsSync(memoDir())).toBe(false); // beforeEach's writer appended
    read();
    expect(readFileSync(memoFile()).equals(readFileSync(join(dir, 'HEAD')))).toBe(true);
    expect(readdirSync(state)).toContain('head');
  });

  it('a forged HEAD is refused without a memo, and a memo of other bytes changes nothing', () => {
    read();
    forgeHead();
    expect(() => read()).toThrow(/signature that does not verify/);
    // The memo still names the HEAD that verified; the forged one was never written there.
    expect(() => read()).toThrow(/signature that does not verify/);
  });

  it('it is what skips the check: this user\'s own memo of the very bytes lets them through (the control for the tests below)', () => {
    read();
    const forged = forgeHead();
    writeFileSync(memoFile(), forged); // as this user, 0600: what only this user could do
    expect(read()!.seq).toBe(2);
  });

  it('with the caches off it is neither read nor written', () => {
    rmSync(memoDir(), { recursive: true, force: true }); // none yet (a writer keeps none): made sure
    expect(read(false)!.seq).toBe(2);
    expect(existsSync(memoDir())).toBe(false);
    read();
    const forged = forgeHead();
    writeFileSync(memoFile(), forged); // the memo that lets them through with the caches on (above)
    expect(() => read(false)).toThrow(/signature that does not verify/);
  });

  it('a memo that is a link, writable by its group or others, or another user\'s is not believed', () => {
    read();
    const forged = forgeHead();
    const file = memoFile();
    // A link to a file holding the forged bytes.
    const elsewhere = join(s.dir, 'elsewhere');
    writeFileSync(elsewhere, forged, { mode: 0o600 });
    rmSync(file);
    symlinkSync(elsewhere, file);
    expect(() => read()).toThrow(/signature that does not verify/);
    // The forged bytes, in a file its group or anyone may write.
    for (const mode of [0o620, 0o602]) {
      rmSync(file);
      writeFileSync(file, forged);
      chmodSync(file, mode);
      expect(() => read()).toThrow(/signature that does not verify/);
    }
    // Another user's file (only root can make one to test with).
    if (process.getuid?.() === 0) {
      rmSync(file);
      writeFileSync(file, forged, { mode: 0o600 });
      chownSync(file, 4242, 4242);
      expect(() => read()).toThrow(/signature that does not verify/);
    }
  });

  it('a verdict never comes from the memo alone: a torn or empty memo is verified for real, and rewritten', () => {
    read();
    const file = memoFile();
    const good = readFileSync(join(dir, 'HEAD'));
    writeFileSync(file, good.subarray(0, 20));
    expect(read()!.seq).toBe(2);
    expect(readFileSync(file).equals(good)).toBe(true);
    writeFileSync(file, '');
    forgeHead();
    expect(() => read()).toThrow(/signature that does not verify/);
    expect(existsSync(file)).toBe(true);
  });
});
