// LEDGER_NO_CACHE=1 (src/cache/README.md): every verb gives the same answers with no cache at all,
// and none is read or written, in memory or on disk. Two copies of one project run the same
// verbs, one with its caches (each read verb twice, so the second is answered from them) and one
// without; their outputs are the same but for what a write's own clock makes different (times,
// and the ids and signatures over them). The copy without caches never makes a cache file, and
// never reads one planted where a cache would be (a fold memo that hides an item).
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratch, spawnLedgerSync, type Run } from '../helpers/cli.js';
import { git } from '../helpers/git-repo.js';
import { MEMO_VERSION } from '../../src/handoff/fold-memo.js';

let base: string;
let cleanup: () => void;
const side = (name: 'cached' | 'uncached') => ({ root: join(base, name), state: join(base, `${name}-state`), home: join(base, 'home') });

function run(name: 'cached' | 'uncached', args: string[], agent = 'claude', stdin?: string): Run {
  const s = side(name);
  const env: Record<string, string> = { HOME: s.home, LEDGER_STATE_DIR: s.state, LEDGER_AGENT: agent, LEDGER_NO_CACHE: name === 'uncached' ? '1' : '' };
  return spawnLedgerSync(args, { cwd: s.root, env, stdin });
}

/**
 * An output with what a write's clock decides made comparable: each root and state directory,
 * times (ISO and relative), every id, id prefix and signature, named by its first appearance.
 */
function normal(name: 'cached' | 'uncached', text: string): string {
  const s = side(name);
  const ids = new Map<string, string>();
  return text
    .split(s.root).join('<root>')
    .split(s.state).join('<state>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ/g, '<time>')
    .replace(/\b\d+(ms|s|m|h|d)\b/g, '<span>')
    // A table's columns are as wide as their widest cell, a span among them ("9s ago" or "10s
    // ago"): the padding of every cell and header is as much the clock's as the span itself.
    .replace(/ {2,}/g, '  ')
    .replace(/"value":"[A-Za-z0-9_-]{86}"/g, '"value":"<sig>"')
    .replace(/"(ms|age_ms)":\d+/g, '"$1":<ms>')
    // The floor cache (store/user-floor.ts) changes how much of the chain a gate audits, and the
    // gate says so; never its decision.
    .replace(/ \((?:audited from the genesis; this user now keeps a floor here|\d+ records above this user's floor at seq \d+)[^)]*\)/g, '')
    .replace(/"floor_seq":(?:\d+|null)/g, '"floor_seq":<floor>')
    .replace(/"checked":\d+/g, '"checked":<n>')
    // Records say where the code is (issue 24: the project's path), and the two copies' paths
    // differ in length, so byte offsets into records.jsonl differ with them.
    .replace(/"offset":\d+/g, '"offset":<offset>')
    .replace(/(sha256:)?[0-9a-f]{12,64}/g, (m) => {
      if (!ids.has(m)) ids.set(m, `<id${ids.size}>`);
      return ids.get(m)!;
    });
}

/** Runs one verb on both copies; the outcomes must be the same. */
function same(args: string[], opts: { agent?: string; stdin?: string; twice?: boolean } = {}): Run {
  const cachedRuns = [run('cached', args, opts.agent, opts.stdin)];
  if (opts.twice) cachedRuns.push(run('cached', args, opts.agent, opts.stdin));
  const uncached = run('uncached', args, opts.agent, opts.stdin);
  for (const c of cachedRuns) {
    expect({ code: c.code, stdout: normal('cached', c.stdout), stderr: normal('cached', c.stderr) }, `ledger ${args.join(' ')}`)
      .toEqual({ code: uncached.code, stdout: normal('uncached', uncached.stdout), stderr: normal('uncached', uncached.stderr) });
  }
  return uncached;
}

const SESSION_START = '{"hook_event_name":"SessionStart","source":"startup"}';
const STOP = '{"hook_event_name":"Stop","stop_hook_active":false}';

beforeAll(() => {
  const s = scratch('ledger-no-cache-');
  base = realpathSync(s.dir);
  cleanup = s.cleanup;
  const origin = join(base, 'origin');
  mkdirSync(origin);
  mkdirSync(join(base, 'home'));
  writeFileSync(join(origin, 'app.js'), 'export const x = 1;\n');
  git(origin, 'init', '-q', '-b', 'main');
  git(origin, 'add', '-A');
  git(origin, 'commit', '-q', '-m', 'initial');
  const env = { HOME: join(base, 'home'), LEDGER_STATE_DIR: join(base, 'origin-state'), LEDGER_NO_CACHE: '' };
  const ok = (args: string[], agent = 'claude') => {
    const r = spawnLedgerSync(args, { cwd: origin, env: { ...env, LEDGER_AGENT: agent } });
    if (r.code !== 0) throw new Error(`ledger ${args.join(' ')}: ${r.stderr}`);
  };
  ok(['init', '--name', 'no-cache']);
  ok(['start', 'fix-tz', '--summary', 'fix the timezone bug']);
  ok(['checkpoint', 'fix-tz', '--done', 'found it', '--state', 'toLocal() drops -05:00', '--next', 'fix toLocal()', '--tests', '3 passed, 1 failed']);
  ok(['start', 'docs', '--summary', 'write the guide'], 'codex');
  ok(['note', 'fix-tz', '--text', 'keep the offset table'], 'alice');
  ok(['append', 'intent', '--op', 'deploy', '--exec', 'run-1', '--action', 'deploy to staging']);
  ok(['append', 'intent', '--op', 'migrate', '--exec', 'run-1', '--action', 'migrate the schema']);
  ok(['append', 'handoff', '--op', 'deploy', '--exec', 'run-1', '--outcome', 'success', '--invariant', 'tests=ok']);
  // Two copies of the same bytes, each with its own (empty) state directory, and neither with
  // the derived files the origin's commands made.
  for (const name of ['cached', 'uncached'] as const) {
    cpSync(origin, side(name).root, { recursive: true });
    rmSync(join(side(name).root, '.ledger', 'index'), { recursive: true, force: true });
  }
});
afterAll(() => cleanup());

describe('when the same verbs run on two copies of a ledger, one with LEDGER_NO_CACHE=1', () => {
  it('the read verbs answer the same (the cached copy twice: from its caches the second time)', () => {
    for (const args of [
      ['status'], ['status', '--json'], ['resume', 'fix-tz'], ['resume', 'docs', '--json'], ['log', '--limit', '5', '--json'], ['log'],
      ['show', '2', '--json'], ['show', 'HEAD'], ['head', '--json'], ['pending', '--json'], ['gate', 'deploy', '--json'],
      ['render', '--check', '--json'],
    ]) same(args, { twice: true });
    same(['hook', 'claude', 'session-start'], { stdin: SESSION_START, twice: true });
    same(['hook', 'codex', 'session-start'], { stdin: SESSION_START, twice: true });
  });

  it('the writers answer the same, and leave ledgers that read the same', () => {
    same(['checkpoint', 'fix-tz', '--done', 'fixed toLocal()', '--state', 'all offsets pass', '--next', 'ship it', '--tests', '4 passed']);
    same(['start', 'api', '--summary', 'the new endpoint']);
    same(['note', 'docs', '--text', 'a reviewer was here'], { agent: 'alice' });
    same(['finish', 'docs', '--done', 'wrote it', '--state', 'published', '--next', 'nothing'], { agent: 'codex' });
    // The operation's story the views tell (issue 26): the finish consumed, then revoked.
    same(['gate', 'docs', '--consume-as', 'prod', '--json'], { agent: 'deployer' });
    const finishSeq = (JSON.parse(run('uncached', ['log', '--json']).stdout) as { records: { seq: number; record: { kind: string; logical_operation_id?: string } }[] })
      .records.find((r) => r.record.kind === 'finish' && r.record.logical_operation_id === 'docs')!.seq;
    same(['revoke', String(finishSeq), '--reason', 'wrong branch'], { agent: 'alice' });
    same(['release', 'api', '--note', 'someone else should']);
    same(['append', 'handoff', '--op', 'migrate', '--exec', 'run-1', '--outcome', 'ambiguous']);
    same(['gate', 'deploy', '--consume-as', 'prod', '--json']);
    same(['render']);
    same(['hook', 'claude', 'stop'], { stdin: STOP });
    for (const args of [['status', '--json'], ['resume', 'fix-tz', '--json'], ['log', '--json'], ['pending', '--json'], ['render', '--check', '--json'], ['gate', 'deploy', '--json']]) same(args, { twice: true });
    // The views each copy wrote read the same.
    for (const view of ['HANDOFF.md', 'HANDOFF.yml']) {
      expect(normal('cached', readFileSync(join(side('cached').root, view), 'utf8'))).toBe(normal('uncached', readFileSync(join(side('uncached').root, view), 'utf8')));
    }
  });

  it('without caches, no cache file is made: no record index, no fold memo, no HEAD memo, only the writer marks in the state directory', () => {
    expect(existsSync(join(side('uncached').root, '.ledger', 'index'))).toBe(false);
    expect(readdirSync(side('uncached').state)).toEqual(['marks']);
    // The cached copy made them (the comparison above is not vacuous).
    expect(existsSync(join(side('cached').root, '.ledger', 'index'))).toBe(true);
    expect(readdirSync(side('cached').state).sort()).toEqual(['chain', 'floor', 'head', 'marks']);
  });

  it('without caches, a cache planted where one would be is never read', () => {
    // A fold memo that leaves the item `fix-tz` out (what someone who can write .ledger/ could do;
    // it is trusted for completeness as far as it matches the ledger: docs/formats.md).
    const root = side('uncached').root;
    const text = readFileSync(join(root, '.ledger', 'records.jsonl'), 'utf8');
    const head = JSON.parse(readFileSync(join(root, '.ledger', 'HEAD'), 'utf8')) as { genesis: string; seq: number; size: number; tail: string };
    const work: [number, number][] = [];
    let offset = 0;
    for (const line of text.split('\n').slice(0, -1)) {
      const r = JSON.parse(line) as { seq: number; kind: string; logical_operation_id?: string };
      if (['genesis', 'start', 'checkpoint', 'finish', 'release', 'note'].includes(r.kind) && r.logical_operation_id !== 'fix-tz') work.push([r.seq, offset]);
      offset += Buffer.byteLength(line) + 1;
    }
    mkdirSync(join(root, '.ledger', 'index'), { recursive: true });
    writeFileSync(join(root, '.ledger', 'index', 'work-fold.json'), JSON.stringify({ v: MEMO_VERSION, genesis: head.genesis, seq: head.seq, end: head.size, id: head.tail, work, outcomes: [] }));
    const r = run('uncached', ['status', '--json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { items: { slug: string }[] }).items.map((i) => i.slug)).toContain('fix-tz');
    // With the caches on, the same copy believes it (the plant is where a cache is read).
    const on = spawnLedgerSync(['status', '--json'], { cwd: root, env: { HOME: side('uncached').home, LEDGER_STATE_DIR: join(base, 'planted-state'), LEDGER_AGENT: 'claude', LEDGER_NO_CACHE: '' } });
    expect((JSON.parse(on.stdout) as { items: { slug: string }[] }).items.map((i) => i.slug)).not.toContain('fix-tz');
  });
});
