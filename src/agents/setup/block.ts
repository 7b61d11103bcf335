// The short marked block setup writes into CLAUDE.md and AGENTS.md (SPEC 12, issue 16): what an
// agent reads at every session about working with the ledger. One text for both agents.
import type { Markers } from './common.js';

export function blockMarkers(agentKind: 'claude' | 'codex'): Markers {
  return {
    begin: `<!-- handoff-ledger:begin (written by \`ledger setup ${agentKind}\`; \`ledger setup ${agentKind} --remove\` takes it out) -->`,
    end: '<!-- handoff-ledger:end -->',
  };
}

export function instructionsBlock(agentKind: 'claude' | 'codex', agent: string): string {
  const m = blockMarkers(agentKind);
  return [
    m.begin,
    '## Handoff ledger',
    '',
    `This project hands work between agents through a signed ledger, with the \`handoff-ledger\` MCP tools (you write as \`${agent}\`).`,
    '',
    '- Read `status` (or `resume`) first: what is open, and what is yours.',
    '- `start` a work item (a slug and a summary) before substantive work.',
    '- `checkpoint` after each verified milestone and at least every 30 minutes, with `tests_cmd` so the real test output is recorded, and exactly one `next` action.',
    '- `finish` (with its outcome and invariants) or `release` the item before you stop.',
    "- Never edit HANDOFF.md or HANDOFF.yml by hand, and never pass another agent's name.",
    m.end,
  ].join('\n') + '\n';
}
