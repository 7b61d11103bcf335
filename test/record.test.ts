// src/record.ts: the envelope (SPEC 4), HEAD (SPEC 5), the payload of every kind (SPEC 6) and
// the trust floor. Every problem is asserted by its path, and the known-good inputs report none.
import { describe, expect, it } from 'vitest';
import { digestOf } from '../src/canonical.js';
import {
  ENVELOPE_FIELDS, KINDS, MAX_LINE_BYTES, draftProblems, floorProblems, headProblems, recordProblems, type Kind,
} from '../src/record.js';
import { goldenGenesis, goldenHandoff, goldenHead } from './helpers/golden-records.js';

const D1 = digestOf('one');
const D2 = digestOf('two');
const TIME = '2026-11-29T18:00:00.000Z';

/** One valid payload per kind, every optional field present, so each can be removed or broken. */
const PAYLOADS: Record<Kind, Record<string, unknown>> = {
  genesis: { nonce: 'AAECAwQFBgcICQoLDA0ODw', name: 'demo' },
  start: {
    logical_operation_id: 'migrate_schema_17',
    execution_id: 'execution_003',
    summary: 'take over the migration',
    lease_until: TIME,
    takeover: { agent: 'agent-b', execution_id: 'execution_002', lease_until: TIME, forced: true, reason: 'agent-b hit its usage limit' },
  },
  checkpoint: {
    logical_operation_id: 'migrate_schema_17',
    execution_id: 'execution_003',
    done: 'ran the migration on staging',
    state: 'staging migrated',
    next: 'run it on prod',
    verified: ['staging schema matches'],
    attempted: ['prod dry run'],
    blockers: [],
    tests: { excerpt: '42 passed', digest: D1, command: 'npm test', exit_code: 0, bytes: 1234, workdir: { path: '/work/p', git: { commit: null, branch: 'main', clean: true } } },
    lease_until: TIME,
  },
  finish: {
    logical_operation_id: 'migrate_schema_17',
    execution_id: 'execution_003',
    done: 'migrated',
    state: 'prod migrated',
    next: 'drop the old column',
    verified: ['prod schema matches'],
    attempted: [],
    blockers: [],
    tests: { excerpt: '42 passed', digest: D1 },
    outcome: 'success',
    evidence: { schema: { digest: D1, source: 'file:db/schema.sql' } },
    invariants: { tests_pass: { ok: true, detail: '42 passed' } },
    depends_on: [{ logical_operation_id: 'backup_db', outcome: 'success' }],
    supersedes: [D2],
    note: 'done',
  },
  intent: { logical_operation_id: 'migrate_schema_17', execution_id: 'execution_003', action: 'ALTER TABLE on prod', note: 'about to run' },
  handoff: {
    logical_operation_id: 'migrate_schema_17',
    execution_id: 'execution_002',
    outcome: 'failure',
    evidence: { schema: { digest: D1, source: 'file:db/schema.sql' } },
    invariants: { tests_pass: { ok: false, detail: '3 failed' } },
    depends_on: [],
    supersedes: [D2],
    note: '',
  },
  revoke: { target: D1, reason: 'the evidence was wrong' },
  consume: { logical_operation_id: 'migrate_schema_17', consumer: 'deployer', handoff: D1, seen_head: { seq: 4, tail: D2 } },
  release: { logical_operation_id: 'migrate_schema_17', execution_id: 'execution_003', note: 'out of time; staging is migrated' },
  note: { logical_operation_id: 'migrate_schema_17', text: 'reviewed: the down migration is missing' },
  consume_failed: { logical_operation_id: 'migrate_schema_17', consumer: 'deployer', consume: D2, handoff: D1, reason: 'deploy exited 1' },
  key: { action: 'add', name: 'sandbox-1', alg: 'ed25519', key: 'fUvPdbDnkTTJjGLOUqhPFKbI2XJqTq_Bf9e7m-kOO4g', agents: ['codex'], reason: 'new CI sandbox' },
};

/** Optional payload fields per kind (SPEC 6 and the project's schemas). */
const OPTIONAL: Record<Kind, string[]> = {
  genesis: ['name'],
  start: ['takeover'],
  checkpoint: ['tests'],
  finish: ['tests', 'supersedes', 'note'],
  intent: ['note'],
  handoff: ['supersedes', 'note'],
  revoke: [],
  consume: [],
  release: ['note'],
  note: [],
  consume_failed: [],
  key: [],
};

/** One wrong value inside a nested member per kind, with the path it must be reported at. */
const NESTED: Record<Kind, [(p: Record<string, unknown>) => void, string][]> = {
  genesis: [[(p) => (p.nonce = 'AAECAwQFBgcICQoLDA0OD='), '$.nonce']],
  start: [[(p) => ((p.takeover as Record<string, unknown>).lease_until = '2026-11-29T18:00:00Z'), '$.takeover.lease_until']],
  checkpoint: [
    [(p) => ((p.tests as Record<string, unknown>).exit_code = -1), '$.tests.exit_code'],
    [(p) => ((p.verified as unknown[])[0] = 7), '$.verified[0]'],
  ],
  finish: [
    [(p) => (((p.evidence as Record<string, Record<string, unknown>>).schema).digest = 'sha256:ABC'), '$.evidence.schema.digest'],
    [(p) => (((p.depends_on as Record<string, unknown>[])[0]).outcome = 'ok'), '$.depends_on[0].outcome'],
  ],
  intent: [[(p) => (p.action = ''), '$.action']],
  handoff: [
    [(p) => (((p.invariants as Record<string, Record<string, unknown>>).tests_pass).ok = 'false'), '$.invariants.tests_pass.ok'],
    [(p) => ((p.supersedes as unknown[])[0] = 'not-a-digest'), '$.supersedes[0]'],
  ],
  revoke: [[(p) => (p.target = D1.toUpperCase()), '$.target']],
  consume: [[(p) => ((p.seen_head as Record<string, unknown>).seq = 1.5), '$.seen_head.seq']],
  release: [[(p) => (p.note = ''), '$.note']],
  note: [[(p) => (p.text = ''), '$.text']],
  consume_failed: [[(p) => (p.reason = ''), '$.reason'], [(p) => (p.consume = 'sha256:xyz'), '$.consume']],
  // SPEC 7: never "*" through a record, never an empty list of agents.
  key: [[(p) => ((p.agents as unknown[])[0] = '*'), '$.agents[0]'], [(p) => (p.agents = []), '$.agents'], [(p) => (p.action = 'rotate'), '$.action']],
};

const clone = <T>(v: T): T => structuredClone(v);

function recordOf(kind: Kind): Record<string, unknown> {
  const env = goldenHandoff(); // any valid envelope: recordProblems checks shape, not signatures
  return {
    v: 1,
    seq: kind === 'genesis' ? 0 : 5,
    prev_tail_hash: kind === 'genesis' ? null : D2,
    ts: TIME,
    kind,
    agent: 'agent-a',
    sig: env.sig,
    ...clone(PAYLOADS[kind]),
  };
}

/** A value of another JSON type than `v`, so that any type check must fail. */
function wrongType(v: unknown): unknown {
  if (typeof v === 'string') return 42;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return 'true';
  if (Array.isArray(v)) return { 0: v[0] };
  if (v === null) return 'x';
  return [v];
}

describe('known-good inputs report no problems', () => {
  it('the golden genesis, handoff and HEAD', () => {
    expect(recordProblems(goldenGenesis())).toEqual([]);
    expect(recordProblems(goldenHandoff())).toEqual([]);
    expect(headProblems(goldenHead())).toEqual([]);
  });

  it('covers every kind', () => {
    expect(Object.keys(PAYLOADS).sort()).toEqual([...KINDS].sort());
  });

  for (const kind of KINDS) {
    it(`a ${kind} record with every optional field, and without them`, () => {
      expect(recordProblems(recordOf(kind))).toEqual([]);
      const bare = recordOf(kind);
      for (const f of OPTIONAL[kind]) delete bare[f];
      expect(recordProblems(bare)).toEqual([]);
    });
  }
});

describe('recordProblems, one row per kind', () => {
  for (const kind of KINDS) {
    describe(`kind ${kind}`, () => {
      const fields = [...ENVELOPE_FIELDS, ...Object.keys(PAYLOADS[kind])];

      it('reports each required field that is missing, by its path', () => {
        for (const f of fields.filter((x) => !OPTIONAL[kind].includes(x))) {
          const r = recordOf(kind);
          delete r[f];
          expect(recordProblems(r), f).toEqual([`$.${f}: missing`]);
        }
      });

      it('reports an extra field, at the top and inside a nested object', () => {
        expect(recordProblems({ ...recordOf(kind), extra: 1 })).toEqual(['$.extra: unknown field']);
        const r = recordOf(kind);
        (r.sig as Record<string, unknown>) = { ...(r.sig as object), extra: 1 };
        expect(recordProblems(r)).toEqual(['$.sig.extra: unknown field']);
      });

      it('reports a wrong type for every envelope and payload field, by its path', () => {
        for (const f of fields) {
          const r = recordOf(kind);
          r[f] = wrongType(r[f]);
          const problems = recordProblems(r);
          expect(problems, `${f} = ${JSON.stringify(r[f])}`).toHaveLength(1);
          expect(problems[0], f).toMatch(new RegExp(`^\\$\\.${f}: expected `));
        }
      });

      it('reports a wrong value inside a nested member, by its full path', () => {
        for (const [breakIt, path] of NESTED[kind]) {
          const r = recordOf(kind);
          breakIt(r);
          const problems = recordProblems(r);
          expect(problems, path).toHaveLength(1);
          expect(problems[0].startsWith(`${path}: expected `), problems[0]).toBe(true);
        }
      });

      it('collects every problem at once rather than stopping at the first', () => {
        const r = recordOf(kind);
        r.seq = -1;
        r.agent = 'has space';
        r.extra = true;
        delete r[Object.keys(PAYLOADS[kind]).find((f) => !OPTIONAL[kind].includes(f))!];
        expect(recordProblems(r)).toHaveLength(4);
      });
    });
  }
});

describe('envelope values beyond their types (SPEC 2, SPEC 4)', () => {
  const rows: [string, unknown, string][] = [
    ['v', 2, '$.v: expected 1, got number 2'],
    ['seq', -1, '$.seq: expected an integer >= 0'],
    ['seq', 1.5, '$.seq: expected an integer >= 0'],
    ['seq', 2 ** 53, '$.seq: expected an integer >= 0'],
    ['prev_tail_hash', 'sha256:' + 'A'.repeat(64), '$.prev_tail_hash: expected "sha256:" + 64 lowercase hex'],
    ['prev_tail_hash', 'sha256:' + 'a'.repeat(63), '$.prev_tail_hash: expected'],
    ['ts', '2026-11-29T17:00:00Z', '$.ts: expected an RFC 3339 UTC time'],
    ['ts', '2026-11-29T17:00:00.000+00:00', '$.ts: expected an RFC 3339 UTC time'],
    ['ts', '2026-02-30T17:00:00.000Z', '$.ts: expected an RFC 3339 UTC time'],
    ['ts', '2026-11-29 17:00:00.000Z', '$.ts: expected an RFC 3339 UTC time'],
    ['agent', '', '$.agent: expected 1-64 chars'],
    ['agent', 'a'.repeat(65), '$.agent: expected 1-64 chars'],
    ['agent', 'agent a', '$.agent: expected 1-64 chars'],
    ['agent', 'agent/a', '$.agent: expected 1-64 chars'],
    ['sig', { alg: 'ed25519', key: goldenHandoff().sig.key }, '$.sig.value: missing'],
    ['sig', { alg: 'EdDSA', key: goldenHandoff().sig.key, value: goldenHandoff().sig.value }, '$.sig.alg: expected "ed25519"'],
    ['sig', { alg: 'ed25519', key: goldenHandoff().sig.key + '=', value: goldenHandoff().sig.value }, '$.sig.key: expected base64url (no padding) of 32 bytes'],
    ['sig', { alg: 'ed25519', key: goldenHandoff().sig.key, value: goldenHandoff().sig.value.slice(0, -2) }, '$.sig.value: expected base64url (no padding) of 64 bytes'],
  ];
  for (const [field, value, problem] of rows) {
    it(`${field} = ${JSON.stringify(value)?.slice(0, 60)} is reported as "${problem}"`, () => {
      const problems = recordProblems({ ...goldenHandoff(), [field]: value });
      expect(problems).toHaveLength(1);
      expect(problems[0].startsWith(problem), problems[0]).toBe(true);
    });
  }

  it('an unknown kind is reported together with the other envelope problems', () => {
    const problems = recordProblems({ ...goldenHandoff(), kind: 'deploy', seq: -1 });
    expect(problems.some((p) => p.startsWith('$.kind: expected one of genesis, start, '))).toBe(true);
    expect(problems.some((p) => p.startsWith('$.seq: expected'))).toBe(true);
    expect(problems).toHaveLength(2);
  });

  it('a value that is not an object is one problem at $', () => {
    for (const v of [null, [], 'record', 1]) expect(recordProblems(v), JSON.stringify(v)).toEqual([expect.stringMatching(/^\$: expected an object/)]);
  });

  it('bounds: an id of 129 chars, a note of 4097, a source of 1025, a bad evidence name, too many dependencies', () => {
    const r = recordOf('handoff');
    r.logical_operation_id = 'x'.repeat(129);
    r.note = 'n'.repeat(4097);
    r.evidence = { 'bad name': { digest: D1, source: 's'.repeat(1025) } };
    r.depends_on = Array.from({ length: 65 }, () => ({ logical_operation_id: 'a', outcome: 'success' }));
    const problems = recordProblems(r);
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(
      ['$.depends_on', '$.evidence', '$.evidence.bad name.source', '$.logical_operation_id', '$.note'].sort(),
    );
    expect(MAX_LINE_BYTES).toBe(1024 * 1024);
  });
});

/** Every text field of every kind, by its path in the record, with its limit in characters. */
const TEXT_LIMITS: [Kind, (string | number)[], number][] = [
  ['genesis', ['name'], 128],
  ['start', ['summary'], 4096],
  ['start', ['takeover', 'reason'], 4096],
  ...(['checkpoint', 'finish'] as const).flatMap((k): [Kind, (string | number)[], number][] => [
    [k, ['done'], 4096], [k, ['state'], 4096], [k, ['next'], 4096],
    [k, ['verified', 0], 1024], [k, ['attempted', 0], 1024], [k, ['blockers', 0], 1024],
    [k, ['tests', 'excerpt'], 16384],
  ]),
  ['checkpoint', ['tests', 'command'], 4096],
  ['checkpoint', ['tests', 'workdir', 'path'], 4096],
  ['checkpoint', ['tests', 'workdir', 'git', 'branch'], 4096],
  ...(['handoff', 'finish'] as const).flatMap((k): [Kind, (string | number)[], number][] => [
    [k, ['note'], 4096], [k, ['evidence', 'schema', 'source'], 1024], [k, ['invariants', 'tests_pass', 'detail'], 4096],
  ]),
  ['intent', ['action'], 1024],
  ['intent', ['note'], 4096],
  ['revoke', ['reason'], 4096],
  ['consume_failed', ['reason'], 4096],
  ['release', ['note'], 4096],
  ['note', ['text'], 4096],
];

function setAt(r: Record<string, unknown>, path: (string | number)[], value: string): void {
  let at = r as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  at[path[path.length - 1]] = value;
}

describe('every text limit of every kind counts characters (code points), not UTF-16 units', () => {
  for (const [kind, path, max] of TEXT_LIMITS) {
    const shown = `$.${path.join('.').replace(/\.(\d+)/g, '[$1]')}`;
    it(`${kind} ${shown}: ${max} astral characters (${2 * max} UTF-16 units) pass; ${max + 1} are refused`, () => {
      const r = recordOf(kind);
      setAt(r, path, '🦀'.repeat(max));
      expect(recordProblems(r)).toEqual([]);
      setAt(r, path, '🦀'.repeat(max + 1));
      const problems = recordProblems(r);
      expect(problems).toHaveLength(1);
      expect(problems[0].startsWith(`${shown}: expected a string of `), problems[0]).toBe(true);
      expect(problems[0].endsWith(`-${max} characters, got a string of ${max + 1} characters`), problems[0]).toBe(true);
    });
  }

  it('a BMP character and an ASCII one count one each, mixed with astral ones', () => {
    const r = recordOf('revoke');
    r.reason = 'é'.repeat(4095) + 'x';
    expect(recordProblems(r)).toEqual([]);
    r.reason = 'é'.repeat(4095) + '🦀🦀';
    expect(recordProblems(r)).toEqual(['$.reason: expected a string of 1-4096 characters, got a string of 4097 characters']);
  });
});

describe('a forced takeover says why', () => {
  it('a takeover with forced but no reason is refused; forced may only be true', () => {
    const r = recordOf('start');
    delete (r.takeover as Record<string, unknown>).reason;
    expect(recordProblems(r)).toEqual(['$.takeover.reason: missing (a forced takeover records why)']);
    (r.takeover as Record<string, unknown>).forced = false;
    expect(recordProblems(r)).toEqual([expect.stringMatching(/^\$\.takeover\.forced: expected true/)]);
  });
});

describe('draftProblems', () => {
  for (const kind of KINDS) {
    it(`accepts a ${kind} draft and refuses envelope fields in it`, () => {
      const draft = { kind, agent: 'agent-a', ...clone(PAYLOADS[kind]) };
      expect(draftProblems(draft)).toEqual([]);
      expect(draftProblems({ ...draft, seq: 3 })).toEqual(['$.seq: unknown field']);
      expect(draftProblems({ ...draft, agent: undefined })[0]).toMatch(/^\$\.agent: expected/);
    });
  }

  it('reports a missing or unknown kind at $.kind', () => {
    expect(draftProblems({ agent: 'a' })).toEqual([expect.stringMatching(/^\$\.kind: expected one of /)]);
    expect(draftProblems({ kind: 'deploy', agent: 'a' })).toEqual([expect.stringMatching(/^\$\.kind: expected one of .*got "deploy"/)]);
  });
});

describe('headProblems and floorProblems', () => {
  it('report each HEAD field missing, wrong, or extra by its path', () => {
    const head = goldenHead() as unknown as Record<string, unknown>;
    for (const f of Object.keys(head)) {
      const h = { ...head };
      delete h[f];
      expect(headProblems(h), f).toEqual([`$.${f}: missing`]);
      expect(headProblems({ ...head, [f]: wrongType(head[f]) })[0], f).toMatch(new RegExp(`^\\$\\.${f}: expected `));
    }
    expect(headProblems({ ...head, size: 0 })).toEqual(['$.size: expected an integer >= 1, got number 0']);
    expect(headProblems({ ...head, prev: D1 })).toEqual(['$.prev: unknown field']);
  });

  it('accept a floor and report a bad one by path', () => {
    const floor = { v: 1, genesis: D1, seq: 3, id: D2, offset: 900 };
    expect(floorProblems(floor)).toEqual([]);
    expect(floorProblems({ ...floor, offset: -1, extra: 0 })).toEqual([
      '$.offset: expected an integer >= 0, got number -1',
      '$.extra: unknown field',
    ]);
  });
});
