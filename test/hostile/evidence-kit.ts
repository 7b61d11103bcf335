// Shared by the hostile evidence tests: a project, refusals that must change nothing, and a
// handoff written through the library with whatever source a hostile record may carry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import type { Project } from '../causal/kit.js';

/** The files a refusal must leave byte-identical: records.jsonl, HEAD and the views. */
export function ledgerBytes(p: Project): Record<string, string | null> {
  const read = (f: string) => {
    try {
      return readFileSync(join(p.dir, f)).toString('base64');
    } catch {
      return null;
    }
  };
  return { records: read('.ledger/records.jsonl'), head: read('.ledger/HEAD'), md: read('HANDOFF.md'), yml: read('HANDOFF.yml') };
}

/** `append handoff ... --evidence e=SOURCE` must exit 2 with one line, and change nothing. */
export async function expectRefusedEvidence(p: Project, source: string, message: RegExp): Promise<string> {
  const before = ledgerBytes(p);
  const r = await p.run(['append', 'handoff', '--op', 'op', '--exec', 'e1', '--outcome', 'success', '--evidence', `e=${source}`]);
  expect(r.code, `${source}: ${r.stderr}`).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(message);
  expect(ledgerBytes(p)).toEqual(before);
  return r.stderr;
}

/** A handoff of `op` carrying evidence exactly as given (as a hostile or an old record may). */
export function appendRaw(p: Project, op: string, evidence: Record<string, { digest: string; source: string }>): void {
  const ledger = Ledger.open({ dir: p.ledger, key: join(p.dir, 'keys/harness.key') });
  ledger.append({ kind: 'handoff', agent: 'alice', logical_operation_id: op, execution_id: 'e1', outcome: 'success', evidence, invariants: {}, depends_on: [] } as Draft);
}
