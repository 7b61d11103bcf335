// `ledger setup claude`: Claude Code's three files (formats and sources in ../README.md):
//   .mcp.json              {"mcpServers": {"handoff-ledger": {"command", "args", "env": {"LEDGER_AGENT"}}}}
//   .claude/settings.json  "env": {"LEDGER_AGENT"} and "hooks": SessionStart (matcher
//                          startup|resume|clear|compact), Stop, SessionEnd, each a matcher group
//                          {"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}
//   CLAUDE.md              the marked block (./block.ts)
// Each merged with what the user has (./common.ts).
import { join } from 'node:path';
import { blockMarkers, instructionsBlock } from './block.js';
import {
  HOOK_TIMEOUT_S, SERVER_NAME, dropEmpty, editHookGroup, editJson, objectAt, readText, shellCommand, withBlock, type FileChange, type LedgerCommand, type MatcherGroup,
} from './common.js';

export const CLAUDE_FILES = ['.mcp.json', '.claude/settings.json', 'CLAUDE.md'] as const;

/** The hooks setup installs: event, its matcher (null: every occurrence), the hook's event word. */
const HOOKS: readonly [string, string | null, string][] = [
  ['SessionStart', 'startup|resume|clear|compact', 'session-start'],
  ['Stop', null, 'stop'],
  ['SessionEnd', null, 'session-end'],
];

/** Policy: a handler is setup's when its command ends in `hook claude EVENT` (whatever runs ledger). */
export const isClaudeHookCommand = (c: unknown) => typeof c === 'string' && /(^|\s)hook claude (session-start|stop|session-end)$/.test(c);

export interface SetupRequest { root: string; agent: string; command: LedgerCommand; remove: boolean }

export function planClaude(req: SetupRequest): FileChange[] {
  const { root, agent, command, remove } = req;
  const mcpPath = join(root, '.mcp.json');
  const settingsPath = join(root, '.claude', 'settings.json');
  const mdPath = join(root, 'CLAUDE.md');
  const plan: FileChange[] = [];

  const mcpBefore = readText(mcpPath);
  plan.push({
    path: mcpPath,
    before: mcpBefore,
    after: editJson(mcpPath, mcpBefore, (obj) => {
      const servers = objectAt(mcpPath, obj, 'mcpServers');
      if (remove) delete servers[SERVER_NAME];
      else servers[SERVER_NAME] = { command: command.command, args: [...command.args, 'mcp'], env: { LEDGER_AGENT: agent } };
      dropEmpty(obj, 'mcpServers');
    }, remove),
  });

  const settingsBefore = readText(settingsPath);
  plan.push({
    path: settingsPath,
    before: settingsBefore,
    after: editJson(settingsPath, settingsBefore, (obj) => {
      const env = objectAt(settingsPath, obj, 'env');
      // Policy: --remove takes LEDGER_AGENT out only when it names the agent setup wrote.
      if (remove) {
        if (env.LEDGER_AGENT === agent) delete env.LEDGER_AGENT;
      } else env.LEDGER_AGENT = agent;
      dropEmpty(obj, 'env');
      const hooks = objectAt(settingsPath, obj, 'hooks');
      for (const [event, matcher, word] of HOOKS) {
        const group: MatcherGroup = {
          ...(matcher ? { matcher } : {}),
          hooks: [{ type: 'command', command: shellCommand(command, ['hook', 'claude', word]), timeout: HOOK_TIMEOUT_S }],
        };
        editHookGroup(settingsPath, hooks, event, remove ? null : group, isClaudeHookCommand);
      }
      dropEmpty(obj, 'hooks');
    }, remove),
  });

  const mdBefore = readText(mdPath);
  plan.push({ path: mdPath, before: mdBefore, after: withBlock(mdBefore, blockMarkers('claude'), remove ? null : instructionsBlock('claude', agent)) });
  return plan;
}
