// Every cache is a Ledger's (src/cache/README.md), never a module's: no module of src/ keeps a
// mutable binding (a top-level `let`, or a Map, Set or WeakMap made at the top level) unless it
// is listed here with why it is not a cache. Names in capitals are constants (sets of kinds,
// codes) and are not counted. A cache added as module state fails this test; one kept by the
// Ledger (LedgerCache) needs no test to reset it.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** file:name -> why it is not a cache. */
const NOT_CACHES: Record<string, string> = {
  'src/text/sanitize.ts:unsafeG': 'a regular expression compiled on first use: code, not data',
  'src/text/sanitize.ts:unsafe1': 'a regular expression compiled on first use: code, not data',
  'src/fs/durable.ts:pool': 'random bytes for temp names: derived from nothing it could go stale against',
  'src/fs/durable.ts:poolAt': 'where the random pool is read next',
  'src/store/lock.ts:orphaned': 'the locks this thread took and failed to remove: its own acquisitions, not what it read',
  'src/store/lock.ts:noncePrefix': 'a nonce source (random per process)',
  'src/store/lock.ts:nonceCount': 'a nonce source (counted within the process)',
  'src/cli/commands/common.ts:located': 'where one command\'s ledger is, keyed by that command\'s I/O object: it dies with the command',
  'src/handoff/secret-scan.ts:needlesOf': 'the forms of one secret key, keyed by that key\'s object (a WeakMap): it dies with the key, and depends on nothing else',
  'src/handoff/yaml-lib.ts:lib': 'a library loaded on first use: code, not data',
  'src/causal/evidence/git.ts:childProcess': 'a builtin module loaded on first use',
  'src/canonical.ts:oneShotHash': 'a builtin function loaded on first use',
  'src/canonical.ts:pureBytes': 'how many bytes this process hashed in JavaScript: which implementation computes SHA-256, not what it computes',
  'src/node-crypto.ts:loaded': 'whether a builtin module was loaded: code, not data',
  'src/fs/confine.ts:roots': 'the folders this process works in, registered as it opens them: where paths are resolved from, not anything read from them',
  'src/fs/boundary.ts:decided': 'whom the command acts for, keyed by that command\'s environment object (a WeakMap): it dies with the environment, and depends on nothing else',
  'src/fs/boundary.ts:scoped': 'the environment of the command running now (set by the CLI for one command)',
  'src/tlog/hash.ts:oneShot': 'a builtin function loaded on first use',
  'src/tlog/hash.ts:scratch': 'working memory of one hash (its input put together, then hashed at once): nothing is read from it after the call',
  'src/cli/commands/common.ts:publishedWrites': 'which runs of the CLI published a write (keyed by that run\'s io, a WeakMap): what happens after that command, gone with it',
  'src/progress.ts:sink': 'where the CLI reports a long scan\'s progress (installed by the CLI)',
  'src/launch/bundle-loader.cts:loaded': 'the launcher\'s loaded bundles: the program, not the library',
  'src/demo/demo.ts:work': 'the demo script\'s own state (not shipped)',
  'src/demo/demo.ts:stepNo': 'the demo script\'s own state (not shipped)',
  'src/demo/demo.ts:stepTitle': 'the demo script\'s own state (not shipped)',
  'src/demo/demo.ts:passed': 'the demo script\'s own state (not shipped)',
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** The module-level mutable bindings of a source file (by the text of its top-level lines). */
function mutableBindings(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:export )?let ([A-Za-z_$][\w$]*)/gm)) out.push(m[1]);
  for (const m of text.matchAll(/^(?:export )?const ([A-Za-z_$][\w$]*)(?::[^=]+)? = new (?:Map|Set|WeakMap)\b/gm)) if (!/^[A-Z0-9_]+$/.test(m[1])) out.push(m[1]);
  return out;
}

describe('module state', () => {
  const found = files(join(ROOT, 'src')).flatMap((f) => mutableBindings(readFileSync(f, 'utf8')).map((name) => `${relative(ROOT, f)}:${name}`));

  it('finds what it looks for (the scan is not vacuous)', () => {
    expect(found).toEqual(expect.arrayContaining(['src/store/lock.ts:orphaned', 'src/text/sanitize.ts:unsafeG']));
    expect(mutableBindings('let memo = null;\nconst seen = new Map<string, number>();\nconst KINDS = new Set([1]);\n')).toEqual(['memo', 'seen']);
  });

  it('no module keeps a cache: every mutable module-level binding is listed with why it is not one', () => {
    expect(found.filter((f) => !(f in NOT_CACHES))).toEqual([]);
  });

  it('the list names nothing that is gone', () => {
    expect(Object.keys(NOT_CACHES).filter((k) => !found.includes(k))).toEqual([]);
  });
});
