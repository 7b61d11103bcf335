import fc from 'fast-check';

// Fixed seed in CI and `npm test`; `npm run soak` (SOAK=1) explores with a fresh seed and many
// more runs. A failing soak prints its seed, so it can be replayed with FC_SEED=<n> (and SOAK=1).
// The soak also draws larger values: fast-check's default size ('small') makes an array or a
// string of about ten elements whatever its maxLength, so a bound of 40 lines was never reached
// (test/handoff/runner-output.test.ts); 'medium' goes to about a hundred.
const soak = process.env.SOAK === '1';
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : soak ? Date.now() : 20261129;
fc.configureGlobal({ seed, ...(soak ? { baseSize: 'medium' as const } : {}) });

// The per-user state directory (writer marks, the verified-chain memo: src/store/state-dir.ts)
// of every test is a scratch one, never the real ~/.local/state: each test file gets its own.
// The CLI helpers (helpers/cli.ts) pass it on to the environments they build. This file runs
// before each test file, and a worker process runs many (test/vitest.config.ts: no isolation), so
// "unset" is judged once, by the environment the worker started with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
const worker = globalThis as { ledgerStateDirGiven?: boolean };
worker.ledgerStateDirGiven ??= Boolean(process.env.LEDGER_STATE_DIR);
if (!worker.ledgerStateDirGiven) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-state-'));
  process.env.LEDGER_STATE_DIR = dir;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
}

// No test may pass or fail on timing: a joined read fetches within LEDGER_FETCH_BUDGET (2 s by
// default), which a loaded CI machine can miss, and the answer then says "NOT CURRENT". Every
// run of the CLI a test makes inherits this generous budget (test/helpers/cli.ts) unless the test
// names its own; the budget itself is tested against a remote that never answers.
process.env.LEDGER_FETCH_BUDGET ??= '10m';
