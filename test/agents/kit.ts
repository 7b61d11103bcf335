// Shared by the agents suites: a project (a real git repository with a ledger), the built
// `ledger mcp` driven by the SDK's own Client over a real stdio pipe, and the bytes that a
// refused call must leave as they were (records.jsonl, HEAD and both views).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, runLedger, scratch, snapshot, withSuiteEnv, workerTemplate } from '../helpers/cli.js';

/** A home and state folder outside every project, so a writer's marks never show in a work tree. */
export const HOME = mkdtempSync(join(tmpdir(), 'ledger-agents-home-'));
export const BASE_ENV: Record<string, string> = withSuiteEnv({ PATH: process.env.PATH ?? '', HOME, LEDGER_STATE_DIR: join(HOME, 'state') });

export interface GitProject { dir: string; ledger: string; cleanup: () => void }

/** A scratch git repository (one commit) with an initialised ledger. */
export async function gitProject(): Promise<GitProject> {
  const s = scratch();
  await fill(s.dir);
  return { dir: s.dir, ledger: join(s.dir, '.ledger'), cleanup: s.cleanup };
}

/**
 * Speed: the project as gitProject() makes it (`ledger init`, then `git init` and one commit),
 * made once per worker and copied into each test's folder (helpers/cli.ts `workerTemplate`): two
 * git processes and an init become one `cp`. A copy is a ledger new to the servers' state
 * directory (BASE_ENV), as a fresh init's was.
 */
const fill = workerTemplate('ledger-agents-template-', async (dir, state) => {
  const init = await runLedger(['init', '--name', 'agents'], { cwd: dir, env: { LEDGER_STATE_DIR: state } });
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore', env: { ...BASE_ENV, GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'start');
});

/** records.jsonl, HEAD, HANDOFF.md and HANDOFF.yml, as bytes (null: absent). */
export function ledgerBytes(p: { dir: string; ledger: string }) {
  const read = (f: string) => (existsSync(f) ? readFileSync(f).toString('base64') : null);
  return { ...snapshot(p.ledger), md: read(join(p.dir, 'HANDOFF.md')), yml: read(join(p.dir, 'HANDOFF.yml')) };
}

export interface Server { client: Client; stderr: () => string; close: () => Promise<void> }

/** Starts the built `ledger mcp` in `cwd` as `agent` and connects the SDK's Client to it. */
export async function startServer(cwd: string, agent: string | null, extraEnv: Record<string, string> = {}): Promise<Server> {
  const env: Record<string, string> = { ...BASE_ENV, ...extraEnv };
  if (agent !== null) env.LEDGER_AGENT = agent;
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd, env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'handoff-ledger-tests', version: '0.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

export interface CallAnswer { isError: boolean; text: string; structured: Record<string, unknown> | undefined }

export async function call(s: Server, name: string, args: Record<string, unknown>): Promise<CallAnswer> {
  const r = await s.client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text: string }[];
  return { isError: r.isError === true, text: content.map((c) => c.text).join('\n'), structured: r.structuredContent as Record<string, unknown> | undefined };
}

/** The records of the ledger, parsed, in order. */
export function records(ledger: string): Record<string, unknown>[] {
  return readFileSync(join(ledger, 'records.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}
