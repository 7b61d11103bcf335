// `ledger setup codex`: Codex's three files (formats and sources in ../README.md):
//   .codex/config.toml  the table mcp_servers.handoff-ledger (command, args, env.LEDGER_AGENT) as
//                       a marked block of dotted keys at the top of the file: the user's TOML
//                       (comments, order, spacing) is never re-serialised; smol-toml checks the
//                       file before and after and writes the block's values (every string
//                       quoted as TOML wants). Policy (issue 23.9): dotted keys at the top open
//                       no table, so whatever the user adds later at the root stays at the root
//                       (a `[mcp_servers.handoff-ledger]` header appended at the end would take
//                       every root key added below it into setup's table)
//   .codex/hooks.json   {"hooks": {"SessionStart": [{"matcher": "startup|resume|clear", "hooks":
//                       [{"type": "command", "command", "timeout"}]}], "Stop": [...]}}
//   AGENTS.md           the marked block (./block.ts)
// Codex hooks get no environment from a settings file, so their command names the agent
// (`--agent NAME`); the MCP server gets LEDGER_AGENT in its env table.
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { parserReason } from '../../text/sanitize.js';
import { LedgerError } from '../../errors.js';
import { blockMarkers, instructionsBlock, legacyBlockLines } from './block.js';
import {
  HOOK_TIMEOUT_S, SERVER_NAME, dropEmpty, editHookGroup, editJson, isObject, objectAt, readText, shellCommand, withBlock, type FileChange, type LedgerCommand, type MatcherGroup,
} from './common.js';
import type { SetupRequest } from './claude.js';

export const CODEX_FILES = ['.codex/config.toml', '.codex/hooks.json', 'AGENTS.md'] as const;

const TOML_MARKERS = {
  begin: '# handoff-ledger:begin (written by `ledger setup codex`; `ledger setup codex --remove` takes it out)',
  end: '# handoff-ledger:end',
};

const HOOKS: readonly [string, string | null, string][] = [
  ['SessionStart', 'startup|resume|clear', 'session-start'],
  ['Stop', null, 'stop'],
];

/** Policy: a handler is setup's when its command ends in `hook codex EVENT` (whatever runs ledger). */
export const isCodexHookCommand = (c: unknown) => typeof c === 'string' && /(^|\s)hook codex (session-start|stop)( --agent \S+)?$/.test(c);

function parseToml(path: string, text: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new LedgerError('INPUT_REFUSED', `${path} is not valid TOML (${parserReason(e)}); setup changed nothing`, { path }, 'fix the file and run setup again');
  }
}

function serverOf(doc: Record<string, unknown>): unknown {
  const servers = doc.mcp_servers;
  return isObject(servers) ? servers[SERVER_NAME] : undefined;
}

/** One TOML value as smol-toml writes it. */
const tomlValue = (v: unknown): string => stringify({ v }).trim().replace(/^v = /, '');

/**
 * The lines a block setup wrote may hold (this version's dotted keys, or an earlier version's
 * `[mcp_servers.handoff-ledger]` table): anything else inside the markers is the user's.
 */
const OUR_TOML_LINE = /^(?:\[mcp_servers\.handoff-ledger(?:\.env)?\]|(?:mcp_servers\.handoff-ledger\.)?(?:command|args|env\.LEDGER_AGENT|LEDGER_AGENT) = .*)$/;

function tomlAfter(path: string, before: string | null, command: LedgerCommand, agent: string, remove: boolean): string | null {
  const entry = { command: command.command, args: [...command.args, 'mcp'], env: { LEDGER_AGENT: agent } };
  const key = `mcp_servers.${SERVER_NAME}`;
  const block = [TOML_MARKERS.begin, `${key}.command = ${tomlValue(entry.command)}`, `${key}.args = ${tomlValue(entry.args)}`, `${key}.env.LEDGER_AGENT = ${tomlValue(agent)}`, TOML_MARKERS.end].join('\n') + '\n';
  if (before !== null) parseToml(path, before);
  const known = (before ?? '').split('\n').filter((l) => OUR_TOML_LINE.test(l));
  let outside = withBlock(before, TOML_MARKERS, null, known, path);
  // A block setup put at the top took its separating blank line along.
  if (before !== null && before.startsWith(TOML_MARKERS.begin) && outside?.startsWith('\n')) outside = outside.slice(1);
  if (outside === '') outside = null;
  if (serverOf(parseToml(path, outside ?? '')) !== undefined) {
    throw new LedgerError('INPUT_REFUSED', `${path} defines [mcp_servers.${SERVER_NAME}] outside the block setup writes; setup changed nothing`, { path }, 'remove that table (setup writes its own) and run setup again');
  }
  if (remove) return outside;
  const after = outside === null ? block : `${block}\n${outside}`;
  let doc: Record<string, unknown>;
  try {
    doc = parse(after) as Record<string, unknown>;
  } catch {
    throw new LedgerError('INPUT_REFUSED', `${path} defines [mcp_servers] as a table header of its own, so setup's keys cannot be added at the top of the file; setup changed nothing`, { path }, 'write each server as [mcp_servers.NAME] (not one [mcp_servers] table), or add the handoff-ledger server yourself, and run setup again');
  }
  // The user's file and the block must read as one document, with our table as written.
  if (JSON.stringify(serverOf(doc)) !== JSON.stringify(entry)) {
    throw new LedgerError('INPUT_REFUSED', `${path}: the [mcp_servers.${SERVER_NAME}] table would not read back as written; setup changed nothing`, { path });
  }
  return after;
}

export function planCodex(req: SetupRequest): FileChange[] {
  const { root, agent, command, remove } = req;
  const tomlPath = join(root, '.codex', 'config.toml');
  const hooksPath = join(root, '.codex', 'hooks.json');
  const mdPath = join(root, 'AGENTS.md');
  const tomlBefore = readText(tomlPath, root);
  const hooksBefore = readText(hooksPath, root);
  const mdBefore = readText(mdPath, root);
  return [
    { path: tomlPath, before: tomlBefore, after: tomlAfter(tomlPath, tomlBefore, command, agent, remove) },
    {
      path: hooksPath,
      before: hooksBefore,
      after: editJson(hooksPath, hooksBefore, (obj) => {
        const hooks = objectAt(hooksPath, obj, 'hooks');
        for (const [event, matcher, word] of HOOKS) {
          const group: MatcherGroup = {
            ...(matcher ? { matcher } : {}),
            hooks: [{ type: 'command', command: shellCommand(command, ['hook', 'codex', word, '--agent', agent]), timeout: HOOK_TIMEOUT_S }],
          };
          editHookGroup(hooksPath, hooks, event, remove ? null : group, isCodexHookCommand);
        }
        dropEmpty(obj, 'hooks');
      }, remove),
    },
    { path: mdPath, before: mdBefore, after: withBlock(mdBefore, blockMarkers('codex'), remove ? null : instructionsBlock('codex', agent), [...legacyBlockLines(agent), ...instructionsBlock('codex', agent).split('\n')], mdPath) },
  ];
}
