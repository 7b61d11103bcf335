// The agents verbs (SPEC 12, issue 16): `mcp` (the MCP server on stdio), `hook` (Claude Code and
// Codex hooks) and `setup` (install both into a project). Declarations only (see ../verbs.ts):
// the implementation (agents-run.ts and src/agents/) loads when one of these runs, and the MCP
// SDK and zod only in `ledger mcp`.
import { verb } from '../verbs.js';
import { STRING, withTrust, withWriter, type Opts } from './common.js';

const impl = () => import('./agents-run.js');

export const AGENTS_VERBS = [
  verb('mcp', 'Serve the ledger to an agent as an MCP server on stdio (tools: status, resume, start, checkpoint, finish, release, note, gate, log)', {
    ok: 'the client closed stdin; every call it made was answered',
  }, (c, io) =>
    withTrust(withWriter(c))
      .example('ledger mcp --agent claude          # what .mcp.json runs (ledger setup claude writes it)')
      .example('LEDGER_AGENT=codex ledger mcp')
      .action(async (opts: Opts) => (await impl()).runMcp(io, opts))),

  // Policy: both words optional and unknown flags allowed, so no argv at all can make a hook exit
  // non-zero (for Claude Code an exit 2 from a Stop hook would block the stop): the action is
  // silent on anything it does not know.
  verb('hook [agent] [event]', 'Answer an agent\'s hook (agent: claude or codex; event: session-start, stop, session-end) from its JSON on stdin; never breaks a session', {
    ok: 'always: outside a ledger, on bad input or an internal error it prints nothing',
  }, (c, io) =>
    c
      .allowUnknownOptions()
      .option('--agent <name>', 'Who the session writes as (default: $LEDGER_AGENT)', STRING)
      .option('--key <file>', 'Secret key file for the session-end note (default: $LEDGER_KEY, else keys/harness.key)', STRING)
      .example('echo \'{"hook_event_name":"SessionStart","source":"startup"}\' | ledger hook claude session-start')
      .example('ledger hook codex stop --agent codex < payload.json')
      .action(async (agentKind: string | undefined, event: string | undefined, opts: Opts) => (await impl()).runHook(io, agentKind ?? '', event ?? '', opts))),

  verb('setup <agent>', 'Install the MCP server, hooks and instructions for claude (.mcp.json, .claude/settings.json, CLAUDE.md) or codex (.codex/config.toml, .codex/hooks.json, AGENTS.md)', {
    ok: 'written (or removed); with --check: every file is as setup would write it',
    setupDiffers: '--check: a file is missing or stale (run setup again)',
  }, (c, io) =>
    c
      .option('--agent <name>', 'The agent name the server and hooks write as (default: claude or codex)', STRING)
      .option('--check', 'Write nothing; exit 31 when a file is missing or not as setup would write it')
      .option('--remove', 'Take out only what setup wrote, keeping the rest of each file')
      .example('ledger setup claude')
      .example('ledger setup codex --agent codex-ci --check')
      .example('ledger setup claude --remove')
      .action(async (agentKind: string, opts: Opts) => (await impl()).runSetup(io, agentKind, opts))),
];
