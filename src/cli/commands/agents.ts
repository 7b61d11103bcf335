// The agents verbs (SPEC 12, issue 16): `mcp` (the MCP server on stdio), `hook` (Claude Code and
// Codex hooks) and `setup` (install both into a project). Declarations only (see ../verbs.ts):
// the implementation (agents-run.ts and src/agents/) loads when one of these runs, and the MCP
// SDK and zod only in `ledger mcp`, once its tools are listed.
import { EXIT } from '../../errors.js';
import { bool, one } from '../flags.js';
import { verb } from '../verbs.js';
import { WRITER } from './common.js';

const impl = () => import('./agents-run.js');

export const HOOK = () => ({
  agent: one('<name>', 'Who the session writes as (default: $LEDGER_AGENT)'),
  key: one('<file>', 'Secret key file for the session-end note (default: $LEDGER_KEY, else keys/harness.key)'),
});
export const SETUP = () => ({
  agent: one('<name>', 'The agent name the server and hooks write as (default: claude or codex)'),
  check: bool('Write nothing; exit 31 when a file is missing or not as setup would write it'),
  remove: bool('Take out only what setup wrote, keeping the rest of each file'),
});

export const AGENTS_VERBS = [
  verb('setup <agent>', 'Install the MCP server, hooks and instructions for claude (.mcp.json, .claude/settings.json, CLAUDE.md) or codex (.codex/config.toml, .codex/hooks.json, AGENTS.md)', {
    ok: 'written (or removed); with --check: every file is as setup would write it',
    setupDiffers: '--check: a file is missing or stale (run setup again)',
  }, {
    plane: 'porcelain',
    flags: SETUP,
    examples: ['ledger setup claude', 'ledger setup codex --agent codex-ci --check', 'ledger setup claude --remove'],
    run: async (io, [agentKind], f) => (await impl()).runSetup(io, agentKind ?? '', f),
  }),

  verb('mcp', 'Serve the ledger to an agent as an MCP server on stdio (tools: status, resume, start, checkpoint, finish, release, note, gate, log)', {
    ok: 'the client closed stdin; every call it made was answered',
  }, {
    plane: 'plumbing',
    flags: WRITER,
    examples: ['ledger mcp --agent claude          # what .mcp.json runs (ledger setup claude writes it)', 'LEDGER_AGENT=codex ledger mcp'],
    run: async (io, _args, f) => (await impl()).runMcp(io, f),
  }),

  // Policy: both words optional and unknown or repeated flags let through, so no argv at all can
  // make a hook exit non-zero (for Claude Code an exit 2 from a Stop hook would block the stop):
  // it is silent on anything it does not know.
  verb('hook [agent] [event]', 'Answer an agent\'s hook (agent: claude or codex; event: session-start, stop, session-end) from its JSON on stdin; never breaks a session', {
    ok: 'always: outside a ledger, on bad input or an internal error it prints nothing',
  }, {
    plane: 'plumbing',
    flags: HOOK,
    lenient: { onBadFlags: () => EXIT.ok },
    examples: ['echo \'{"hook_event_name":"SessionStart","source":"startup"}\' | ledger hook claude session-start', 'ledger hook codex stop --agent codex < payload.json'],
    run: async (io, [agentKind, event], f) => (await impl()).runHook(io, agentKind ?? '', event ?? '', f),
  }),
];
