// `ledger hook codex EVENT`: Codex's hook formats (codex-rs/hooks, sources in ../README.md). Its
// schemas are Claude Code's shapes, strict (unknown output fields are refused):
//   session-start  SessionStart (source startup, resume or clear): {"hookSpecificOutput":
//                  {"hookEventName": "SessionStart", "additionalContext": TEXT}}
//   stop           Stop: {"decision": "block", "reason": TEXT}, or nothing; never when
//                  "stop_hook_active" is true. Codex continues the turn with the reason as a prompt.
// Policy: Codex's PostCompact output has no context field, and the hook schemas read have no
// SessionEnd, so neither is answered (an unknown event is silent); after a Codex compaction
// the AGENTS.md block's "call status or resume first" is what brings the work back.
import { forEvent, SILENT, type HookAnswer, type HookFacts, type Payload } from './events.js';
import { sessionContext, stopReason } from './rules.js';

export const CODEX_EVENTS = { 'session-start': 'SessionStart', stop: 'Stop' } as const;
export type CodexEvent = keyof typeof CODEX_EVENTS;

export function isCodexEvent(e: string): e is CodexEvent {
  return Object.hasOwn(CODEX_EVENTS, e);
}

export function codexHook(event: CodexEvent, payload: Payload, facts: HookFacts): HookAnswer {
  if (!forEvent(payload, CODEX_EVENTS[event])) return SILENT;
  if (event === 'session-start') {
    return { stdout: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: sessionContext(facts.status(), facts.agent, facts.currency) } }, notes: [] };
  }
  // SPEC 12: never block over ownership the hook could not refresh.
  if (payload.stop_hook_active === true || facts.agent === null || facts.currency?.current === false) return SILENT;
  const open = facts.unrecorded();
  return open.length ? { stdout: { decision: 'block', reason: stopReason(open, facts.now) }, notes: [] } : SILENT;
}
