// SPEC 10: a successful `--json` output carries "ok": true (issue 14.9: append, show, log, head,
// pending, resume and revoke did not). Every declared verb must have a success case here: a verb
// added without one fails the first test, so none can be forgotten.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../../src/cli/cli.js';
import { readSecretKey } from '../../src/keys/key-file.js';
import { createSigner } from '../../src/sign.js';
import { initProject, runLedger, spawnLedgerSync } from '../helpers/cli.js';

let project: Awaited<ReturnType<typeof initProject>>;
const env = { LEDGER_AGENT: 'tester' };
const handoff = (op: string, exec: string) => ['append', 'handoff', '--op', op, '--exec', exec, '--outcome', 'success', '--invariant', 'tests=ok'];
let handoffSeq = 0;

beforeAll(async () => {
  project = await initProject();
  writeFileSync(join(project.dir, 'evidence.txt'), 'evidence\n');
  const h = await runLedger([...handoff('op_1', 'e1'), '--json'], { cwd: project.dir, env });
  handoffSeq = JSON.parse(h.stdout).seq;
  for (const args of [
    ['append', 'intent', '--op', 'op_2', '--exec', 'e1', '--action', 'deploy'],
    ['start', 'item', '--summary', 'work'],
  ]) expect((await runLedger(args, { cwd: project.dir, env })).code).toBe(0);
});
afterAll(() => project.cleanup());

/**
 * One success per verb, in the order they run (later ones see what earlier ones wrote). Several
 * rows per verb where its outputs differ. release, note and status are the SPEC 10 verbs other
 * work adds: their rows run once they are declared.
 */
const CASES: { verb: string; args: () => string[]; stdin?: string; env?: Record<string, string> }[] = [
  { verb: 'keygen', args: () => ['keygen', '--out', join(project.dir, 'keys/other.key'), '--name', 'other'] },
  // SPEC 7: the init key is an admin; it authorizes the key just made, lists, and retires it.
  { verb: 'trust', args: () => ['trust', 'add', createSigner(readSecretKey(join(project.dir, 'keys/other.key')).seed).publicKey, '--name', 'other', '--agents', 'ci', '--reason', 'a CI runner'] },
  { verb: 'trust', args: () => ['trust', 'list'] },
  { verb: 'trust', args: () => ['trust', 'revoke', 'other', '--reason', 'retired'] },
  { verb: 'witness', args: () => ['witness', 'init', '--state', join(project.dir, 'witness'), '--name', 'witness.test/w1'] },
  { verb: 'head', args: () => ['head', '--vkey'] },
  { verb: 'head', args: () => ['head', '--checkpoint'] },
  { verb: 'prove', args: () => ['prove', '1'] },
  { verb: 'verify-proof', args: () => proofToVerify() },
  { verb: 'append', args: () => handoff('op_3', 'e1') },
  { verb: 'append', args: () => handoff('op_3', 'e1') }, // an identical retry: nothing appended
  { verb: 'append', args: () => ['append', 'intent', '--op', 'op_4', '--exec', 'e1', '--action', 'deploy'] },
  { verb: 'append', args: () => ['append', '--batch'], stdin: JSON.stringify({ kind: 'handoff', logical_operation_id: 'op_5', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) + '\n' },
  { verb: 'show', args: () => ['show', String(handoffSeq)] },
  { verb: 'show', args: () => ['show', 'HEAD'] },
  { verb: 'log', args: () => ['log', '--limit', '3'] },
  { verb: 'head', args: () => ['head'] },
  { verb: 'checkpoint', args: () => ['checkpoint', 'item', '--done', 'a', '--state', 'b', '--next', 'c'] },
  { verb: 'note', args: () => ['note', 'item', '--text', 'a reviewer\'s note'] },
  { verb: 'resume', args: () => ['resume', 'item'] },
  { verb: 'status', args: () => ['status'] },
  { verb: 'release', args: () => ['release', 'item', '--note', 'back to the pool'] },
  { verb: 'start', args: () => ['start', 'item2', '--summary', 'more work'] },
  { verb: 'finish', args: () => ['finish', 'item2', '--done', 'a', '--state', 'b', '--next', 'none', '--invariant', 'tests=ok'] },
  { verb: 'render', args: () => ['render'] },
  { verb: 'render', args: () => ['render', '--check'] },
  { verb: 'audit', args: () => ['audit'] },
  { verb: 'gate', args: () => ['gate', 'op_1', '--require-invariant', 'tests'] },
  { verb: 'gate', args: () => ['gate', 'op_1', '--consume-as', 'deployer'] },
  { verb: 'consume-failed', args: () => ['consume-failed', 'op_1', '--consumer', 'deployer', '--reason', 'the deploy exited 1'] },
  { verb: 'pending', args: () => ['pending'] },
  { verb: 'revoke', args: () => ['revoke', String(handoffSeq), '--reason', 'wrong branch'] },
  { verb: 'recover', args: () => ['recover', '--dry-run'] },
  { verb: 'doctor', args: () => ['doctor'] },
  // A ledger joined to a bare remote (SPEC 11), in a folder and state directory of its own.
  { verb: 'sync', get env() { return { LEDGER_STATE_DIR: join(project.dir, 'remote-state') }; }, args: () => joinedForSync() },
  { verb: 'setup', args: () => ['setup', 'claude'] },
  { verb: 'setup', args: () => ['setup', 'claude', '--check'] },
  // Last: it needs a directory of its own.
  { verb: 'init', args: () => ['init', '--dir', join(project.dir, 'second', '.ledger'), '--key', join(project.dir, 'second', 'k.key'), '--trust', join(project.dir, 'second', 'trust.json')] },
];

/** A proof of record 1 and a policy of no witnesses, in the project; the args of verifying it. */
function proofToVerify(): string[] {
  const r = spawnLedgerSync(['prove', '1'], { cwd: project.dir, env });
  expect(r.code, r.stderr).toBe(0);
  writeFileSync(join(project.dir, 'r.proof'), r.stdout);
  writeFileSync(join(project.dir, 'none.policy'), 'quorum none\n');
  return ['verify-proof', join(project.dir, 'r.proof'), '--trust', join(project.dir, 'keys/trust.json'), '--policy', join(project.dir, 'none.policy')];
}

/** A third ledger, joined to a bare remote by the real binary; the args of a `sync` of it. */
function joinedForSync(): string[] {
  const dir = join(project.dir, 'joined');
  mkdirSync(dir, { recursive: true });
  const bare = join(project.dir, 'remote.git');
  expect(spawnSync('git', ['init', '--quiet', '--bare', bare]).status).toBe(0);
  const flags = ['--dir', join(dir, '.ledger'), '--key', join(dir, 'k.key'), '--trust', join(dir, 'trust.json')];
  const r = spawnLedgerSync(['init', '--remote', bare, ...flags], { cwd: project.dir, env: { ...env, LEDGER_STATE_DIR: join(project.dir, 'remote-state') } });
  expect(r.code, r.stderr).toBe(0);
  return ['sync', ...flags];
}
/** Verbs whose stdout is another program's protocol, where --json does not apply. */
const PROTOCOL_VERBS: Record<string, string> = {
  mcp: 'stdout is the MCP protocol (JSON-RPC); test/agents/mcp-server.test.ts drives it with the SDK client',
  hook: "stdout is the agent's own hook format; test/agents/hooks.test.ts checks each answer's exact shape",
};

describe('when every verb succeeds with --json', () => {
  it('has a success case for every declared verb', () => {
    const covered = new Set([...CASES.map((c) => c.verb), ...Object.keys(PROTOCOL_VERBS)]);
    for (const v of VERBS) expect(covered.has(v.name), `verb "${v.name}" has no --json success case in test/cli/json-ok.test.ts`).toBe(true);
  });

  const declared = new Set(VERBS.map((v) => v.name));
  CASES.forEach((c, i) => {
    if (!declared.has(c.verb)) return;
    it(`\`ledger ${c.verb}\` (case ${i + 1}) prints one JSON object with "ok": true and exits 0`, async () => {
      const r = await runLedger([...c.args(), '--json'], { cwd: project.dir, env: { ...env, ...(c.env ?? {}) }, stdin: c.stdin });
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const out = JSON.parse(lines[0]) as { ok?: unknown };
      expect(out.ok, r.stdout).toBe(true);
    });
  });
});
