// This user's own floor (src/store/user-floor.ts, docs/causal-handoffs.md "This user's floor"):
// a gate without --floor starts its audit where this user's last passing gate ended; a floor
// file that cannot be read as one costs a full audit and is replaced (it never stops the gate);
// a ledger rolled back below it, or rewritten under it, holds the gate (SPEC 11: a machine that
// has seen more refuses).
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import type { Draft } from '../../src/record.js';
import { trustEntry } from '../../src/keys/trust.js';
import { createSigner } from '../../src/sign.js';

const signer = createSigner(new Uint8Array(32).fill(6));
const trust = { v: 1 as const, keys: [trustEntry('harness', signer.publicKey, 0, { admin: true })] };
const handoff = (op: string, exec: string): Draft => ({ kind: 'handoff', agent: 'ci', logical_operation_id: op, execution_id: exec, outcome: 'success', evidence: {}, invariants: { tests: { ok: true, detail: '3 passed' } }, depends_on: [] }) as Draft;

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function setUp() {
  root = mkdtempSync(join(tmpdir(), 'own-floor-'));
  const dir = join(root, '.ledger');
  const stateDir = join(root, 'state');
  Ledger.init({ dir, key: signer, agent: 'ci', stateDir, trust });
  const open = () => Ledger.open({ dir, key: signer, stateDir, trust });
  const floorFile = () => {
    const files = readdirSync(join(stateDir, 'floor')).filter((f) => /^[0-9a-f]+-[0-9a-f]+\.json$/.test(f));
    expect(files).toHaveLength(1);
    return join(stateDir, 'floor', files[0]);
  };
  return { dir, open, floorFile };
}

describe("when a gate without --floor starts from this user's floor", () => {
  it('keeps one after the first pass and starts from it the next time', () => {
    const { open } = setUp();
    open().append(handoff('deploy', 'e1'));
    const first = open().gate({ op: 'deploy' });
    expect(first.ok).toBe(true);
    expect(first.chain.floor_seq).toBeNull();
    expect(first.chain.reason).toContain('this user now keeps a floor here');
    open().append(handoff('other', 'e1'));
    const again = open().gate({ op: 'deploy' });
    expect(again.ok).toBe(true);
    expect(again.chain.floor_seq).toBe(1);
    expect(again.chain.checked).toBe(1);
  });

  it('does not use a floor file it cannot read as one: it audits from the genesis, says so, and replaces it', () => {
    const { open, floorFile } = setUp();
    open().append(handoff('deploy', 'e1'));
    expect(open().gate({ op: 'deploy' }).ok).toBe(true);
    const file = floorFile();
    for (const bad of ['{"v":1,"genesis":', '', 'not json\r\n', '{"v":1}\n']) {
      writeFileSync(file, bad);
      const g = open().gate({ op: 'deploy' });
      expect(g.ok, JSON.stringify(bad)).toBe(true);
      expect(g.chain.floor_seq).toBeNull();
      expect(g.chain.warnings.join('\n')).toMatch(/^this user's floor .* was not used \(.+\): audited from the genesis; a pass replaces it$/m);
      expect(JSON.parse(readFileSync(file, 'utf8')).seq).toBe(1);
    }
  });

  it('holds when the ledger was rolled back below it', () => {
    const { dir, open } = setUp();
    open().append(handoff('deploy', 'e1'));
    for (const f of ['records.jsonl', 'HEAD']) copyFileSync(join(dir, f), join(root, `${f}.before`));
    open().append(handoff('deploy', 'e2'));
    expect(open().gate({ op: 'deploy' }).ok).toBe(true); // the floor is at seq 2 now
    for (const f of ['records.jsonl', 'HEAD']) copyFileSync(join(root, `${f}.before`), join(dir, f));
    rmSync(join(dir, 'index'), { recursive: true, force: true });
    const g = open().gate({ op: 'deploy' });
    expect(g.ok).toBe(false);
    expect(g.chain.ok).toBe(false);
    expect(g.chain.reason).toMatch(/rolled back/);
  });
});
