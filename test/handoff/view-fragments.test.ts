// HANDOFF.yml's fragments (src/handoff/view-fragments.ts), a speed measure: a render given any
// fragments is the render without them, byte for byte, and a fragment file is believed only for
// its own ledger, genesis and renderer.
import fc from 'fast-check';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerRecord } from '../../src/record.js';
import type { RecordAt } from '../../src/store/read.js';
import { foldWorkLog } from '../../src/handoff/workitems.js';
import { renderYaml, yamlDocument } from '../../src/handoff/render-yml.js';
import { KeptFragments, keepFragments, readFragments, type Fragments } from '../../src/handoff/view-fragments.js';
import { LedgerCache } from '../../src/cache/ledger-cache.js';
import { sha256Hex } from '../../src/canonical.js';
import { runs } from '../helpers/runs.js';

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const LEASE = '2030-01-01T00:00:00.000Z';

/** One generated step of a work log. */
type Step =
  | { op: 'start'; item: number; agent: string; summary: string }
  | { op: 'checkpoint'; item: number; done: string; next: string }
  | { op: 'note'; item: number; text: string }
  | { op: 'release'; item: number; note: string | null }
  | { op: 'finish'; item: number; done: string };

const text = fc.oneof(fc.string({ maxLength: 24 }), fc.constantFrom('', ' ', 'a: b', '- x', '#c', 'true', '12', 'null', '"q"', "'s'", 'multi\nline', '\u202e', '\u2028', '\0', 'yes', '~'));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('start' as const), item: fc.nat(24), agent: fc.constantFrom('claude', 'codex'), summary: text }),
  fc.record({ op: fc.constant('checkpoint' as const), item: fc.nat(24), done: text, next: text }),
  fc.record({ op: fc.constant('note' as const), item: fc.nat(24), text }),
  fc.record({ op: fc.constant('release' as const), item: fc.nat(24), note: fc.option(text) }),
  fc.record({ op: fc.constant('finish' as const), item: fc.nat(24), done: text }),
);

/** The records of `steps` after a genesis, as a writer around the CLI could have put them (strays included). */
function records(steps: Step[]): RecordAt[] {
  // Named by their content, as records are (SPEC 4): one id, one record.
  const at = (seq: number, r: Record<string, unknown>): RecordAt => {
    const record = { v: 1, seq, ts: `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000Z`, agent: 'claude', ...r } as unknown as LedgerRecord;
    return { seq, offset: 0, id: `sha256:${sha256Hex(JSON.stringify(record))}`, record };
  };
  const out = [at(0, { kind: 'genesis', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' })];
  const owner = new Map<number, string>();
  steps.forEach((s, i) => {
    const seq = i + 1;
    const slug = `item-${s.item}`;
    const agent = s.op === 'start' ? s.agent : owner.get(s.item) ?? 'claude';
    const ids = { agent, logical_operation_id: slug, execution_id: `${agent}-${s.item}` };
    const work = { verified: [], attempted: [], blockers: [], state: 'st' };
    if (s.op === 'start') owner.set(s.item, s.agent);
    out.push(at(seq, s.op === 'start' ? { kind: 'start', ...ids, summary: s.summary || 'x', lease_until: LEASE }
      : s.op === 'checkpoint' ? { kind: 'checkpoint', ...ids, ...work, done: s.done || 'd', next: s.next || 'n', lease_until: LEASE }
        : s.op === 'note' ? { kind: 'note', agent: 'alice', logical_operation_id: slug, text: s.text || 't' }
          : s.op === 'release' ? { kind: 'release', ...ids, ...(s.note !== null ? { note: s.note || 'r' } : {}) }
            : { kind: 'finish', ...ids, ...work, done: s.done || 'd', next: 'n', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }));
  });
  return out;
}

/** A fragments store that remembers everything set in it, across renders. */
function memory(): Fragments & { size: () => number } {
  const m = new Map<string, string>();
  return { get: (k) => m.get(k), set: (k, t) => void m.set(k, t), size: () => m.size };
}

describe('the views rendered with fragments', () => {
  it('property: HANDOFF.yml written an active item at a time is the document written whole', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const log = foldWorkLog(records(steps));
        expect(renderYaml(log)).toBe(yamlDocument(log));
      }),
      { numRuns: runs(60, 1_000) },
    );
  });

  it('property: with the fragments of an earlier render (of the log before, or of another log), HANDOFF.yml is the fresh render', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 50 }), fc.array(step, { maxLength: 20 }), fc.array(step, { maxLength: 30 }), (before, after, other) => {
        const f = memory();
        renderYaml(foldWorkLog(records(other)), f);
        const earlier = foldWorkLog(records(before));
        renderYaml(earlier, f);
        const log = foldWorkLog(records([...before, ...after]));
        expect(renderYaml(log, f)).toBe(yamlDocument(log));
      }),
      { numRuns: runs(60, 1_000) },
    );
  });

  it('a render that changed one item makes only that fragment again', () => {
    const steps: Step[] = Array.from({ length: 12 }, (_, i) => ({ op: 'start' as const, item: i, agent: 'claude', summary: `item ${i}` }));
    const f = memory();
    renderYaml(foldWorkLog(records(steps)), f);
    const made: string[] = [];
    const watching: Fragments = { get: (k) => f.get(k), set: (k, t) => (made.push(k.slice(0, 6)), f.set(k, t)) };
    const log = foldWorkLog(records([...steps, { op: 'checkpoint', item: 3, done: 'd', next: 'n' }]));
    expect(renderYaml(log, watching)).toBe(yamlDocument(log));
    expect(made).toEqual([]); // item-3's lease end is the same here: no active item changed
    const moved = foldWorkLog(records([...steps, { op: 'note', item: 3, text: 'a reviewer was here' }]));
    expect(renderYaml(moved, watching)).toBe(yamlDocument(moved));
    expect(made).toEqual(['yml {"']); // only item-3's, which now shows the note
  });
});

describe("a user's fragment file", () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'fragments-'));
  // A Ledger's caches in a fresh state directory (src/cache/).
  const on = (state: string) => new LedgerCache(true, state);
  const G = digest(1);
  const kept = (pairs: [string, string][]) => {
    const k = new KeptFragments(new Map());
    for (const [a, b] of pairs) k.set(a, b);
    return k;
  };

  it('is read back for the same ledger directory, genesis and renderer, and for no other', () => {
    const state = dir();
    keepFragments(on(state), '/p/.ledger', G, 'format 1, yaml 2.9.1', kept([['yml a', 'A'], ['md e x 0', 'B']]));
    expect(readFragments(on(state), '/p/.ledger', G, 'format 1, yaml 2.9.1').get('yml a')).toBe('A');
    expect(readFragments(on(state), '/p/.ledger', G, 'format 2, yaml 2.9.1').get('yml a')).toBeUndefined();
    expect(readFragments(on(state), '/p/.ledger', G, 'format 1, yaml 2.9.2').get('yml a')).toBeUndefined();
    expect(readFragments(on(state), '/q/.ledger', G, 'format 1, yaml 2.9.1').get('yml a')).toBeUndefined();
    expect(readFragments(on(state), '/p/.ledger', digest(2), 'format 1, yaml 2.9.1').get('yml a')).toBeUndefined();
  });

  it('torn, of another shape, or not JSON: no fragments at all', () => {
    const state = dir();
    keepFragments(on(state), '/p/.ledger', G, 'id', kept([['yml a', 'A']]));
    const [name] = readdirSync(join(state, 'views'));
    const file = join(state, 'views', name);
    const whole = readFileSync(file, 'utf8');
    const body = JSON.parse(whole) as Record<string, unknown>;
    for (const bad of [
      whole.slice(0, whole.length - 9),
      '',
      'null',
      JSON.stringify({ ...body, v: 2 }),
      JSON.stringify({ ...body, fragments: {} }),
      JSON.stringify({ ...body, fragments: [['yml a', 'A'], ['yml b']] }),
      JSON.stringify({ ...body, fragments: [['yml a', 'A'], ['yml b', 7]] }),
    ]) {
      writeFileSync(file, bad);
      expect(readFragments(on(state), '/p/.ledger', G, 'id').get('yml a'), bad.slice(0, 60)).toBeUndefined();
    }
  });

  it('keeps only the fragments the last render used, and is not written when nothing changed', () => {
    const state = dir();
    keepFragments(on(state), '/p/.ledger', G, 'id', kept([['a', '1'], ['b', '2']]));
    const [name] = readdirSync(join(state, 'views'));
    const file = join(state, 'views', name);
    const read = readFragments(on(state), '/p/.ledger', G, 'id');
    expect(read.get('a')).toBe('1');
    expect(read.changed()).toBe(true); // 'b' went unused
    keepFragments(on(state), '/p/.ledger', G, 'id', read);
    const again = readFragments(on(state), '/p/.ledger', G, 'id');
    expect(again.get('b')).toBeUndefined();
    expect(again.get('a')).toBe('1');
    expect(again.changed()).toBe(false);
    writeFileSync(file, 'sentinel');
    keepFragments(on(state), '/p/.ledger', G, 'id', again);
    expect(readFileSync(file, 'utf8')).toBe('sentinel');
  });

  it('without caches (LEDGER_NO_CACHE): never read, never written', () => {
    const state = dir();
    keepFragments(on(state), '/p/.ledger', G, 'id', kept([['yml a', 'A']]));
    const off = new LedgerCache(false, state);
    expect(readFragments(off, '/p/.ledger', G, 'id').get('yml a')).toBeUndefined();
    const other = dir();
    keepFragments(new LedgerCache(false, other), '/p/.ledger', G, 'id', kept([['yml a', 'A']]));
    expect(readdirSync(other)).toEqual([]);
  });
});
