// `ledger setup claude`: Claude Code's three files (formats and sources in ../README.md):
//   .mcp.json              {"mcpServers": {"handoff-ledger": {"command", "args", "env": {"LEDGER_AGENT"}}}}
//   .claude/settings.json  "env": {"LEDGER_AGENT"} and "hooks": SessionStart (matcher
//                          startup|resume|clear|compact), Stop, SessionEnd, each a matcher group
//                          {"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}
//   CLAUDE.md              the marked block (./block.ts)
// Each merged with what the user has (./common.ts).
import { join } from 'node:path';
import { LedgerError } from '../../errors.js';
import { blockMarkers, instructionsBlock, legacyBlockLines } from './block.js';
import {
  HOOK_TIMEOUT_S, SERVER_NAME, dropEmpty, editHookGroup, editJson, objectAt, readText, shellCommand, withBlock, type FileChange, type LedgerCommand, type MatcherGroup,
} from './common.js';

export const CLAUDE_FILES = ['.mcp.json', '.claude/settings.json', 'CLAUDE.md'] as const;

/** The hooks setup installs: event, its matcher (null: every occurrence), the hook's event word. */
const HOOKS: readonly [string, string | null, string][] = [
  ['SessionStart', 'startup|resume|clear|compact', 'session-start'],
  ['Stop', null, 'stop'],
  ['SessionEnd', null, 'session-end'],
  // Issue 24.4: a turn ended by an API error (a usage or rate limit) leaves a signed note.
  ['StopFailure', null, 'stop-failure'],
];

/** Policy: a handler is setup's when its command ends in `hook claude EVENT` (whatever runs ledger). */
export const isClaudeHookCommand = (c: unknown) => typeof c === 'string' && /(^|\s)hook claude (session-start|stop|session-end|stop-failure)$/.test(c);

/**
 * Claude Code's permission rule for the server's tools (`mcp__SERVER`, every tool of it): without
 * it `claude -p` refuses each ledger tool, and the stop hook then asks for a checkpoint the
 * session cannot make. Policy: this rule only; approving the project's server (the one manual
 * step) stays the person's.
 */
export const PERMISSION_RULE = `mcp__${SERVER_NAME}`;

export interface SetupRequest { root: string; agent: string; command: LedgerCommand; remove: boolean }

export function planClaude(req: SetupRequest): FileChange[] {
  const { root, agent, command, remove } = req;
  const mcpPath = join(root, '.mcp.json');
  const settingsPath = join(root, '.claude', 'settings.json');
  const mdPath = join(root, 'CLAUDE.md');
  const plan: FileChange[] = [];

  const mcpBefore = readText(mcpPath, root);
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

  const settingsBefore = readText(settingsPath, root);
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
      const permissions = objectAt(settingsPath, obj, 'permissions');
      const allow = permissions.allow;
      if (allow !== undefined && !Array.isArray(allow)) throw new LedgerError('INPUT_JSON', `${settingsPath}: permissions.allow is not an array; setup changed nothing`, { path: settingsPath });
      const rules = (allow ?? []) as unknown[];
      if (remove) permissions.allow = rules.filter((r) => r !== PERMISSION_RULE);
      else if (!rules.includes(PERMISSION_RULE)) permissions.allow = [...rules, PERMISSION_RULE];
      dropEmpty(permissions, 'allow');
      dropEmpty(obj, 'permissions');
    }, remove),
  });

  const mdBefore = readText(mdPath, root);
  const m = blockMarkers('claude');
  // Policy: the block imports AGENTS.md unless CLAUDE.md already does outside it (block.ts).
  const outside = withBlock(mdBefore, m, null, [...legacyBlockLines(agent), ...instructionsBlock('claude', agent, true).split('\n')], mdPath) ?? '';
  const importAgents = !/^@AGENTS\.md\s*$/m.test(outside);
  plan.push({ path: mdPath, before: mdBefore, after: withBlock(mdBefore, m, remove ? null : instructionsBlock('claude', agent, importAgents), [...legacyBlockLines(agent), ...instructionsBlock('claude', agent, true).split('\n')], mdPath) });
  return plan;
}
