// Shared set-up for the causal tests: a scratch project with an initialised ledger, a runner
// bound to it, and small readers for the results.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { initProject, runLedger, snapshot, type Run } from '../helpers/cli.js';
import type { GateRun } from '../../src/causal/gate-run.js';

export interface Project {
  dir: string;
  ledger: string;
  cleanup: () => void;
  run: (args: string[], opts?: { env?: Record<string, string>; stdin?: string }) => Promise<Run>;
  /** Writes a file under the project (creating folders). */
  write: (rel: string, text: string) => void;
  /** `ledger gate OP ...flags --json`, parsed, with the exit code. */
  gate: (op: string, ...flags: string[]) => Promise<{ code: number; r: GateRun; stderr: string }>;
  /** Appends and returns the new record's id (throws unless exit 0). */
  id: (args: string[], env?: Record<string, string>) => Promise<string>;
  snap: () => ReturnType<typeof snapshot>;
  /** Every record line, parsed. */
  records: () => Record<string, unknown>[];
}

export async function project(agent = 'alice'): Promise<Project> {
  const p = await initProject('causal');
  const run: Project['run'] = (args, opts = {}) => runLedger(args, { cwd: p.dir, env: { LEDGER_AGENT: agent, ...opts.env }, stdin: opts.stdin });
  return {
    ...p,
    run,
    write: (rel, text) => {
      mkdirSync(dirname(join(p.dir, rel)), { recursive: true });
      writeFileSync(join(p.dir, rel), text);
    },
    gate: async (op, ...flags) => {
      const res = await run(['gate', op, ...flags, '--json']);
      if (res.code !== 0 && res.code !== 20) throw new Error(`gate exited ${res.code}: ${res.stderr}`);
      return { code: res.code, r: JSON.parse(res.stdout) as GateRun, stderr: res.stderr };
    },
    id: async (args, env) => {
      const res = await run([...args, '--json'], { env });
      if (res.code !== 0) throw new Error(`${args.join(' ')} exited ${res.code}: ${res.stderr}`);
      return (JSON.parse(res.stdout) as { id: string }).id;
    },
    snap: () => snapshot(p.ledger),
    records: () => readFileSync(join(p.ledger, 'records.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)),
  };
}

export const handoff = (op: string, exec: string, outcome: string, ...more: string[]) => ['append', 'handoff', '--op', op, '--exec', exec, '--outcome', outcome, ...more];
