// Every tool of the MCP server (src/agents/tools/), called through the server's own call path
// (mcp-server.ts callTool: the argument schema, the tool, its output schema) with arguments of
// each field's type, most of them valid and some hostile, in any order: every answer is a result
// or a one-line refusal, never "internal error" (a tool that threw something other than a
// LedgerError, or an answer outside its own schema). `tests_cmd` and `tests_timeout` are left
// out (the first runs a shell, the second needs it), and `sync` (no remote here).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../../src/agents/mcp-server.js';
import { TOOLS } from '../../src/agents/tools/index.js';
import type { ToolContext } from '../../src/agents/tools/kit.js';
import { formatTrust, trustEntry } from '../../src/keys/trust.js';
import { Ledger } from '../../src/ledger.js';
import { createSigner } from '../../src/sign.js';
import { runs } from '../helpers/runs.js';

const signer = createSigner(new Uint8Array(32).fill(8));
const NAMES = TOOLS.map((t) => t.name).filter((n) => n !== 'sync');

const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('fix-tz', 'task-a', 'success', 'timeout', 'cancelled', '10m', '0s', '31d', 'src/a.ts', 'file:src/a.ts', 'dir:src', 'git:HEAD'),
  fc.constantFrom('../etc/passwd', '/etc/passwd', 'HEAD', '1', '0', 'sha256:' + 'a'.repeat(64), '\u202e', '', 'handoff', 'start'),
);

/** A zod field's type, under optional, default and nullable. */
function typeOf(field: unknown): string {
  let def = (field as { _zod?: { def?: { type: string; innerType?: { _zod?: { def?: unknown } } } } })._zod?.def;
  while (def && ['optional', 'default', 'nullable'].includes(def.type)) def = def.innerType?._zod?.def as typeof def;
  return def?.type ?? 'unknown';
}

/** Any value of the field's type. */
function anyOf(field: unknown): fc.Arbitrary<unknown> {
  const t = typeOf(field);
  if (t === 'array') return fc.array(text, { maxLength: 3 });
  if (t === 'boolean') return fc.boolean();
  if (t === 'number') return fc.oneof(fc.integer({ min: -5, max: 300 }), fc.constant(1e9));
  if (t === 'record' || t === 'object') return fc.dictionary(text, fc.oneof(text, fc.record({ ok: fc.boolean(), detail: text }, { requiredKeys: ['ok'] })), { maxKeys: 2 });
  return text;
}

// Valid values of the fields a call needs, drawn four times in five: otherwise nearly every
// call is refused at its first field, and the tools' own paths are never reached.
const VALID: Record<string, fc.Arbitrary<unknown>> = {
  slug: fc.constantFrom('fix-tz', 'task-a'), op: fc.constantFrom('fix-tz', 'task-a', 'deploy'), summary: fc.constant('a summary'), done: fc.constant('did a thing'),
  state: fc.constant('steady'), next: fc.constant('the next step'), text: fc.constant('a remark'), reason: fc.constant('its session died'),
  lease: fc.constantFrom('10m', '1h', '1s'), outcome: fc.constantFrom('success', 'failure', 'timeout'), note: fc.constant('a note'),
  tests: fc.constant('3 passed'), evidence: fc.constantFrom({}, { src: 'file:src/a.ts' }), invariants: fc.constant({ tests: { ok: true } }),
  verified: fc.constant(['a step']), attempted: fc.constant([]), blockers: fc.constant([]), depends_on: fc.constant([]), supersedes: fc.constant([]),
  accept: fc.constant(['success']), require_invariant: fc.constant([]), max_age: fc.constant('1h'), limit: fc.constant(3),
};

const callArb = fc.constantFrom(...NAMES).chain((name) => {
  const shape = (TOOLS.find((t) => t.name === name)!.input as unknown as { shape: Record<string, unknown> }).shape;
  const fields = Object.keys(shape).filter((k) => k !== 'tests_cmd' && k !== 'tests_timeout');
  // A required field is always given (of any value); an optional one sometimes.
  const required = fields.filter((k) => (shape[k] as { _zod?: { def?: { type: string } } })._zod?.def?.type !== 'optional');
  const arb = fc.record(Object.fromEntries(fields.map((k) => [k, VALID[k] ? fc.oneof({ weight: 4, arbitrary: VALID[k] }, { weight: 1, arbitrary: anyOf(shape[k]) }) : anyOf(shape[k])])), { requiredKeys: required });
  return arb.map((args) => ({ name, args }));
});

describe('when an agent calls any tool with any arguments', () => {
  let root = '';
  let ctx: ToolContext;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'mcp-fuzz-'));
    const dir = join(root, '.ledger');
    const stateDir = join(root, 'state');
    const trustPath = join(root, 'trust.json');
    writeFileSync(trustPath, formatTrust({ v: 1, keys: [trustEntry('harness', signer.publicKey, 0, { admin: true })] }));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'a.ts'), 'export {};\n');
    Ledger.init({ dir, key: signer, agent: 'claude', stateDir, trust: trustPath });
    ctx = {
      agent: 'claude', dir, root, cwd: root, env: {}, trustPath, joined: false, hasKey: () => true,
      reader: () => Ledger.open({ dir, stateDir, trust: trustPath }),
      writer: () => Ledger.open({ dir, key: signer, stateDir, trust: trustPath }),
    };
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('property: every answer is a result or a one-line refusal, never an internal error', { timeout: runs(300_000, 3_600_000) }, async () => {
    const answered = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 8 }), async (calls) => {
        // Each run first takes an item, so that checkpoints, finishes and releases reach their tools.
        for (const { name, args } of [{ name: 'start', args: { slug: 'fix-tz', summary: 'a summary' } as Record<string, unknown> }, ...calls]) {
          const r = await callTool(TOOLS, ctx, name, args, () => {});
          const said = (r.content[0] as { text: string }).text;
          expect(said, `${name} ${JSON.stringify(args)}`).not.toMatch(/^internal error/);
          if (r.isError) expect(said, `${name} ${JSON.stringify(args)}`).not.toMatch(/[\n\r]/);
          else answered.add(name);
        }
      }),
      { numRuns: runs(30, 500) },
    );
    // The calls reached the tools themselves, not only the argument check.
    for (const name of ['status', 'resume', 'start', 'checkpoint', 'note', 'log']) expect(answered, name).toContain(name);
  });
});
